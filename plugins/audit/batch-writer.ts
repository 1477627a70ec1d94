// Buffers records and writes them in batches off the request path: when `batchSize` are waiting, or
// every `flushIntervalMs`. A failed write is retried with the next flush; past `maxBuffered` the oldest
// records are dropped (and counted in the log) rather than growing without bound while the store is down.
import type { Logger } from 'winston';
import { errorFields } from '../../src/log/logger';

export interface BatchWriterOptions<T> {
  /** Name in log lines. */
  name: string;
  write(records: readonly T[]): Promise<void>;
  batchSize: number;
  flushIntervalMs: number;
  maxBuffered: number;
  logger: Logger;
}

export class BatchWriter<T> {
  private buffer: T[] = [];
  private readonly timer: NodeJS.Timeout;
  private writing: Promise<void> | null = null;
  private failing = false;

  constructor(private readonly options: BatchWriterOptions<T>) {
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs);
    this.timer.unref();
  }

  get pending(): number {
    return this.buffer.length;
  }

  add(record: T): void {
    this.buffer.push(record);
    if (this.buffer.length > this.options.maxBuffered) {
      const dropped = this.buffer.length - this.options.maxBuffered;
      this.buffer.splice(0, dropped);
      this.options.logger.error('write buffer full: dropped the oldest records', { plugin: 'audit', component: this.options.name, count: dropped });
    }
    if (this.buffer.length >= this.options.batchSize && this.writing === null) void this.flush();
  }

  /** Writes what is buffered now (one batch at a time; a flush during a write waits for it). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.buffer.length === 0) return;
    const batch = this.buffer.splice(0, this.options.batchSize);
    this.writing = this.write(batch).finally(() => {
      this.writing = null;
    });
    await this.writing;
  }

  /** Never rejects: a failed batch goes back to the front of the buffer for the next flush. */
  private async write(batch: T[]): Promise<void> {
    try {
      await this.options.write(batch);
      if (this.failing) this.options.logger.info('writes recovered', { plugin: 'audit', component: this.options.name });
      this.failing = false;
    } catch (err) {
      this.buffer.unshift(...batch);
      if (!this.failing)
        this.options.logger.error('batch write failed; will retry', {
          plugin: 'audit',
          component: this.options.name,
          count: batch.length,
          ...errorFields(err),
        });
      this.failing = true;
    }
  }

  /** Stops the timer and writes everything buffered (shutdown: nothing accepted is lost). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    for (let attempt = 0; this.buffer.length > 0 && attempt < 3;) {
      const before = this.buffer.length;
      await this.flush();
      if (this.buffer.length >= before) attempt++; // a failed write: retry a couple of times, then give up
    }
    if (this.buffer.length > 0) {
      this.options.logger.error('records lost at shutdown: the store did not accept them', {
        plugin: 'audit',
        component: this.options.name,
        count: this.buffer.length,
      });
    }
  }
}
