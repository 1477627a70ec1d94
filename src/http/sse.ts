// Server-Sent Events to the client (WHATWG HTML §9.2): headers sent at once (with the first event when
// that is already on its way, else on their own before this turn of the event loop ends), every event
// written the moment it exists (no batching, no delay), a `: keep-alive` comment after a long silence so proxies
// and clients do not time an idle stream out, backpressure honoured (a slow client slows the relay
// instead of buffering a whole answer in memory), and an error event that always starts on an event
// boundary so a stream cut mid-event still ends in a parsable error.
import type { ServerResponse } from 'node:http';

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // nginx and similar proxies buffer responses unless told not to.
  'x-accel-buffering': 'no',
};

export const HEARTBEAT_MS = 15_000;
const HEARTBEAT = Buffer.from(': keep-alive\n\n');
const DONE = Buffer.from('data: [DONE]\n\n');

export interface SseWriterOptions {
  /** Silence after which a comment line is sent (default 15 s). */
  heartbeatMs?: number;
  /** Extra response headers. */
  headers?: Record<string, string>;
}

/** Node's own (undocumented, long-standing) switch for chunked framing of an outgoing message. */
type ChunkedResponse = ServerResponse & { chunkedEncoding: boolean };

export class SseWriter {
  private readonly heartbeatMs: number;
  private lastWrite = 0;
  private timer: NodeJS.Timeout | null = null;
  /** False while the last bytes written ended inside an event (relayed upstream bytes). */
  private boundary = true;
  private closed = false;
  /** Flushes the headers alone unless an event carried them first. */
  private headerFlush: NodeJS.Immediate | null;
  /** True once the headers went out with a write (or on their own): later events may go to the socket. */
  private headersOut = false;
  /** True when this writer does the response's chunked framing itself (see the constructor). */
  private readonly framed: boolean;

  constructor(
    private readonly res: ServerResponse,
    options: SseWriterOptions = {},
  ) {
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    res.writeHead(200, { ...SSE_HEADERS, ...(options.headers ?? {}) });
    // Node frames a chunked body with four socket writes per res.write (size, CRLF, data, CRLF), each
    // through the Writable machinery, then one writev; relaying ~20 events a stream at thousands of
    // streams a second, that was a large share of the relay's cost. Once writeHead has chosen chunked
    // encoding (an HTTP/1.1 client), write() frames each event into one buffer and has Node pass it
    // through as is; every other write and the end (heartbeats, an error path's res.end()) keep Node's
    // own framing and last-chunk marker. An HTTP/1.0 client gets no chunking at all.
    this.framed = (res as ChunkedResponse).chunkedEncoding === true;
    // A relayed upstream's first chunk usually arrives with its headers: written together they cost one
    // write (and one wake-up of the client) instead of two. Otherwise the headers go out on their own
    // once this turn's I/O callbacks have run, still before any wait on the upstream.
    this.headerFlush = setImmediate(() => {
      this.headerFlush = null;
      if (!this.open) return;
      res.flushHeaders();
      this.headersOut = true;
    });
    this.lastWrite = Date.now();
    this.schedule(this.heartbeatMs);
    res.once('close', () => this.stop());
  }

  /** True while the client is still there. */
  get open(): boolean {
    return !this.closed && !this.res.destroyed && !this.res.writableEnded;
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => this.beat(), ms);
    this.timer.unref();
  }

  private beat(): void {
    if (!this.open) return;
    const idle = Date.now() - this.lastWrite;
    // Only between events: a comment inside a half-relayed line would corrupt it.
    if (idle >= this.heartbeatMs && this.boundary) {
      this.res.write(HEARTBEAT);
      this.lastWrite = Date.now();
      this.schedule(this.heartbeatMs);
    } else {
      this.schedule(Math.max(10, this.heartbeatMs - idle));
    }
  }

  private stop(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.cancelHeaderFlush();
  }

  private cancelHeaderFlush(): void {
    if (this.headerFlush === null) return;
    clearImmediate(this.headerFlush);
    this.headerFlush = null;
  }

  /**
   * Writes bytes as they are (relay of an upstream's own SSE). Returns a promise only when the client
   * is slower than the upstream (backpressure), so the common path allocates nothing.
   */
  write(bytes: Buffer | string): Promise<void> | undefined {
    if (!this.open) return undefined;
    if (this.headerFlush !== null) this.cancelHeaderFlush(); // the headers go with these bytes
    this.lastWrite = Date.now();
    const length = bytes.length;
    if (length > 0) {
      const last = typeof bytes === 'string' ? bytes.charCodeAt(length - 1) : bytes[length - 1];
      this.boundary = last === 10;
    }
    let flowing: boolean;
    let drains: NodeJS.EventEmitter = this.res;
    const socket = this.res.socket;
    if (this.framed && this.headersOut && socket !== null && !socket.destroyed) {
      // The headers are on the socket: a framed event goes straight to it. Through res.write, every
      // write corks the socket and uncorks it on the next tick (Node's batching of a response's
      // writes): a Writable buffering round and a tick per chunk, for one buffer complete already.
      // Order holds: Node's own writes (heartbeats, the end) go to the same socket.
      flowing = socket.write(chunkFrame(bytes));
      drains = socket;
    } else if (this.framed) {
      const res = this.res as ChunkedResponse;
      res.chunkedEncoding = false;
      try {
        flowing = res.write(chunkFrame(bytes));
      } finally {
        res.chunkedEncoding = true;
      }
      this.headersOut = true;
    } else flowing = this.res.write(bytes);
    if (flowing) return undefined;
    return new Promise((resolve) => {
      const done = (): void => {
        drains.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      drains.on('drain', done);
      this.res.on('close', done);
    });
  }

  /** One event: `event:` line (when named), `id:` line (when given), one `data:` line per line of data. */
  event(data: string, event?: string, id?: string | number): Promise<void> | undefined {
    let frame = '';
    if (event !== undefined) frame += `event: ${event}\n`;
    if (id !== undefined) frame += `id: ${id}\n`;
    frame += data.includes('\n') ? `data: ${data.split('\n').join('\ndata: ')}\n\n` : `data: ${data}\n\n`;
    return this.write(frame);
  }

  /** The chat-completions terminator. */
  done(): Promise<void> | undefined {
    return this.write(DONE);
  }

  /** Ends a stream with an error event; starts a fresh event when the relay stopped mid-event. */
  fail(data: string, event?: string): void {
    if (!this.open) return;
    if (!this.boundary) void this.write('\n\n');
    void this.event(data, event);
  }

  end(): void {
    this.stop();
    if (!this.res.writableEnded) this.res.end();
  }
}

/** One HTTP/1.1 chunk (RFC 9112 §7.1): size in hex, CRLF, the data, CRLF; an empty write stays empty. */
export function chunkFrame(bytes: Buffer | string): Buffer {
  const size = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
  if (size === 0) return EMPTY;
  const hex = size.toString(16);
  const frame = Buffer.allocUnsafe(hex.length + size + 4);
  let at = frame.write(hex, 0, 'latin1');
  frame[at++] = 13;
  frame[at++] = 10;
  at += typeof bytes === 'string' ? frame.write(bytes, at, 'utf8') : bytes.copy(frame, at);
  frame[at++] = 13;
  frame[at] = 10;
  return frame;
}

const EMPTY = Buffer.alloc(0);
