// The reply of a native Responses upstream (a provider with `responses: native`), relayed to the caller.
// The upstream never saw `metadata` (spec rule 1: stored and echoed, not forwarded), so response
// snapshots get the caller's metadata back, and a stored turn's `store`, `conversation` and
// `previous_response_id` (the upstream was sent the history instead, unstored). A stream is relayed event by event as it comes, each with
// an `id:` line equal to its sequence number (the spec's framing; OpenAI sends none), numbered by us
// from 0 without gaps, and every stream ends with a terminal event: an upstream that stops early, sends
// garbage or is cut ends with `error` then `response.failed`, as the spec's Events rule 3 says.
// A stored response (`store: true`) carries the gateway's own id, not the upstream's: the record is
// ours, keyed on that id, and an upstream's ids need not be unique across upstreams (or at all).
import { usageCounts } from '../../formats/chat/peek-usage';
import { GatewayError, toGatewayError } from '../../http/errors';
import { SseWriter } from '../../http/sse';
import type { RequestMeter } from '../../model-call/request-meter';
import type { RequestContext } from '../../pipeline/context';
import { parseSse } from '../../providers/http/sse-parser';
import { withMembers } from '../../formats/shared/json-members';
import type { UpstreamResponse } from '../../providers/http/transport';
import { UpstreamFault } from '../../providers/http/upstream-errors';
import type { Reply } from '../types';
import type { ResponseEventPayload, ResponseSink } from './response-sink';

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete']);
/** Events whose payload carries the response object (where metadata is echoed). */
const SNAPSHOTS = new Set(['response.created', 'response.in_progress', 'response.queued', ...TERMINAL]);

function meterUsage(meter: RequestMeter, response: Json): void {
  const usage = response['usage'];
  if (!isRecord(usage)) return;
  const counts = usageCounts(usage);
  meter.tokens(counts?.promptTokens ?? 0, counts?.completionTokens ?? 0, counts?.cachedPromptTokens ?? 0);
}

/** Where a relayed reply goes besides the caller: with a sink, stored under `id` (the gateway's). */
export interface RelayTarget {
  /** Fields set on every response snapshot: `metadata`, and a stored turn's `store`, `conversation`, `previous_response_id`. */
  echo: Json;
  stored: { sink: ResponseSink; id: string } | null;
}

/**
 * A non-streamed native reply: checked to be a response object, metadata echoed, stored when asked.
 * Unstored, the upstream's bytes go on with the echoed members spliced in (not parsed and re-serialised).
 */
export async function relayNativeJson(response: UpstreamResponse, meter: RequestMeter, target: RelayTarget): Promise<Reply> {
  const { echo, stored } = target;
  let reply: unknown;
  let bytes: Buffer;
  try {
    ({ value: reply, bytes } = await response.jsonWithBytes());
  } catch (err) {
    meter.fail(err);
    throw err;
  }
  if (!isRecord(reply) || typeof reply['id'] !== 'string') {
    const err = new GatewayError('upstream_error', 'The upstream provider sent a reply that is not a Responses object.', {
      cause: new UpstreamFault('The upstream reply is not a response object.'),
    });
    meter.fail(err);
    throw err;
  }
  meterUsage(meter, reply);
  meter.finish('ok');
  if (!stored) {
    const texts = echoedTexts(echo);
    const echoed = texts && withMembers(bytes, texts);
    if (echoed) return { status: 200, headers: { 'content-length': String(echoed.length) }, raw: { contentType: 'application/json', data: echoed } };
  }
  Object.assign(reply, echo);
  if (stored) {
    reply['id'] = stored.id;
    await stored.sink.begin({ ...reply, status: 'in_progress' });
    await stored.sink.end(reply);
  }
  return { status: 200, body: reply };
}

/** The echoed fields as JSON texts; null when one is undefined (it removes a member: the object path does that). */
function echoedTexts(echo: Json): Map<string, string> | null {
  const texts = new Map<string, string>();
  for (const key in echo) {
    const value = echo[key];
    if (value === undefined) return null;
    texts.set(key, JSON.stringify(value));
  }
  return texts;
}

/** What the relay knows of the response so far, to write a failure snapshot. */
class RelayState {
  snapshot: Json | null = null;
  readonly done: Json[] = [];
  sequence = 0;
}

function failureEvents(state: RelayState, err: GatewayError, echo: Json): ResponseEventPayload[] {
  const error = { message: err.message, type: err.type, code: err.wireCode ?? 'stream_error', param: err.param ?? null };
  // Top-level fields as OpenAI sends them (what SDKs read), nested as the spec and Open Responses say.
  const errorEvent: ResponseEventPayload = { ...error, type: 'error', sequence_number: state.sequence++, error };
  const response: Json = {
    ...(state.snapshot ?? { object: 'response' }),
    status: 'failed',
    error: { code: error.code, message: error.message },
    output: state.done,
    ...echo,
  };
  return [errorEvent, { type: 'response.failed', sequence_number: state.sequence++, response }];
}

/**
 * A streamed native reply. The first upstream event is awaited before the caller's headers go out, so
 * an upstream that fails at once is still a JSON error; so is a stored response the store refuses to
 * create (nothing was sent yet). With a sink (a stored response) the upstream is read to its end even
 * when the caller leaves: the call was sent without the caller's abort signal.
 */
export async function relayNativeStream(ctx: RequestContext, response: UpstreamResponse, meter: RequestMeter, target: RelayTarget): Promise<undefined> {
  const { echo, stored } = target;
  const sink = stored?.sink ?? null;
  const state = new RelayState();
  const events = parseSse(response.body)[Symbol.asyncIterator]();
  let next: IteratorResult<{ data: string }>;
  try {
    next = await events.next();
  } catch (err) {
    meter.fail(err);
    throw err;
  }
  /** Opened with the first event written: until then a failure can still be a JSON error. */
  let sse: SseWriter | null = null;
  const callerThere = (): boolean => sse === null || sse.open;
  let terminal = false;
  let failure: GatewayError | null = null;
  try {
    for (; !next.done; next = await events.next()) {
      const { data } = next.value;
      let event: unknown;
      try {
        event = JSON.parse(data);
      } catch {
        throw new GatewayError('upstream_error', 'The upstream stream sent an event that is not JSON.', {
          cause: new UpstreamFault('non-JSON Responses event'),
        });
      }
      if (!isRecord(event) || typeof event['type'] !== 'string') {
        throw new GatewayError('upstream_error', 'The upstream stream sent an event without a type.', { cause: new UpstreamFault('untyped Responses event') });
      }
      const type = event['type'];
      let out = data;
      if (event['sequence_number'] !== state.sequence) {
        event['sequence_number'] = state.sequence;
        out = '';
      }
      const snapshot = event['response'];
      if (SNAPSHOTS.has(type) && isRecord(snapshot)) {
        Object.assign(snapshot, echo);
        if (stored) snapshot['id'] = stored.id;
        state.snapshot = snapshot;
        out = '';
        if (type === 'response.created' && sink) await sink.begin(snapshot);
        if (TERMINAL.has(type)) meterUsage(meter, snapshot);
      } else if (type === 'response.output_item.done' && isRecord(event['item'])) {
        state.done.push(event['item']);
      }
      // Numbered once nothing can refuse it: the caller's numbers have no gap.
      const sequence = state.sequence++;
      if (out === '') out = JSON.stringify(event);
      // The caller's text is stored: not serialized a second time.
      sink?.event(event as ResponseEventPayload, out);
      // A stored response goes on being recorded after its caller left (it may resume the stream).
      sse ??= new SseWriter(ctx.res);
      // Text the upstream split over several `data:` lines (legal SSE) goes out as that many `data:` lines.
      const pending = sse.open ? sse.event(out, type, sequence) : undefined;
      if (pending) await pending;
      if (TERMINAL.has(type)) {
        terminal = true;
        break;
      }
      if (!sse.open && !sink) break;
    }
    if (!terminal && (callerThere() || sink)) {
      throw new GatewayError('upstream_error', 'The upstream stream ended before its final event.', {
        cause: new UpstreamFault('The upstream Responses stream ended without a terminal event.'),
      });
    }
  } catch (err) {
    failure = toGatewayError(err);
  }
  if (failure && sse === null && state.sequence === 0) {
    // Nothing reached the caller or the store: an ordinary error reply (JSON, spec Events rule 2).
    await events.return?.(undefined).catch(() => undefined);
    meter.fail(failure);
    throw failure;
  }
  const writer = (sse ??= new SseWriter(ctx.res));
  if (failure && !terminal) {
    for (const event of failureEvents(state, failure, echo)) {
      const text = JSON.stringify(event);
      sink?.event(event, text);
      if (writer.open && !ctx.abort.aborted) void writer.event(text, event.type, event.sequence_number);
      if (event.type === 'response.failed') state.snapshot = event['response'] as Json;
    }
  }
  const clientLeft = ctx.abort.aborted || !writer.open;
  await events.return?.(undefined).catch(() => undefined);
  // A stream that never reported usage meters none (before the outcome, which ends the call's span).
  meter.tokens(0, 0);
  if (failure) meter.fail(failure);
  else meter.finish(clientLeft ? 'aborted' : 'ok');
  try {
    // A stored response is final in the store before the caller's stream ends: a client that saw
    // the end and reads the response at once (GET) finds it finished, not in progress.
    if (sink && state.snapshot) await sink.end(state.snapshot);
  } finally {
    writer.end();
  }
  return undefined;
}
