// Relays an upstream reply in the provider's own wire format to the client without re-serialising it:
// a JSON reply as one buffer (parsed once, to check it is JSON and read its usage), a stream event by
// event as it arrives (usage peeked from the tail). A failure after the first streamed byte ends the
// stream with an error event in the client format instead of a hang or a silent truncation.
import type { RequestContext } from '../../pipeline/context';
import { STOP_READING, type ChunkVerdict } from '../../providers/http/reply-body';
import type { UpstreamResponse } from '../../providers/http/transport';
import { usageCounts, UsageTail, type PeekedUsage } from '../../formats/chat/peek-usage';
import { GatewayError, toGatewayError } from '../../http/errors';
import { UpstreamFault } from '../../providers/http/upstream-errors';
import { SseWriter } from '../../http/sse';
import type { Reply } from '../types';
import { EventAligner } from './event-aligner';
import type { RequestMeter } from '../../model-call/request-meter';

/**
 * A JSON reply relayed as the upstream's bytes. Its content type is ours, not copied from the upstream:
 * no header value of theirs reaches our response (a control byte in one made setHeader throw).
 */
export async function relayJson(response: UpstreamResponse, call: RequestMeter): Promise<Reply> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      parts.push(chunk);
      size += chunk.length;
    }
  } catch (err) {
    call.fail(err);
    throw err;
  }
  const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
  const parsed = parseReply(bytes);
  if (!parsed) {
    const err = new GatewayError('upstream_error', 'The upstream provider sent a reply that is not JSON.', {
      cause: new UpstreamFault(`The upstream sent ${bytes.length} bytes that do not parse as JSON.`),
    });
    call.fail(err);
    throw err;
  }
  const { usage } = parsed;
  call.tokens(usage?.promptTokens ?? 0, usage?.completionTokens ?? 0);
  call.finish('ok');
  // An explicit length spares chunked framing on the client side of the hop.
  return { status: 200, headers: { 'content-length': String(bytes.length) }, raw: { contentType: 'application/json', data: bytes } };
}

/**
 * The caller is promised JSON: a reply that is not (an upstream's error page sent with a 200, a body
 * cut short) is null, and becomes a 502 in the caller's envelope. Parsed once, to check it and to read
 * its top-level usage: the bytes go on as they came.
 */
function parseReply(bytes: Buffer): { usage: PeekedUsage | null } | null {
  let reply: unknown;
  try {
    reply = JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
  return { usage: reply !== null && typeof reply === 'object' ? usageCounts((reply as { usage?: unknown }).usage) : null };
}

/** How a stream failure is written in the client's format (chat: `data: {"error":...}`). */
export type StreamErrorWriter = (sse: SseWriter, err: GatewayError) => void;

export const chatStreamError: StreamErrorWriter = (sse, err) => {
  sse.fail(JSON.stringify({ error: { message: err.message, type: err.type, code: err.wireCode ?? 'stream_error', param: null } }));
};

/** The event that ends a chat or legacy completions stream. */
export const CHAT_STREAM_END = Buffer.from('data: [DONE]');
/** How far back from the end of a write its end marker is looked for (the end event is short). */
const END_WINDOW = 160;

/**
 * An SSE reply relayed event by event as the upstream's bytes. A stream the upstream ended without its
 * format's end event (`endMarker`: chat's `data: [DONE]`, messages' `message_stop`) was cut short or
 * is not the format at all: it ends with an error event, not as if it had completed.
 */
export async function relaySse(
  ctx: RequestContext,
  response: UpstreamResponse,
  call: RequestMeter,
  writeError: StreamErrorWriter,
  endMarker: Buffer,
): Promise<undefined> {
  const sse = new SseWriter(ctx.res);
  const aligner = new EventAligner();
  const tail = new UsageTail();
  let failed = false;
  let failure: unknown;
  try {
    // Each chunk is written inside the upstream's 'data' event (no promise or iterator step per chunk):
    // relaying thousands of chunks a second, that step was most of the relay's own cost.
    let ended = false;
    await response.body.forEach((chunk): ChunkVerdict => {
      tail.push(chunk);
      const ready = aligner.push(chunk);
      if (ready.length === 0) return sse.open ? undefined : STOP_READING;
      ended = ready.includes(endMarker, Math.max(0, ready.length - END_WINDOW));
      const pending = sse.write(ready);
      // Client gone: stopping releases the upstream connection.
      return sse.open ? pending : STOP_READING;
    });
    const rest = aligner.rest();
    if (rest && rest.includes(endMarker)) {
      ended = true;
      if (sse.open) await sse.write(rest);
    }
    if (!ended && sse.open) {
      throw new GatewayError('upstream_error', 'The upstream stream ended before its final event.', {
        cause: new UpstreamFault('The upstream stream ended without its end event.'),
      });
    }
  } catch (err) {
    failed = true;
    failure = err;
    if (!ctx.abort.aborted) writeError(sse, toGatewayError(err));
  }
  // The client gets its last byte first; the call's bookkeeping (metrics, usage for the audit plugin,
  // which reads it when the response closes, a tick later at the earliest) follows.
  const clientLeft = ctx.abort.aborted || !sse.open;
  sse.end();
  // Usage before the outcome: the call's span (tracing on) ends with the outcome, carrying its tokens.
  const usage = tail.usage();
  call.tokens(usage?.promptTokens ?? 0, usage?.completionTokens ?? 0);
  if (failed) call.fail(failure);
  else call.finish(clientLeft ? 'aborted' : 'ok');
  return undefined;
}
