// The leases of the responses this process is generating. A streaming response is created with a lease
// (leaseFor), held while it streams (hold) and released when finished (release); every third of the
// lease one store write renews all held leases. A process that dies stops renewing: its responses'
// leases lapse and the lapsed-lease sweeper of any gateway marks them failed. The lease length is
// queue.leaseSeconds, the same hold a worker has on a run.
import type { Logger } from 'winston';
import type { ResponseRepository } from '../store/port';
import type { ResponseLease } from '../store/types';

export interface ResponseLeasesOptions {
  responses: Pick<ResponseRepository, 'renewLeases'>;
  /** This process (host, pid, random part): the run engine's owner id. */
  owner: string;
  leaseMs: number;
  now(): Date;
  logger: Logger;
}

export class ResponseLeases {
  private readonly held = new Map<string, (() => void) | undefined>();
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> | null = null;

  constructor(private readonly options: ResponseLeasesOptions) {}

  get owner(): string {
    return this.options.owner;
  }

  /** The lease to create a response with (ResponseRecord.lease), held from now on: see hold(). */
  leaseFor(): ResponseLease {
    return { owner: this.options.owner, until: this.until() };
  }

  /**
   * Renews the response's lease until release(). `onLost` is called if a renewal finds it is no longer
   * this process's (the sweeper marked it failed, e.g. after the store was unreachable for a lease):
   * the writer should stop, its finish() would be refused anyway.
   */
  hold(responseId: string, onLost?: () => void): void {
    this.held.set(responseId, onLost);
    if (!this.timer) {
      this.timer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.options.leaseMs / 3)));
      this.timer.unref();
    }
  }

  release(responseId: string): void {
    this.held.delete(responseId);
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** Renews every held lease in one write; never rejects (a failed renewal is retried next tick). */
  renew(): Promise<void> {
    this.renewing ??= this.renewHeld().finally(() => {
      this.renewing = null;
    });
    return this.renewing;
  }

  close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.held.clear();
    return this.renewing ?? Promise.resolve();
  }

  private until(): string {
    return new Date(this.options.now().getTime() + this.options.leaseMs).toISOString();
  }

  private async renewHeld(): Promise<void> {
    const ids = [...this.held.keys()];
    if (ids.length === 0) return;
    try {
      const renewed = new Set(await this.options.responses.renewLeases(ids, this.options.owner, this.until()));
      for (const id of ids) {
        if (renewed.has(id) || !this.held.has(id)) continue;
        // Not renewed: finished meanwhile (released a moment later) or taken from us by the sweeper.
        const onLost = this.held.get(id);
        this.release(id);
        try {
          onLost?.();
        } catch (err) {
          this.options.logger.warn('response lease: onLost failed', { component: 'response-leases', responseId: id, errorName: errorName(err) });
        }
      }
    } catch (err) {
      this.options.logger.warn('response lease renewal failed; retrying', { component: 'response-leases', count: ids.length, errorName: errorName(err) });
    }
  }
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : 'unknown';
}
