import type { Logger } from 'winston';
import { errorFields } from '../../src/log/logger';
import type { KeyRepository } from '../../src/store/port';

/** Collects the ids of keys used and records lastUsedAt for all of them at once, off the request path. */
export class TouchBatcher {
  private pending = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly keys: KeyRepository,
    private readonly logger: Logger,
    intervalMs: number,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  add(keyId: string): void {
    this.pending.add(keyId);
  }

  flush(): Promise<void> {
    if (this.pending.size === 0) return this.flushing;
    const ids = [...this.pending];
    this.pending = new Set();
    const at = new Date().toISOString();
    this.flushing = this.flushing
      .then(() => this.keys.touch(ids, at))
      .catch((err: unknown) => {
        this.logger.warn('recording key last use failed', { plugin: 'auth', count: ids.length, ...errorFields(err) });
      });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
