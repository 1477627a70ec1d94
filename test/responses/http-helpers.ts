// HTTP-level helpers of the Responses tests: posting to a gateway with plain fetch, parsing the SSE the
// gateway writes (every frame with its `event:`, `id:` and JSON `data:` lines, as a browser's
// EventSource would read them), following a stream as it arrives, and the framing checks every
// Responses stream must pass (spec "Events": `id:` equals `sequence_number`, numbered from the first
// without gaps, `event:` equals the payload's type, one terminal event, last).
import assert from 'node:assert/strict';
import { FAKE_ANTHROPIC_KEY } from '../fixtures/upstreams/anthropic-upstream';
import { waitFor } from '../helpers/wait';

export interface SseFrame {
  event: string | null;
  id: string | null;
  data: Record<string, unknown>;
}

export const TERMINAL_EVENTS: ReadonlySet<string> = new Set(['response.completed', 'response.failed', 'response.incomplete']);

/** Splits SSE text into frames (comments and frames without data skipped); each data is JSON. */
export function parseSseFrames(text: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of text.replace(/\r\n/g, '\n').split('\n\n')) {
    let event: string | null = null;
    let id: string | null = null;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'id') id = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length === 0) continue;
    const joined = data.join('\n');
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(joined) as Record<string, unknown>;
    } catch {
      assert.fail(`an SSE data line is not JSON: ${joined.slice(0, 200)}`);
    }
    frames.push({ event, id, data: parsed });
  }
  return frames;
}

export const typesOf = (frames: readonly SseFrame[]): string[] => frames.map((f) => String(f.data['type']));

/**
 * The framing rules of a Responses stream: `event:` is the payload's type, `id:` its sequence_number,
 * numbered `from`, `from + 1`, … without gaps; exactly one terminal event, and it is the last one
 * (an `error` event, when there is one, right before response.failed).
 */
export function assertResponsesFraming(frames: readonly SseFrame[], from = 0): void {
  assert.ok(frames.length > 0, 'the stream has events');
  frames.forEach((frame, i) => {
    const type = frame.data['type'];
    assert.equal(frame.event, type, `event ${i}: the event: line names the payload's type`);
    assert.equal(frame.data['sequence_number'], from + i, `event ${i} (${String(type)}): sequence numbers from ${from} without gaps`);
    assert.equal(frame.id, String(from + i), `event ${i} (${String(type)}): id: equals sequence_number`);
  });
  const terminals = frames.filter((f) => TERMINAL_EVENTS.has(String(f.data['type'])));
  assert.equal(terminals.length, 1, `one terminal event: ${typesOf(frames).join(', ')}`);
  assert.ok(TERMINAL_EVENTS.has(String(frames[frames.length - 1]!.data['type'])), `the stream ends with its terminal event: ${typesOf(frames).join(', ')}`);
  const errorAt = frames.findIndex((f) => f.data['type'] === 'error');
  if (errorAt >= 0) {
    assert.equal(errorAt, frames.length - 2, 'the error event is followed by response.failed and nothing else');
    assert.equal(frames[frames.length - 1]!.data['type'], 'response.failed');
  }
}

/** An `error` event as the spec's Events rule 3 says: `{ error: { message, type, code } }`. */
export function assertStreamErrorEvent(frame: SseFrame): void {
  assert.equal(frame.data['type'], 'error');
  const error = frame.data['error'] as Record<string, unknown> | undefined;
  assert.ok(error && typeof error === 'object', `the error event nests its error: ${JSON.stringify(frame.data)}`);
  assert.equal(typeof error['message'], 'string');
  assert.ok((error['message'] as string).length > 0, 'a message says what happened');
  assert.equal(typeof error['type'], 'string');
  assert.equal(typeof error['code'], 'string');
}

export interface JsonReply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

/** Reads a reply whose body must be JSON (an SSE body fails the test, naming it). */
export async function jsonReply(res: Response): Promise<JsonReply> {
  const text = await res.text();
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `a JSON reply, not ${res.headers.get('content-type')}: ${text.slice(0, 300)}`);
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as Record<string, unknown>, text };
}

/** The nested error envelope (spec "Responses and conversations endpoints"). */
export function assertNestedError(reply: JsonReply, status: number, code: string | null, param?: string): Record<string, unknown> {
  assert.equal(reply.status, status, reply.text);
  const error = reply.body['error'] as Record<string, unknown> | undefined;
  assert.ok(error && typeof error === 'object', `nested envelope: ${reply.text}`);
  assert.equal(typeof error['message'], 'string');
  assert.equal(typeof error['type'], 'string');
  assert.equal(error['code'] ?? null, code, reply.text);
  if (param !== undefined) assert.equal(error['param'], param, reply.text);
  return error;
}

/** A stream read as it arrives: its frames so far, and when it ended. */
export class SseFollower {
  readonly frames: SseFrame[] = [];
  /** When each frame arrived (performance.now()), by index. */
  readonly arrivals: number[] = [];
  readonly finished: Promise<void>;
  private buffer = '';
  private readonly controller = new AbortController();

  constructor(readonly response: Response) {
    this.finished = this.read();
    // Awaited later (or not at all, when the connection is expected to die): never an unhandled rejection.
    this.finished.catch(() => undefined);
  }

  private async read(): Promise<void> {
    const body = this.response.body;
    assert.ok(body, 'a streamed body');
    const decoder = new TextDecoder();
    const reader = body.getReader();
    const onAbort = (): void => void reader.cancel().catch(() => undefined);
    this.controller.signal.addEventListener('abort', onAbort);
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.buffer += decoder.decode(value, { stream: true });
        const end = this.buffer.lastIndexOf('\n\n');
        if (end < 0) continue;
        const frames = parseSseFrames(this.buffer.slice(0, end + 2));
        this.frames.push(...frames);
        const now = performance.now();
        for (let i = 0; i < frames.length; i++) this.arrivals.push(now);
        this.buffer = this.buffer.slice(end + 2);
      }
    } catch (err) {
      if (!this.controller.signal.aborted) throw err;
    }
    if (this.buffer.trim() === '') return;
    const rest = parseSseFrames(this.buffer);
    this.frames.push(...rest);
    for (let i = 0; i < rest.length; i++) this.arrivals.push(performance.now());
  }

  async until(what: string, count: number, timeoutMs = 15_000): Promise<void> {
    await waitFor(() => this.frames.length >= count, { what: `${what} (${count} events, have ${this.frames.length})`, timeoutMs, intervalMs: 10 });
  }

  /** Leaves mid-stream (the caller's connection goes away). */
  leave(): void {
    this.controller.abort();
  }
}

/**
 * How late `reader` got the events it received live, compared with `caller` (the median, in ms): the
 * events from `from` on, which both saw. Live delivery is milliseconds; polling the store is seconds.
 */
export function medianLagMs(caller: SseFollower, reader: SseFollower, from: number, readerOffset = 0): number {
  const lags: number[] = [];
  for (let i = from; i < caller.frames.length; i++) {
    const at = reader.arrivals[i - readerOffset];
    if (at !== undefined) lags.push(at - caller.arrivals[i]!);
  }
  assert.ok(lags.length > 0, 'events both saw');
  lags.sort((a, b) => a - b);
  return lags[Math.floor(lags.length / 2)]!;
}

/** `promise`, or a failure naming `what` after `ms` (a test fails fast instead of at mocha's ceiling). */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** POSTs JSON with fetch and returns the unread Response. */
export function post(url: string, body: unknown, headers: Record<string, string>, signal?: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

/**
 * The two Responses providers most tests run against: `resp-native` on the fake OpenAI upstream
 * (`UPSTREAM`, replaced by startGatewayWithUpstream) speaking Responses natively, and `resp-claude` on
 * a fake Anthropic upstream (translated). No retries: a test's scripted failure is seen once.
 */
export function nativeAndClaude(anthropicBaseUrl: string): { providers: Record<string, Record<string, unknown>>; models: Record<string, unknown>[] } {
  return {
    providers: {
      native: { type: 'openai', baseUrl: 'UPSTREAM', apiKey: 'sk-native', responses: 'native', retries: { max: 0 } },
      claude: { type: 'anthropic', baseUrl: anthropicBaseUrl, apiKey: FAKE_ANTHROPIC_KEY, retries: { max: 0 } },
    },
    models: [
      { id: 'resp-native', provider: 'native' },
      { id: 'resp-claude', provider: 'claude', upstream: 'claude-sonnet-4-20250514' },
    ],
  };
}
