// The one place upstream HTTP happens (every provider type uses it): pooled keep-alive connections,
// connect / first-byte / idle timeouts, retries with jittered exponential backoff (connection errors,
// 429 and 5xx, honouring Retry-After) that only happen before anything reached the caller, the SSRF
// guard, and aborts. Built on the project's HTTP/1.1 client (http1-client.ts: per-origin keep-alive
// pools, per-request head/body timeouts, reply chunks handed over as the socket reads them, with no
// stream object in between).
import type { ProviderConfig } from '../../config/types';
import { GatewayError } from '../../http/errors';
import { onAbort, type CallSignal } from './call-abort';
import { Http1Agent, type Http1Controller, type Http1Handler } from './http1-client';
import { assertPublicLiteral, guardedLookup, SsrfBlockedError } from './ssrf-guard';

export interface UpstreamRequest {
  url: string;
  method?: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string | Buffer;
  signal?: CallSignal;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The reply bytes as they arrive; an idle timeout or a broken connection throws a GatewayError. */
  body: UpstreamBody;
  text(): Promise<string>;
  json(): Promise<unknown>;
  /** How many attempts the call took (1 = no retry). */
  readonly attempts: number;
}

/**
 * What a chunk consumer returns: nothing to go on, a promise to stop reading until it settles (the
 * client is slower than the upstream), or STOP_READING to discard the rest of the reply.
 */
export type ChunkVerdict = Promise<void> | typeof STOP_READING | undefined;
export const STOP_READING = false;

export interface UpstreamBody extends AsyncIterable<Buffer> {
  /**
   * Hands each chunk to `onChunk` the moment it arrives, in the upstream's 'data' event: a relay pays
   * no promise or iterator step per chunk. Resolves when the reply ended (or the consumer stopped),
   * rejects like the iterator does. Use it or the iterator, not both.
   */
  forEach(onChunk: (chunk: Buffer) => ChunkVerdict): Promise<void>;
}

export type UpstreamErrorMapper = (status: number, bodyText: string) => { message: string; type?: string };

export interface TransportOptions {
  mapError?: UpstreamErrorMapper;
  /** For tests: replaces the random jitter source (returns [0, 1)). */
  random?: () => number;
}

/** Defaults of the operator contract (README configuration table). */
export const TRANSPORT_DEFAULTS = {
  connectMs: 10_000,
  firstByteMs: 120_000,
  idleMs: 60_000,
  retriesMax: 2,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
} as const;

/** Largest error body read to build the client's message (an upstream error page can be huge). */
const ERROR_BODY_LIMIT = 64 * 1024;

/** Connection-level failures that happened before any response: safe to retry (the body is replayable). */
const RETRYABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UPSTREAM_SOCKET_CLOSED',
  'UPSTREAM_CONNECT_TIMEOUT',
]);

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause && cause !== err ? errorCode(cause) : undefined;
}

function findSsrf(err: unknown): SsrfBlockedError | null {
  let current: unknown = err;
  for (let depth = 0; current && depth < 5; depth += 1) {
    if (current instanceof SsrfBlockedError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** OpenAI-style error bodies `{error: {message, type}}`, else a generic message naming the status. */
export function defaultErrorMapper(providerName: string): UpstreamErrorMapper {
  return (status, bodyText) => {
    try {
      const parsed = JSON.parse(bodyText) as { error?: { message?: unknown; type?: unknown } | string; message?: unknown };
      const error = parsed.error;
      if (error && typeof error === 'object' && typeof error.message === 'string' && error.message) {
        return typeof error.type === 'string' ? { message: error.message, type: error.type } : { message: error.message };
      }
      if (typeof error === 'string' && error) return { message: error };
      if (typeof parsed.message === 'string' && parsed.message) return { message: parsed.message };
    } catch {
      // not JSON: fall through to the generic message
    }
    return { message: `Upstream provider ${providerName} answered HTTP ${status}.` };
  };
}

function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Retry-After (RFC 9110 §10.2.3: delay-seconds or an HTTP-date) or OpenAI's retry-after-ms, in ms. */
export function retryAfterMs(headers: Record<string, string | string[] | undefined>, now = Date.now()): number | null {
  const ms = headerValue(headers, 'retry-after-ms');
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = headerValue(headers, 'retry-after')?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function sleep(ms: number, signal: CallSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      unsubscribe?.();
      resolve();
    }, ms);
    const unsubscribe =
      signal &&
      onAbort(signal, () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      });
  });
}

/** Maps a failure while reading a reply body to the caller's error (an abort stays an abort). */
function bodyError(err: unknown, providerName: string, idleMs: number): unknown {
  if (errorCode(err) === 'UPSTREAM_BODY_TIMEOUT') {
    return new GatewayError('upstream_timeout', `Upstream provider ${providerName} went silent for ${idleMs} ms mid-reply.`, { cause: err });
  }
  if ((err as { name?: string }).name === 'AbortError') return err;
  return new GatewayError('upstream_error', `Upstream provider ${providerName} broke off the reply.`, { cause: err });
}

/** Chunks buffered before the reply is paused (the consumer is slower than the upstream). */
const HIGH_WATER_CHUNKS = 16;

/** The reason a reply's connection is closed when its consumer stopped reading. */
const DISCARDED = Object.assign(new Error('The rest of the reply was not needed.'), { name: 'AbortError' });

/**
 * The reply bytes, handed over by the HTTP/1.1 client's parser through the handler below: no Readable
 * stream per reply (each chunk would pay a push, a buffer round, an event and a nextTick before anyone
 * saw it). Two modes. As an async iterator: one settled promise per chunk; the connection is paused
 * while HIGH_WATER_CHUNKS wait unread. Pushed (forEach): each chunk goes to the consumer inside the
 * parser's callback, one promise per reply; the connection is paused while the consumer's promise
 * (its backpressure) is pending.
 * Stopping early (client gone, caller done) closes the connection instead of reading the rest.
 */
class ReplyBody implements UpstreamBody, AsyncIterableIterator<Buffer> {
  private readonly queue: Buffer[] = [];
  private head = 0;
  /** No more chunks will be delivered: the reply ended, or the consumer stopped reading. */
  private ended = false;
  private failure: unknown = null;
  private paused = false;
  private waiting: { resolve(r: IteratorResult<Buffer>): void; reject(err: unknown): void } | null = null;
  /** Push mode: the consumer, and the forEach promise that settles when the reply is over. */
  private consumer: ((chunk: Buffer) => ChunkVerdict) | null = null;
  private consumed: { resolve(): void; reject(err: unknown): void } | null = null;

  constructor(
    private readonly controller: Http1Controller,
    private readonly providerName: string,
    private readonly idleMs: number,
  ) {}

  /** From the parser: the next chunk of the reply. */
  chunk(chunk: Buffer): void {
    if (this.ended) return;
    if (this.consumer !== null) {
      this.push(this.consumer, chunk);
      return;
    }
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = null;
      waiting.resolve({ value: chunk, done: false });
      return;
    }
    this.queue.push(chunk);
    if (this.queue.length - this.head >= HIGH_WATER_CHUNKS && !this.paused) {
      this.paused = true;
      this.controller.pause();
    }
  }

  /** From the parser: the reply is complete. */
  complete(): void {
    if (this.ended) return;
    this.ended = true;
    this.settle();
  }

  /** From the client: the connection failed, timed out or was aborted mid-reply. */
  fail(err: unknown): void {
    if (this.ended || this.failure !== null) return;
    this.failure = bodyError(err, this.providerName, this.idleMs);
    this.settle();
  }

  /** Stops reading: the rest of the reply is not wanted (its connection is closed, not reused). */
  private discard(): void {
    if (this.ended) return;
    this.ended = true;
    this.controller.abort(DISCARDED);
  }

  private push(consumer: (chunk: Buffer) => ChunkVerdict, chunk: Buffer): void {
    let verdict: ChunkVerdict;
    try {
      verdict = consumer(chunk);
    } catch (err) {
      this.stopPushing(err);
      return;
    }
    if (verdict === undefined) return;
    if (verdict === STOP_READING) {
      this.stopPushing(null);
      return;
    }
    this.controller.pause();
    verdict.then(
      () => {
        if (this.consumer === consumer) this.controller.resume();
      },
      (err: unknown) => {
        if (this.consumer === consumer) this.stopPushing(err);
      },
    );
  }

  /** The consumer stopped (or threw): the rest of the reply is discarded and forEach settles. */
  private stopPushing(err: unknown): void {
    const consumed = this.consumed;
    this.consumer = null;
    this.consumed = null;
    this.discard();
    if (err === null) consumed?.resolve();
    else consumed?.reject(err);
  }

  private settle(): void {
    const consumed = this.consumed;
    if (consumed) {
      this.consumer = null;
      this.consumed = null;
      if (this.failure !== null) {
        const failure = this.failure;
        this.failure = FAILED;
        consumed.reject(failure);
      } else consumed.resolve();
      return;
    }
    const waiting = this.waiting;
    if (!waiting) return;
    this.waiting = null;
    if (this.failure !== null) {
      const failure = this.failure;
      this.failure = FAILED;
      waiting.reject(failure);
    } else waiting.resolve({ value: undefined, done: true });
  }

  async forEach(onChunk: (chunk: Buffer) => ChunkVerdict): Promise<void> {
    // Chunks that arrived before the consumer did go first, in order.
    while (this.head < this.queue.length) {
      const verdict = onChunk(this.shift());
      if (verdict === STOP_READING) {
        await this.return();
        return;
      }
      if (verdict !== undefined) await verdict;
    }
    const failure = this.claimFailure();
    if (failure !== null) throw failure;
    if (this.ended || this.failure === FAILED) return;
    return new Promise<void>((resolve, reject) => {
      this.consumer = onChunk;
      this.consumed = { resolve, reject };
      if (this.paused) {
        this.paused = false;
        this.controller.resume();
      }
    });
  }

  /** A failure not yet reported to the consumer (then marked reported), or null. */
  private claimFailure(): unknown {
    if (this.failure === null || this.failure === FAILED) return null;
    const failure = this.failure;
    this.failure = FAILED;
    return failure;
  }

  private shift(): Buffer {
    const value = this.queue[this.head]!;
    this.queue[this.head++] = EMPTY;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    }
    if (this.paused && this.queue.length - this.head < HIGH_WATER_CHUNKS / 2) {
      this.paused = false;
      this.controller.resume();
    }
    return value;
  }

  next(): Promise<IteratorResult<Buffer>> {
    if (this.head < this.queue.length) return Promise.resolve({ value: this.shift(), done: false });
    const failure = this.claimFailure();
    if (failure !== null) return Promise.reject(failure);
    if (this.ended || this.failure === FAILED) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<Buffer>> {
    this.queue.length = 0;
    this.head = 0;
    this.discard();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Up to `limit` bytes of the reply as text (an error body); the rest, if any, is discarded. */
  async readCapped(limit: number): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of this) {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= limit) break;
      }
    } catch {
      // a broken error body still yields what arrived
    }
    return Buffer.concat(chunks, size).subarray(0, limit).toString('utf8');
  }
}

const EMPTY = Buffer.alloc(0);
/** Marks a failure already reported to the consumer. */
const FAILED = Symbol('failed');

/** A reply's status line and headers, with its body still arriving. */
interface ReplyHead {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: ReplyBody;
}

/**
 * One upstream call on the HTTP/1.1 client: resolves with the head when the final status line
 * and headers arrived (1xx informational heads are skipped), rejects on a failure before that, and
 * feeds the body afterwards. The caller's abort signal aborts the call at any point.
 */
class ReplyHandler implements Http1Handler {
  private body: ReplyBody | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly resolve: (head: ReplyHead) => void,
    private readonly reject: (err: unknown) => void,
    private readonly signal: CallSignal | undefined,
    private readonly providerName: string,
    private readonly idleMs: number,
  ) {}

  onRequestStart(controller: Http1Controller): void {
    const signal = this.signal;
    if (!signal) return;
    if (signal.aborted) {
      controller.abort(signal.reason as Error);
      return;
    }
    this.unsubscribe?.();
    this.unsubscribe = onAbort(signal, () => controller.abort(signal.reason as Error));
  }

  onResponseStart(controller: Http1Controller, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200) return;
    this.body = new ReplyBody(controller, this.providerName, this.idleMs);
    this.resolve({ status: statusCode, headers, body: this.body });
  }

  onResponseData(_controller: Http1Controller, chunk: Buffer): void {
    this.body?.chunk(chunk);
  }

  onResponseEnd(): void {
    this.release();
    this.body?.complete();
  }

  onResponseError(_controller: Http1Controller, err: Error): void {
    this.release();
    if (this.body) this.body.fail(err);
    else this.reject(err);
  }

  private release(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }
}

export class UpstreamTransport {
  private readonly agent: Http1Agent;
  private readonly mapError: UpstreamErrorMapper;
  private readonly random: () => number;
  private readonly firstByteMs: number;
  private readonly idleMs: number;
  private readonly retriesMax: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly allowPrivate: boolean;
  /** Hosts whose literal-IP check already passed (the check is per origin, not per request). */
  private readonly checkedHosts = new Set<string>();

  constructor(
    readonly providerName: string,
    config: ProviderConfig,
    options: TransportOptions = {},
  ) {
    this.mapError = options.mapError ?? defaultErrorMapper(providerName);
    this.random = options.random ?? Math.random;
    const timeouts = config.timeouts ?? {};
    const retries = config.retries ?? {};
    this.firstByteMs = timeouts.firstByteMs ?? TRANSPORT_DEFAULTS.firstByteMs;
    this.idleMs = timeouts.idleMs ?? TRANSPORT_DEFAULTS.idleMs;
    this.retriesMax = retries.max ?? TRANSPORT_DEFAULTS.retriesMax;
    this.baseDelayMs = retries.baseDelayMs ?? TRANSPORT_DEFAULTS.baseDelayMs;
    this.maxDelayMs = retries.maxDelayMs ?? TRANSPORT_DEFAULTS.maxDelayMs;
    this.allowPrivate = config.allowPrivateNetwork === true;
    // One agent per provider, with one keep-alive pool per origin inside it.
    this.agent = new Http1Agent({
      connectTimeoutMs: timeouts.connectMs ?? TRANSPORT_DEFAULTS.connectMs,
      keepAliveMs: 30_000,
      ...(this.allowPrivate ? {} : { lookup: guardedLookup }),
    });
  }

  private guard(url: URL): void {
    if (this.allowPrivate || this.checkedHosts.has(url.hostname)) return;
    try {
      assertPublicLiteral(url.hostname);
    } catch (err) {
      throw this.ssrfError(err as SsrfBlockedError);
    }
    this.checkedHosts.add(url.hostname);
  }

  private ssrfError(err: SsrfBlockedError): GatewayError {
    return new GatewayError(
      'upstream_error',
      `Upstream provider ${this.providerName} points at a private or loopback address (${err.address}); set providers.${this.providerName}.allowPrivateNetwork to allow it.`,
      { cause: err },
    );
  }

  /** Exponential backoff with equal jitter: half the step fixed, half random (spreads retry storms). */
  private backoff(attempt: number): number {
    const step = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** attempt);
    return Math.round(step / 2 + (this.random() * step) / 2);
  }

  /** Parsed request URLs (a provider calls a handful of endpoints: parse each once). */
  private readonly targets = new Map<string, { url: URL; origin: string; path: string }>();

  private target(raw: string): { url: URL; origin: string; path: string } {
    let target = this.targets.get(raw);
    if (!target) {
      const url = new URL(raw);
      target = { url, origin: url.origin, path: `${url.pathname}${url.search}` };
      if (this.targets.size < 64) this.targets.set(raw, target);
    }
    return target;
  }

  async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    const { url, origin, path } = this.target(request.url);
    this.guard(url);
    const { signal } = request;
    for (let attempt = 0; ; attempt += 1) {
      const last = attempt >= this.retriesMax;
      let response: ReplyHead;
      try {
        response = await this.dispatch(origin, path, request);
      } catch (err) {
        if (signal?.aborted) throw signal.reason ?? err;
        const ssrf = findSsrf(err);
        if (ssrf) throw this.ssrfError(ssrf);
        const code = errorCode(err);
        if (code === 'UPSTREAM_HEADERS_TIMEOUT') {
          // No retry: the upstream may still be generating (and billing) the first answer.
          throw new GatewayError('upstream_timeout', `Upstream provider ${this.providerName} sent no response within ${this.firstByteMs} ms.`, { cause: err });
        }
        if (code !== undefined && RETRYABLE_CODES.has(code) && !last) {
          await sleep(this.backoff(attempt), signal);
          continue;
        }
        if (code === 'UPSTREAM_BAD_RESPONSE') {
          throw new GatewayError('upstream_error', `Upstream provider ${this.providerName} sent a response that is not valid HTTP/1.1.`, { cause: err });
        }
        if (code === 'UPSTREAM_CONNECT_TIMEOUT') {
          throw new GatewayError('upstream_timeout', `Upstream provider ${this.providerName} did not accept a connection in time.`, { cause: err });
        }
        throw new GatewayError('upstream_error', `Upstream provider ${this.providerName} is unreachable.`, { cause: err });
      }

      const status = response.status;
      if (status >= 200 && status < 300) return this.wrap(response, attempt + 1);

      const retryable = status === 429 || status >= 500;
      const hinted = retryable ? retryAfterMs(response.headers) : null;
      // A Retry-After longer than we are willing to hold the caller goes back to the caller instead.
      if (retryable && !last && (hinted === null || hinted <= this.maxDelayMs)) {
        // Reading the (bounded) error body to its end lets the keep-alive connection be reused.
        await response.body.readCapped(ERROR_BODY_LIMIT);
        await sleep(hinted ?? this.backoff(attempt), signal);
        continue;
      }
      const text = await response.body.readCapped(ERROR_BODY_LIMIT);
      const mapped = this.mapError(status, text);
      const headers: Record<string, string> = {};
      const retryAfter = headerValue(response.headers, 'retry-after');
      if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
      throw new GatewayError('upstream_error', mapped.message, {
        status: status >= 400 ? status : 502,
        ...(mapped.type !== undefined ? { type: mapped.type } : {}),
        headers,
      });
    }
  }

  /** One attempt: resolves with the reply's head once its final status line and headers arrived. */
  private dispatch(origin: string, path: string, request: UpstreamRequest): Promise<ReplyHead> {
    return new Promise((resolve, reject) => {
      const handler = new ReplyHandler(resolve, reject, request.signal, this.providerName, this.idleMs);
      this.agent.dispatch(
        origin,
        {
          method: request.method ?? 'POST',
          path,
          headers: request.headers,
          body: request.body ?? null,
          headersTimeoutMs: this.firstByteMs,
          bodyTimeoutMs: this.idleMs,
        },
        handler,
      );
    });
  }

  private wrap(response: ReplyHead, attempts: number): UpstreamResponse {
    const iterable = response.body;
    const providerName = this.providerName;
    const text = async (): Promise<string> => {
      const parts: Buffer[] = [];
      for await (const chunk of iterable) parts.push(chunk);
      return Buffer.concat(parts).toString('utf8');
    };
    return {
      status: response.status,
      headers: response.headers,
      body: iterable,
      attempts,
      text,
      async json() {
        const raw = await text();
        try {
          return JSON.parse(raw) as unknown;
        } catch (err) {
          throw new GatewayError('upstream_error', `Upstream provider ${providerName} sent a reply that is not JSON.`, { cause: err });
        }
      },
    };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
