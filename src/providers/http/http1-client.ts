// The HTTP/1.1 client under the upstream transport: keep-alive connection pools per origin over
// node:net / node:tls, one request per connection at a time, connect / first-byte / idle timeouts,
// and reply bytes handed to a handler straight from the socket's reads.
//
// Why not undici (which this replaced): relaying a stream, every chunk went through undici's socket
// 'readable' round (a nextTick, a read() call), a copy into its WebAssembly parser's memory and a
// callback back out, ~11 µs a chunk on the bench machine on top of the ~18 µs a socket read costs
// at all; at 20 chunks a stream that was the largest share of the gateway's own per-stream cost.
// Here a chunk is parsed where it was read (its framing is a few bytes) and its data passed on.

import net from 'node:net';
import tls from 'node:tls';
import type { LookupFunction } from 'node:net';
import { ResponseParser, type ResponseEvents, type ResponseHead, type ResponseHeaders } from './http1-response-parser';

export interface Http1Request {
  method: string;
  /** Path and query. */
  path: string;
  /** Lowercase names; host, content-length, transfer-encoding and connection are the client's own. */
  headers: Readonly<Record<string, string>>;
  body: string | Buffer | null;
  /** From the request's first byte sent to the response head's last byte. */
  headersTimeoutMs: number;
  /** Longest silence between body bytes (not counted while the handler has paused the reply). */
  bodyTimeoutMs: number;
}

/** One request's handle for its handler: effective until the exchange ends, a no-op after. */
export interface Http1Controller {
  pause(): void;
  resume(): void;
  abort(reason: Error): void;
}

export interface Http1Handler {
  /** Before anything is sent; the handler may abort at once. */
  onRequestStart(controller: Http1Controller): void;
  /** The final response head (1xx heads are skipped). */
  onResponseStart(controller: Http1Controller, status: number, headers: ResponseHeaders): void;
  onResponseData(controller: Http1Controller, chunk: Buffer): void;
  onResponseEnd(controller: Http1Controller): void;
  /** Any failure before the end; exactly one of onResponseEnd / onResponseError is called. */
  onResponseError(controller: Http1Controller, err: Error): void;
}

export type Http1ErrorCode =
  'UPSTREAM_CONNECT_TIMEOUT' | 'UPSTREAM_HEADERS_TIMEOUT' | 'UPSTREAM_BODY_TIMEOUT' | 'UPSTREAM_SOCKET_CLOSED' | 'UPSTREAM_CLIENT_CLOSED';

export class Http1Error extends Error {
  constructor(
    readonly code: Http1ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'Http1Error';
  }
}

export interface Http1AgentOptions {
  connectTimeoutMs: number;
  /** Longest an idle connection is kept for reuse (shortened by the server's keep-alive hint). */
  keepAliveMs: number;
  /** DNS resolution for connections (the SSRF guard); Node's default when absent. */
  lookup?: LookupFunction;
  /** Certificates trusted for https origins instead of Node's bundled CAs (tests, a private CA). */
  ca?: string | Buffer;
}

/** An idle connection is given up this long before the server's announced keep-alive timeout (undici's margin). */
const KEEP_ALIVE_MARGIN_MS = 2000;
/** Idle connections kept per origin; more are closed as they come back. */
const MAX_IDLE_PER_ORIGIN = 512;
const SAFE_HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const UNSAFE_HEADER_VALUE = /[\0\r\n]/;
/** Header names the client writes itself: a caller's copy would contradict the framing. */
const CLIENT_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);

/**
 * Every upstream socket reads into this one buffer (node:net's `onread`): no Readable stream round, no
 * 64 KiB allocation shrunk to size, per read (~3 µs of ~18 a read on the bench machine). Reads are
 * handled one at a time, synchronously, and nothing keeps a view of it: the parser copies a partial
 * head, the connection copies body bytes (small copies come from Node's buffer pool) and held bytes.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** Header objects already checked (providers send the same few objects on every request). */
const checkedHeaders = new WeakSet<object>();

function headerBlock(headers: Readonly<Record<string, string>>): string {
  let block = '';
  const check = !checkedHeaders.has(headers);
  for (const name in headers) {
    const value = headers[name]!;
    if (check && (!SAFE_HEADER_NAME.test(name) || UNSAFE_HEADER_VALUE.test(value))) {
      throw new TypeError(`invalid upstream request header ${JSON.stringify(name)}`);
    }
    if (CLIENT_HEADERS.has(name.toLowerCase())) continue;
    block += `${name}: ${value}\r\n`;
  }
  if (check) checkedHeaders.add(headers);
  return block;
}

export class Http1Agent {
  private readonly pools = new Map<string, OriginPool>();
  private closed = false;

  constructor(private readonly options: Http1AgentOptions) {}

  /** Sends `request` to `origin` (`http://host:port` or `https://...`); the outcome goes to `handler`. */
  dispatch(origin: string, request: Http1Request, handler: Http1Handler): void {
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new OriginPool(origin, this.options);
      this.pools.set(origin, pool);
    }
    const exchange = new Exchange(handler);
    if (this.closed) {
      exchange.done = true;
      handler.onResponseError(exchange, new Http1Error('UPSTREAM_CLIENT_CLOSED', 'The upstream client is closed.'));
      return;
    }
    handler.onRequestStart(exchange);
    if (exchange.done) return; // aborted before anything was sent
    let head: string;
    try {
      head = `${request.method} ${request.path} HTTP/1.1\r\nhost: ${pool.hostHeader}\r\n${headerBlock(request.headers)}`;
    } catch (err) {
      exchange.done = true;
      handler.onResponseError(exchange, err as Error);
      return;
    }
    pool.acquire().start(exchange, request, head);
  }

  /** Closes idle connections now and busy ones when their exchange ends; later dispatches fail. */
  close(): Promise<void> {
    this.closed = true;
    for (const pool of this.pools.values()) pool.close();
    return Promise.resolve();
  }
}

class OriginPool {
  readonly hostHeader: string;
  private readonly host: string;
  private readonly port: number;
  private readonly secure: boolean;
  /** Idle connections, most recently used last (reused first: the least likely to have been closed). */
  private readonly idle: Connection[] = [];
  closed = false;

  constructor(
    origin: string,
    readonly options: Http1AgentOptions,
  ) {
    const url = new URL(origin);
    this.secure = url.protocol === 'https:';
    this.host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    this.port = url.port ? Number(url.port) : this.secure ? 443 : 80;
    this.hostHeader = url.host;
  }

  acquire(): Connection {
    const idle = this.idle;
    while (idle.length > 0) {
      const connection = idle.pop()!;
      if (connection.reusable()) return connection;
      connection.destroy();
    }
    return new Connection(this);
  }

  /** A new socket whose reads go to `onRead` (see READ_BUFFER). */
  connect(onRead: (length: number, buffer: Buffer) => boolean): net.Socket {
    const lookup = this.options.lookup;
    const onread = { buffer: READ_BUFFER, callback: onRead };
    if (this.secure) {
      // tls.connect takes `onread` like net.connect (Node's docs and tests), though @types/node omits it.
      return tls.connect({
        host: this.host,
        port: this.port,
        ...(net.isIP(this.host) === 0 ? { servername: this.host } : {}),
        ALPNProtocols: ['http/1.1'],
        onread,
        ...(lookup ? { lookup } : {}),
        ...(this.options.ca !== undefined ? { ca: this.options.ca } : {}),
      } as tls.ConnectionOptions);
    }
    return net.connect({ host: this.host, port: this.port, onread, ...(lookup ? { lookup } : {}) });
  }

  release(connection: Connection, keepForMs: number): void {
    if (this.closed || this.idle.length >= MAX_IDLE_PER_ORIGIN || keepForMs <= 0) {
      connection.destroy();
      return;
    }
    connection.idleUntil(keepForMs);
    this.idle.push(connection);
  }

  forget(connection: Connection): void {
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
  }

  close(): void {
    this.closed = true;
    for (const connection of this.idle.splice(0)) connection.destroy();
  }
}

/** One request on one connection; the handler's controller. */
class Exchange implements Http1Controller {
  done = false;
  connection: Connection | null = null;

  constructor(readonly handler: Http1Handler) {}

  pause(): void {
    if (!this.done) this.connection?.pause();
  }

  resume(): void {
    if (!this.done) this.connection?.resume();
  }

  abort(reason: Error): void {
    if (this.done) return;
    const connection = this.connection;
    if (connection) connection.fail(reason);
    else {
      this.done = true;
      this.handler.onResponseError(this, reason);
    }
  }
}

const enum Phase {
  Idle,
  Head,
  Body,
}

class Connection implements ResponseEvents {
  private readonly parser = new ResponseParser(this);
  private exchange: Exchange | null = null;
  private phase = Phase.Idle;
  private connected = false;
  private connectTimer: NodeJS.Timeout | null = null;
  /** The head or body timeout of the current exchange (re-armed lazily: a chunk only stamps lastData). */
  private timer: NodeJS.Timeout | null = null;
  private lastData = 0;
  private bodyTimeoutMs = 0;
  private paused = false;
  /** The socket's reading is stopped (pause() may outlive its exchange: it is undone at the next start). */
  private socketPaused = false;
  /** Bytes read but not yet parsed because the handler paused the reply mid-read. */
  private held: Buffer | null = null;
  private parsing = false;
  private keepAliveMs: number | null = null;
  private expiresAt = 0;
  private dead = false;

  private readonly socket: net.Socket;

  constructor(private readonly pool: OriginPool) {
    // true: keep reading (a paused reply pauses the socket explicitly).
    const socket = pool.connect((length, buffer) => {
      this.onData(buffer.subarray(0, length));
      return true;
    });
    this.socket = socket;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 60_000);
    const connectTimeoutMs = pool.options.connectTimeoutMs;
    this.connectTimer = setTimeout(() => {
      this.connectTimer = null;
      this.fail(new Http1Error('UPSTREAM_CONNECT_TIMEOUT', `No connection within ${connectTimeoutMs} ms.`));
    }, connectTimeoutMs);
    this.connectTimer.unref();
    socket.once(socket instanceof tls.TLSSocket ? 'secureConnect' : 'connect', () => this.onConnect());
    socket.on('end', () => this.onEnd());
    socket.on('error', (err: Error) => this.fail(err));
    socket.on('close', () => this.onClose());
    socket.on('timeout', () => this.destroy()); // set only while idle
  }

  reusable(): boolean {
    return !this.dead && !this.socket.destroyed && Date.now() < this.expiresAt;
  }

  idleUntil(keepForMs: number): void {
    this.expiresAt = Date.now() + keepForMs;
    this.socket.setTimeout(keepForMs);
    this.socket.unref();
  }

  start(exchange: Exchange, request: Http1Request, head: string): void {
    this.exchange = exchange;
    exchange.connection = this;
    this.phase = Phase.Head;
    this.paused = false;
    this.keepAliveMs = null;
    this.bodyTimeoutMs = request.bodyTimeoutMs;
    const socket = this.socket;
    socket.setTimeout(0);
    socket.ref();
    this.resumeSocket();
    this.parser.expect(request.method === 'HEAD');
    this.arm(request.headersTimeoutMs);
    const body = request.body;
    socket.cork();
    if (body === null) {
      socket.write(request.method === 'GET' ? `${head}\r\n` : `${head}content-length: 0\r\n\r\n`, 'latin1');
    } else {
      const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
      socket.write(`${head}content-length: ${length}\r\n\r\n`, 'latin1');
      socket.write(body);
    }
    socket.uncork();
  }

  private arm(ms: number): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.onTimer(), ms);
    this.timer.unref();
  }

  private onTimer(): void {
    this.timer = null;
    if (this.exchange === null) return;
    if (this.phase === Phase.Head) {
      this.fail(new Http1Error('UPSTREAM_HEADERS_TIMEOUT', 'The upstream sent no response head in time.'));
      return;
    }
    const silent = Date.now() - this.lastData;
    // A reply paused by its consumer is not a silent upstream.
    if (this.paused) this.arm(this.bodyTimeoutMs);
    else if (silent < this.bodyTimeoutMs) this.arm(this.bodyTimeoutMs - silent);
    else this.fail(new Http1Error('UPSTREAM_BODY_TIMEOUT', `The upstream went silent for ${this.bodyTimeoutMs} ms mid-reply.`));
  }

  private onConnect(): void {
    this.connected = true;
    if (this.connectTimer !== null) clearTimeout(this.connectTimer);
    this.connectTimer = null;
  }

  private onData(bytes: Buffer): void {
    if (this.exchange === null) {
      // Nothing was asked: an idle connection the server talks on is not one to reuse.
      this.destroy();
      return;
    }
    this.lastData = Date.now();
    this.parse(bytes);
  }

  private parse(bytes: Buffer): void {
    this.parsing = true;
    try {
      const stopped = this.parser.execute(bytes);
      if (stopped < bytes.length && this.exchange !== null) {
        // The read buffer is reused by the next read: what waits is copied.
        this.held = Buffer.from(bytes.subarray(stopped));
      }
    } catch (err) {
      this.fail(err as Error);
    } finally {
      this.parsing = false;
    }
    // A resume() that came while the loop ran left the socket to this point.
    if (!this.paused && this.held === null) this.resumeSocket();
  }

  pause(): void {
    this.paused = true;
    this.parser.paused = true;
    if (!this.socketPaused) {
      this.socketPaused = true;
      this.socket.pause();
    }
  }

  private resumeSocket(): void {
    if (!this.socketPaused) return;
    this.socketPaused = false;
    this.socket.resume();
  }

  resume(): void {
    this.paused = false;
    this.parser.paused = false;
    // Silence is counted from when the reply is read again, not from its last chunk before the pause.
    this.lastData = Date.now();
    if (this.parsing) return; // the parse loop in progress goes on by itself
    const held = this.held;
    if (held !== null) {
      this.held = null;
      this.parse(held);
    } else this.resumeSocket();
  }

  // Parser events, forwarded to the exchange's handler.

  onHead(head: ResponseHead): void {
    const exchange = this.exchange!;
    this.phase = Phase.Body;
    this.keepAliveMs = head.keepAliveMs;
    this.lastData = Date.now();
    this.arm(this.bodyTimeoutMs);
    exchange.handler.onResponseStart(exchange, head.status, head.headers);
  }

  onBody(bytes: Buffer): void {
    const exchange = this.exchange;
    // A copy: `bytes` is a view of the shared read buffer, and handlers may keep what they get.
    if (exchange !== null && bytes.length > 0) exchange.handler.onResponseData(exchange, Buffer.from(bytes));
  }

  onComplete(): void {
    const exchange = this.exchange;
    if (exchange === null) return;
    this.finish(exchange);
    if (this.parser.keepAlive && !this.socket.destroyed) {
      const hint = this.keepAliveMs;
      const keepFor = hint === null ? this.pool.options.keepAliveMs : Math.min(this.pool.options.keepAliveMs, hint - KEEP_ALIVE_MARGIN_MS);
      this.pool.release(this, keepFor);
    } else {
      this.destroy();
    }
    exchange.handler.onResponseEnd(exchange);
  }

  /** Ends the current exchange's bookkeeping (its handler is told by the caller). */
  private finish(exchange: Exchange): void {
    exchange.done = true;
    this.exchange = null;
    this.phase = Phase.Idle;
    this.held = null;
    this.paused = false;
    this.parser.paused = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** A failure: the exchange (if any) gets the error, the connection is closed. */
  fail(err: Error): void {
    const exchange = this.exchange;
    this.destroy();
    if (exchange === null || exchange.done) return;
    this.finish(exchange);
    exchange.handler.onResponseError(exchange, err);
  }

  private onEnd(): void {
    // The server closed its side: a body that runs to the close is complete; anything else was cut.
    if (this.exchange !== null && this.parser.endsWithConnection) {
      this.parser.finish();
      return;
    }
    this.fail(
      new Http1Error(
        'UPSTREAM_SOCKET_CLOSED',
        this.connected ? 'The upstream closed the connection.' : 'The upstream closed the connection while it was being opened.',
      ),
    );
  }

  private onClose(): void {
    this.fail(new Http1Error('UPSTREAM_SOCKET_CLOSED', 'The upstream connection closed before the response ended.'));
  }

  destroy(): void {
    if (this.dead) return;
    this.dead = true;
    if (this.connectTimer !== null) clearTimeout(this.connectTimer);
    this.connectTimer = null;
    if (this.exchange === null && this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.pool.forget(this);
    this.socket.destroy();
  }
}
