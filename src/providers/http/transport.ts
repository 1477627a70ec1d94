// The one place upstream HTTP happens (every provider type uses it), on undici: pooled keep-alive
// connections, connect / first-byte / idle timeouts, aborts, and retries with jittered exponential
// backoff that happen only when the upstream provably did not process the request (the connection
// failed before any byte of it was written) or answered 429 / 503 (honouring Retry-After). A POST that
// was written and then met a reset is never sent again: the upstream may be generating (and billing)
// it. The reply reaches the caller as undici hands its chunks over (reply-body.ts), never re-serialised.
import type { Dispatcher } from 'undici';
import type { ProviderConfig } from '../../config/types';
import { GatewayError } from '../../http/errors';
import { onAbort, type CallSignal } from './call-abort';
import { ReplyBody, type ReplyLimit, type UpstreamBody } from './reply-body';
import { retryAfterHeader, retryAfterMs } from './retry-after';
import { createUpstreamDispatcher } from './upstream-dispatcher';
import { upstreamTraceHeaders } from '../../telemetry/tracing';
import { defaultErrorMapper, errorCode, upstreamStatusError, UpstreamFault, withheld, type UpstreamErrorMapper } from './upstream-errors';

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
  /** The reply bytes as they arrive; an idle timeout, a broken connection or an oversized reply throws a GatewayError. */
  body: UpstreamBody;
  text(): Promise<string>;
  json(): Promise<unknown>;
  /** The reply parsed, with the bytes it was parsed from (for a relay that sends them on). */
  jsonWithBytes(): Promise<{ value: unknown; bytes: Buffer }>;
  /** How many attempts the call took (1 = no retry). */
  readonly attempts: number;
}

export interface TransportOptions {
  mapError?: UpstreamErrorMapper;
  /** For tests: replaces the random jitter source (returns [0, 1)). */
  random?: () => number;
  /** Where HTTPS_PROXY / NO_PROXY are read (process.env). */
  env?: NodeJS.ProcessEnv;
}

/** Defaults of the operator contract (README configuration table, config/gateway.schema.json). */
export const TRANSPORT_DEFAULTS = {
  connectMs: 10_000,
  firstByteMs: 120_000,
  idleMs: 60_000,
  retriesMax: 2,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxBodyBytes: 32 * 1024 * 1024,
  maxSseLineBytes: 8 * 1024 * 1024,
} as const;

/** Largest error body read to build the client's message (an upstream error page can be huge). */
const ERROR_BODY_LIMIT = 64 * 1024;

/** undici's codes for a reply that is not valid HTTP (besides llhttp's HTTPParserError, HPE_*). */
const MALFORMED_CODES = new Set(['UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'UND_ERR_HEADERS_OVERFLOW', 'UND_ERR_INFO']);
/** Failures before a byte was written that another attempt cannot fix. */
const PERMANENT_CODES = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED', 'ERR_INVALID_URL', 'UND_ERR_DESTROYED', 'UND_ERR_CLOSED']);

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

/** A reply's status and headers, with its body still arriving. */
interface ReplyHead {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: ReplyBody;
}

/** Why an attempt failed before its reply's head, and whether any byte of the request had been written. */
class AttemptError extends Error {
  constructor(
    readonly failure: unknown,
    readonly written: boolean,
  ) {
    super('upstream attempt failed');
  }
}

/**
 * One upstream call as an undici dispatch handler: resolves with the head when the final status and
 * headers arrived (1xx heads are skipped), rejects with an AttemptError on a failure before that, and
 * feeds the body afterwards. The caller's abort signal aborts the call at any point, while it still
 * waits for a connection included.
 */
class ReplyHandler implements Dispatcher.DispatchHandler {
  private body: ReplyBody | null = null;
  private controller: Dispatcher.DispatchController | null = null;
  private unsubscribe: (() => void) | null = null;
  /** undici calls onRequestStart right before it writes the request on a connected socket. */
  private written = false;
  private settled = false;

  constructor(
    private readonly resolve: (head: ReplyHead) => void,
    private readonly reject: (err: AttemptError) => void,
    private readonly signal: CallSignal | undefined,
    private readonly providerName: string,
    private readonly idleMs: number,
    private readonly limits: { body: ReplyLimit; sse: ReplyLimit },
  ) {
    if (signal) this.unsubscribe = onAbort(signal, () => this.onAbort());
  }

  private onAbort(): void {
    const reason = this.signal?.reason as Error;
    if (this.controller) this.controller.abort(reason);
    // Still waiting for a connection: the caller hears now; the request is aborted once undici starts it.
    else this.fail(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.signal?.aborted) {
      controller.abort(this.signal.reason as Error);
      return;
    }
    this.written = true;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    // 1xx informational heads (103 Early Hints) come before the final one.
    if (this.settled || statusCode < 200) return;
    this.settled = true;
    const contentType = headers['content-type'];
    const sse = typeof contentType === 'string' && contentType.startsWith('text/event-stream');
    this.body = new ReplyBody(controller, this.providerName, this.idleMs, sse ? this.limits.sse : this.limits.body);
    this.resolve({ status: statusCode, headers, body: this.body });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.body?.chunk(chunk);
  }

  onResponseEnd(): void {
    this.release();
    this.body?.complete();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.release();
    if (this.body) this.body.fail(err);
    else this.fail(err);
  }

  private fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.release();
    this.reject(new AttemptError(err, this.written));
  }

  private release(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }
}

export class UpstreamTransport {
  private readonly dispatcher: Dispatcher;
  private readonly mapError: UpstreamErrorMapper;
  private readonly random: () => number;
  private readonly firstByteMs: number;
  private readonly idleMs: number;
  private readonly retriesMax: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly limits: { body: ReplyLimit; sse: ReplyLimit };

  constructor(
    readonly providerName: string,
    config: ProviderConfig,
    options: TransportOptions = {},
  ) {
    this.mapError = options.mapError ?? defaultErrorMapper(providerName);
    this.random = options.random ?? Math.random;
    const timeouts = config.timeouts ?? {};
    const retries = config.retries ?? {};
    const limits = config.limits ?? {};
    this.firstByteMs = timeouts.firstByteMs ?? TRANSPORT_DEFAULTS.firstByteMs;
    this.idleMs = timeouts.idleMs ?? TRANSPORT_DEFAULTS.idleMs;
    this.retriesMax = retries.max ?? TRANSPORT_DEFAULTS.retriesMax;
    this.baseDelayMs = retries.baseDelayMs ?? TRANSPORT_DEFAULTS.baseDelayMs;
    this.maxDelayMs = retries.maxDelayMs ?? TRANSPORT_DEFAULTS.maxDelayMs;
    this.limits = {
      body: { kind: 'total', bytes: limits.maxBodyBytes ?? TRANSPORT_DEFAULTS.maxBodyBytes },
      sse: { kind: 'line', bytes: limits.maxSseLineBytes ?? TRANSPORT_DEFAULTS.maxSseLineBytes },
    };
    // One dispatcher per provider, with one keep-alive pool per origin inside it.
    this.dispatcher = createUpstreamDispatcher(
      {
        connectMs: timeouts.connectMs ?? TRANSPORT_DEFAULTS.connectMs,
        keepAliveMs: 30_000,
        http2: config.http2 === true,
        ...(config.tls?.caFile !== undefined ? { caFile: config.tls.caFile } : {}),
      },
      options.env,
    );
  }

  /** Exponential backoff with equal jitter: half the step fixed, half random (spreads retry storms). */
  private backoff(attempt: number): number {
    const step = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** attempt);
    return Math.round(step / 2 + (this.random() * step) / 2);
  }

  /** Parsed request URLs (a provider calls a handful of endpoints: parse each once). */
  private readonly targets = new Map<string, { origin: string; path: string }>();

  private target(raw: string): { origin: string; path: string } {
    let target = this.targets.get(raw);
    if (!target) {
      const url = new URL(raw);
      target = { origin: url.origin, path: `${url.pathname}${url.search}` };
      if (this.targets.size < 64) this.targets.set(raw, target);
    }
    return target;
  }

  async send(sent: UpstreamRequest): Promise<UpstreamResponse> {
    const { origin, path } = this.target(sent.url);
    const { signal } = sent;
    // Tracing on: the model call's W3C trace context goes along (null, at no cost, when it is off).
    const trace = upstreamTraceHeaders();
    const request = trace ? { ...sent, headers: { ...sent.headers, ...trace } } : sent;
    for (let attempt = 0; ; attempt += 1) {
      const last = attempt >= this.retriesMax;
      let response: ReplyHead;
      try {
        response = await this.dispatch(origin, path, request);
      } catch (err) {
        if (signal?.aborted) throw signal.reason ?? err;
        const { failure, written } = err as AttemptError;
        const code = errorCode(failure);
        if (!written && !last && !PERMANENT_CODES.has(code ?? '')) {
          await sleep(this.backoff(attempt), signal);
          continue;
        }
        throw this.attemptError(failure, code, written);
      }

      const status = response.status;
      if (status >= 200 && status < 300) return this.wrap(response, attempt + 1);

      const hinted = retryAfterMs(response.headers);
      // 429 and 503 say the upstream did not do the work; other 5xx may have (and billed it).
      const retryable = status === 429 || status === 503;
      // A Retry-After longer than we are willing to hold the caller goes back to the caller instead.
      if (retryable && !last && (hinted === null || hinted <= this.maxDelayMs)) {
        // Reading the (bounded) error body to its end lets the keep-alive connection be reused.
        await response.body.readCapped(ERROR_BODY_LIMIT);
        await sleep(hinted ?? this.backoff(attempt), signal);
        continue;
      }
      const text = await response.body.readCapped(ERROR_BODY_LIMIT);
      const headers: Record<string, string> = hinted !== null ? { 'retry-after': retryAfterHeader(hinted) } : {};
      throw upstreamStatusError(this.providerName, status, this.mapError(status, text), headers);
    }
  }

  /** The caller's error for an attempt that got no reply head. */
  private attemptError(failure: unknown, code: string | undefined, written: boolean): GatewayError {
    const name = this.providerName;
    const cause = withheld(failure, written ? 'failed after the request was sent' : 'failed before the request was sent');
    if (code === 'UND_ERR_HEADERS_TIMEOUT') {
      return new GatewayError('upstream_timeout', `Upstream provider ${name} sent no response within ${this.firstByteMs} ms.`, { cause });
    }
    if (code === 'UND_ERR_CONNECT_TIMEOUT') {
      return new GatewayError('upstream_timeout', `Upstream provider ${name} did not accept a connection in time.`, { cause });
    }
    if ((failure as { name?: unknown } | null)?.name === 'HTTPParserError' || (code !== undefined && (code.startsWith('HPE_') || MALFORMED_CODES.has(code)))) {
      return new GatewayError('upstream_error', `Upstream provider ${name} sent a response that is not valid HTTP.`, { cause });
    }
    if (written) {
      return new GatewayError('upstream_error', `Upstream provider ${name} closed the connection without a response; the request was not retried.`, { cause });
    }
    return new GatewayError('upstream_error', `Upstream provider ${name} is unreachable.`, { cause });
  }

  /** One attempt: resolves with the reply's head once its final status and headers arrived. */
  private dispatch(origin: string, path: string, request: UpstreamRequest): Promise<ReplyHead> {
    return new Promise((resolve, reject) => {
      const handler = new ReplyHandler(resolve, reject, request.signal, this.providerName, this.idleMs, this.limits);
      this.dispatcher.dispatch(
        {
          origin,
          method: request.method ?? 'POST',
          path,
          headers: request.headers,
          body: request.body ?? null,
          headersTimeout: this.firstByteMs,
          bodyTimeout: this.idleMs,
        },
        handler,
      );
    });
  }

  private wrap(response: ReplyHead, attempts: number): UpstreamResponse {
    const iterable = response.body;
    const providerName = this.providerName;
    const bytes = async (): Promise<Buffer> => {
      const parts: Buffer[] = [];
      for await (const chunk of iterable) parts.push(chunk);
      return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    };
    const jsonWithBytes = async (): Promise<{ value: unknown; bytes: Buffer }> => {
      const raw = await bytes();
      try {
        return { value: JSON.parse(raw.toString('utf8')) as unknown, bytes: raw };
      } catch {
        // The SyntaxError quotes the text it choked on: not a thing to log.
        throw new GatewayError('upstream_error', `Upstream provider ${providerName} sent a reply that is not JSON.`, {
          cause: new UpstreamFault(`Upstream provider ${providerName} sent ${raw.length} bytes that do not parse as JSON.`),
        });
      }
    };
    return {
      status: response.status,
      headers: response.headers,
      body: iterable,
      attempts,
      text: async () => (await bytes()).toString('utf8'),
      json: async () => (await jsonWithBytes()).value,
      jsonWithBytes,
    };
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}
