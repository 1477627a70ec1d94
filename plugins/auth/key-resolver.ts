// Resolves key hashes to principals through a cache. Revocation reaches every process within about
// two poll intervals: each process polls store.keys.revokedSince every `revocationPollMs` and evicts
// the revoked ids, and while polling is failing (store unreachable) cached principals are not trusted
// beyond that window: lookups go back to the store.
import type { Logger } from 'winston';
import { errorFields } from '../../src/log/logger';
import type { KeyRepository } from '../../src/store/port';
import type { Principal } from '../../src/store/types';
import { KeyCache } from './key-cache';

export interface KeyResolverOptions {
  cacheSize: number;
  /** How long a resolved key is served from memory (revocations evict it sooner). */
  cacheTtlMs: number;
  /** How long an unknown or revoked key is remembered (a key created meanwhile works after this). */
  negativeTtlMs: number;
  revocationPollMs: number;
  now?: () => number;
}

/** Revocations stamped by another process's clock may land slightly in the past: poll with overlap. */
const POLL_OVERLAP_MS = 5_000;

export class KeyResolver {
  /** Keys that resolved to a principal. */
  private readonly cache: KeyCache;
  /**
   * Keys that did not (unknown or revoked), apart: anyone can send any number of random keys, and in
   * one shared LRU they would evict every valid key, sending each valid caller back to the store.
   */
  private readonly unknown: KeyCache;
  private readonly inflight = new Map<string, Promise<Principal | null>>();
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout;
  private since: number;
  private lastPollOkAt: number;
  private polling: Promise<void> | null = null;
  private pollFailing = false;

  constructor(
    private readonly keys: KeyRepository,
    private readonly logger: Logger,
    private readonly options: KeyResolverOptions,
  ) {
    this.cache = new KeyCache(options.cacheSize);
    this.unknown = new KeyCache(options.cacheSize);
    this.now = options.now ?? Date.now;
    this.since = this.now() - POLL_OVERLAP_MS;
    this.lastPollOkAt = this.now();
    this.timer = setInterval(() => void this.poll(), options.revocationPollMs);
    this.timer.unref();
  }

  /** Cached resolution without I/O: a Principal, null (known bad key), or undefined (ask the store). */
  cached(hash: string): Principal | null | undefined {
    const now = this.now();
    const principal = this.cache.get(hash, now);
    if (principal === undefined) return this.unknown.get(hash, now);
    // While revocation polling is stale, a cached principal could be revoked: re-check in the store.
    if (principal && now - this.lastPollOkAt > this.options.revocationPollMs * 2) return undefined;
    return principal;
  }

  /** Resolves through the store; concurrent lookups of one hash share a single query. */
  resolve(hash: string): Promise<Principal | null> {
    const running = this.inflight.get(hash);
    if (running) return running;
    const lookup = this.keys
      .resolve(hash)
      .then((resolved) => {
        const now = this.now();
        // An expired key is refused like a revoked one; a valid one is cached no longer than it lasts.
        const expiresAt = resolved?.key.expiresAt ? Date.parse(resolved.key.expiresAt) : Infinity;
        const principal: Principal | null =
          resolved && expiresAt > now
            ? Object.freeze({
                orgId: resolved.key.orgId,
                userId: resolved.user.id,
                keyId: resolved.key.id,
                role: resolved.user.role,
                groups: Object.freeze([...resolved.groups]) as string[],
                models: resolved.key.models === null ? null : Object.freeze([...resolved.key.models]),
                // The key's token and cost budgets, for the budgets plugin (none: no lookup per call).
                keyBudgets: Object.freeze([...resolved.key.budgets]),
              })
            : null;
        if (principal) {
          this.unknown.delete(hash);
          this.cache.set(hash, principal, Math.min(now + this.options.cacheTtlMs, expiresAt));
        } else {
          this.cache.delete(hash);
          this.unknown.set(hash, null, this.now() + this.options.negativeTtlMs);
        }
        return principal;
      })
      .finally(() => this.inflight.delete(hash));
    this.inflight.set(hash, lookup);
    return lookup;
  }

  /** Drops a key's cached resolution at once (a revocation made by this process). */
  evict(keyId: string): void {
    this.cache.evictKeyId(keyId);
  }

  /** One revocation poll (skipped while the previous one is still running). */
  poll(): Promise<void> {
    this.polling ??= this.pollOnce().finally(() => {
      this.polling = null;
    });
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    const startedAt = this.now();
    try {
      const revoked = await this.keys.revokedSince(new Date(this.since).toISOString());
      for (const keyId of revoked) this.cache.evictKeyId(keyId);
      this.since = startedAt - POLL_OVERLAP_MS;
      this.lastPollOkAt = startedAt;
      if (this.pollFailing) this.logger.info('key revocation polling recovered', { plugin: 'auth' });
      this.pollFailing = false;
    } catch (err) {
      // Logged once per outage; meanwhile cached principals are re-checked in the store (see cached()).
      if (!this.pollFailing) this.logger.warn('key revocation polling failed', { plugin: 'auth', ...errorFields(err) });
      this.pollFailing = true;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.polling;
    this.cache.clear();
    this.unknown.clear();
  }
}
