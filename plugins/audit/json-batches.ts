// Buffers finished calls' records and writes them in batches off the request path: when `batchSize`
// calls are waiting, or every `flushIntervalMs`. Records are kept as JSON text in Buffers (memory
// outside the V8 heap) from the moment a call ends: held as objects, every record lived through one or
// two scavenges while its batch filled and was promoted to the old generation, the largest share of
// the bytes promoted under load once requests stopped carrying an AbortController (sampling heap
// profiler). A failed write keeps its batch, in order, for the next flush; past `maxBuffered` calls
// the oldest batches are dropped (and counted in the log) rather than growing without bound while the
// store is down.
import type { Logger } from 'winston';
import { errorFields } from '../../src/log/logger';
import type { RecordsJson } from '../../src/store/port';

const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** A JSON array built item by item in a Buffer that grows by doubling. */
export class JsonArrayBuilder {
  private bytes: Buffer;
  private length = 1;
  count = 0;

  /** `start`: a Buffer to write into (e.g. one recycled from a written batch), or the size of a new one. */
  constructor(start: Buffer | number = 16 * 1024) {
    // allocUnsafeSlow: a Buffer of its own, not a slice of Node's shared pool (kept until written).
    this.bytes = typeof start === 'number' ? Buffer.allocUnsafeSlow(Math.max(16, start)) : start;
    this.bytes[0] = OPEN_BRACKET;
  }

  /** The whole Buffer written into (to recycle once the array's text is no longer needed). */
  get backing(): Buffer {
    return this.bytes;
  }

  /** Appends one item, already JSON text. */
  push(json: string): void {
    // Room for the item, a comma and the closing bracket. UTF-8 takes at most 3 bytes per UTF-16 code
    // unit: the exact length is measured only when that worst case would not fit.
    if (this.length + json.length * 3 + 2 > this.bytes.length) {
      const needed = this.length + Buffer.byteLength(json) + 2;
      if (needed > this.bytes.length) {
        const grown = Buffer.allocUnsafeSlow(Math.max(needed, this.bytes.length * 2));
        this.bytes.copy(grown, 0, 0, this.length);
        this.bytes = grown;
      }
    }
    if (this.count > 0) this.bytes[this.length++] = COMMA;
    this.length += this.bytes.write(json, this.length, 'utf8');
    this.count++;
  }

  /** The array's text (`[...]`); the builder is not used after this. */
  finish(): Buffer {
    this.bytes[this.length] = CLOSE_BRACKET;
    return this.bytes.subarray(0, this.length + 1);
  }
}

/** One batch: up to `batchSize` calls' audit and usage records. */
class OpenBatch {
  readonly audit: JsonArrayBuilder;
  readonly usage: JsonArrayBuilder;
  calls = 0;

  constructor(audit: Buffer | number, usage: Buffer | number) {
    this.audit = new JsonArrayBuilder(audit);
    this.usage = new JsonArrayBuilder(usage);
  }

  seal(): SealedBatch {
    const json = { audit: this.audit.finish(), usage: this.usage.finish() };
    return { json, calls: this.calls, backing: [this.audit.backing, this.usage.backing] };
  }
}

interface SealedBatch {
  json: RecordsJson;
  calls: number;
  /** The Buffers the texts live in, recycled for a later batch once this one is written. */
  backing: [Buffer, Buffer];
}

/** Written batches' Buffers kept for reuse: a steady stream of batches allocates no new memory. */
const SPARE_PAIRS = 2;

export interface JsonBatchWriterOptions {
  write(batch: RecordsJson): Promise<void>;
  /** Calls per write. */
  batchSize: number;
  flushIntervalMs: number;
  /** Calls kept while the store is failing; beyond this the oldest batches are dropped. */
  maxBuffered: number;
  logger: Logger;
  /** Told the number of buffered calls whenever a batch is sealed, written or dropped. */
  onPending?: (calls: number) => void;
}

export class JsonBatchWriter {
  private readonly spare: [Buffer, Buffer][] = [];
  private open = this.newBatch();
  private readonly sealed: SealedBatch[] = [];
  private sealedCalls = 0;
  private readonly timer: NodeJS.Timeout;
  private writing: Promise<boolean> | null = null;
  private failing = false;

  /** A batch never holds more calls than may be buffered (so dropping whole batches keeps the bound). */
  private readonly batchSize: number;

  constructor(private readonly options: JsonBatchWriterOptions) {
    this.batchSize = Math.max(1, Math.min(options.batchSize, options.maxBuffered));
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs);
    this.timer.unref();
  }

  /** Calls recorded and not yet written. */
  get pending(): number {
    return this.sealedCalls + this.open.calls;
  }

  /** One finished call: its audit record (null when excluded) and usage records, each as JSON text. */
  add(auditJson: string | null, usageJson: readonly string[]): void {
    const open = this.open;
    if (auditJson !== null) open.audit.push(auditJson);
    for (const json of usageJson) open.usage.push(json);
    open.calls++;
    if (open.calls >= this.batchSize) {
      this.seal();
      if (this.writing === null) void this.flush();
    }
  }

  private newBatch(): OpenBatch {
    const pair = this.spare.pop();
    return pair ? new OpenBatch(pair[0], pair[1]) : new OpenBatch(64 * 1024, 16 * 1024);
  }

  private recycle(batch: SealedBatch): void {
    if (this.spare.length < SPARE_PAIRS) this.spare.push(batch.backing);
  }

  private seal(): void {
    if (this.open.calls === 0) return;
    const batch = this.open.seal();
    this.open = this.newBatch();
    this.sealed.push(batch);
    this.sealedCalls += batch.calls;
    let dropped = 0;
    while (this.sealedCalls > this.options.maxBuffered) {
      const oldest = this.sealed.shift()!;
      this.sealedCalls -= oldest.calls;
      dropped += oldest.calls;
    }
    if (dropped > 0) this.options.logger.error('write buffer full: dropped the oldest records', { plugin: 'audit', component: 'audit', count: dropped });
    this.options.onPending?.(this.pending);
  }

  /** Writes what is buffered now, batch by batch, oldest first (a flush during a write waits for it). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    this.seal();
    while (this.sealed.length > 0) {
      const batch = this.sealed[0]!;
      this.writing = this.write(batch).finally(() => {
        this.writing = null;
      });
      if (!(await this.writing)) return; // failed: kept for the next flush
    }
  }

  /** Never rejects: resolves false when the batch stays queued for a retry. */
  private async write(batch: SealedBatch): Promise<boolean> {
    try {
      await this.options.write(batch.json);
      // Still first: nothing else removes batches while a write is in flight except an overflow drop.
      if (this.sealed[0] === batch) {
        this.sealed.shift();
        this.sealedCalls -= batch.calls;
      }
      // The store is done with the texts (node-postgres copied them into its own write buffer).
      this.recycle(batch);
      this.options.onPending?.(this.pending);
      if (this.failing) this.options.logger.info('writes recovered', { plugin: 'audit', component: 'audit' });
      this.failing = false;
      return true;
    } catch (err) {
      if (!this.failing)
        this.options.logger.error('batch write failed; will retry', { plugin: 'audit', component: 'audit', count: batch.calls, ...errorFields(err) });
      this.failing = true;
      return false;
    }
  }

  /** Stops the timer and writes everything buffered (shutdown: nothing accepted is lost). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    for (let attempt = 0; this.pending > 0 && attempt < 3;) {
      const before = this.pending;
      await this.flush();
      if (this.pending >= before) attempt++; // a failed write: retry a couple of times, then give up
    }
    if (this.pending > 0) {
      this.options.logger.error('records lost at shutdown: the store did not accept them', { plugin: 'audit', component: 'audit', count: this.pending });
    }
  }
}
