// The bytes of one upstream reply, handed over by undici's dispatch handler (transport.ts): no Readable
// stream per reply (each chunk would pay a push, a buffer round, an event and a nextTick before anyone
// saw it). Two modes. As an async iterator: one settled promise per chunk; the connection is paused
// while HIGH_WATER_CHUNKS wait unread. Pushed (forEach): each chunk goes to the consumer inside the
// handler's callback, one promise per reply; the connection is paused while the consumer's promise (its
// backpressure) is pending. Stopping early (client gone, caller done) closes the connection instead of
// reading the rest. A reply is bounded: a non-streamed body by its total size, an SSE stream by its
// longest line (an upstream that never ends a line must not grow our memory without end).
import type { Dispatcher } from 'undici';
import { GatewayError } from '../../http/errors';
import { errorCode } from './upstream-errors';

/** What a chunk consumer returns: nothing to go on, a promise to pause the reply until it settles, or STOP_READING. */
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

/** How a reply is bounded: its total size, or (SSE) the length of its longest line. */
export interface ReplyLimit {
  kind: 'total' | 'line';
  bytes: number;
}

/** Maps a failure while reading a reply body to the caller's error (an abort stays an abort). */
function bodyError(err: unknown, providerName: string, idleMs: number): unknown {
  if (err instanceof GatewayError || (err as { name?: string }).name === 'AbortError') return err;
  if (errorCode(err) === 'UND_ERR_BODY_TIMEOUT') {
    return new GatewayError('upstream_timeout', `Upstream provider ${providerName} went silent for ${idleMs} ms mid-reply.`, { cause: err });
  }
  return new GatewayError('upstream_error', `Upstream provider ${providerName} broke off the reply.`, { cause: err });
}

const LF = 10;
const CR = 13;

/** Chunks buffered before the reply is paused (the consumer is slower than the upstream). */
const HIGH_WATER_CHUNKS = 16;

/** The reason a reply's connection is closed when its consumer stopped reading. */
const DISCARDED = Object.assign(new Error('The rest of the reply was not needed.'), { name: 'AbortError' });

export class ReplyBody implements UpstreamBody, AsyncIterableIterator<Buffer> {
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
    private readonly controller: Dispatcher.DispatchController,
    private readonly providerName: string,
    private readonly idleMs: number,
    private readonly limit: ReplyLimit,
  ) {}

  /** Bytes counted against the limit: the whole reply, or the SSE line not yet ended. */
  private counted = 0;

  /** From the handler: the next chunk of the reply. */
  chunk(chunk: Buffer): void {
    if (this.ended || this.failure !== null) return;
    if (this.overLimit(chunk)) return;
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

  private overLimit(chunk: Buffer): boolean {
    const limit = this.limit;
    if (limit.kind === 'total') this.counted += chunk.length;
    else {
      const lineEnd = Math.max(chunk.lastIndexOf(LF), chunk.lastIndexOf(CR));
      this.counted = lineEnd < 0 ? this.counted + chunk.length : chunk.length - lineEnd - 1;
    }
    if (this.counted <= limit.bytes) return false;
    const what = limit.kind === 'total' ? 'a reply' : 'a stream line';
    this.fail(new GatewayError('upstream_error', `Upstream provider ${this.providerName} sent ${what} longer than ${limit.bytes} bytes.`));
    this.controller.abort(DISCARDED);
    return true;
  }

  /** From the handler: the reply is complete. */
  complete(): void {
    if (this.ended) return;
    this.ended = true;
    this.settle();
  }

  /** From the handler: the connection failed, timed out or was aborted mid-reply. */
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
