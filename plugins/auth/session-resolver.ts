// Resolves console session token hashes to principals through a cache, like KeyResolver does for keys,
// with what sessions add: a cached session is served no longer than it lives (its expiresAt), a
// sign-out in this process evicts it at once (session-revocations.ts), and other processes evict it
// on their next revocation poll (store.consoleSessions.revokedSince). While polling fails, cached
// sessions are re-checked in the store. The principal acts as the session's user: role and groups are
// read from the store with the session, never more than the user has.
import type { Logger } from 'winston';
import { onSessionRevoked } from '../../src/console/session-revocations';
import { errorFields } from '../../src/log/logger';
import type { Store } from '../../src/store/port';
import type { Principal } from '../../src/store/types';
import { KeyCache } from './key-cache';
import type { KeyResolverOptions } from './key-resolver';

/** Revocations stamped by another process's clock may land slightly in the past: poll with overlap. */
const POLL_OVERLAP_MS = 5_000;

export class SessionResolver {
  private readonly cache: KeyCache;
  /** Unknown, revoked or expired tokens, apart (a flood of random tokens cannot evict valid sessions). */
  private readonly unknown: KeyCache;
  private readonly inflight = new Map<string, Promise<Principal | null>>();
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout;
  private readonly unsubscribe: () => void;
  private since: number;
  private lastPollOkAt: number;
  private polling: Promise<void> | null = null;
  private pollFailing = false;

  constructor(
    private readonly store: Store,
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
    this.unsubscribe = onSessionRevoked(store, (sessionId) => this.cache.evictKeyId(sessionId));
  }

  /** Cached resolution without I/O: a Principal, null (known bad token), or undefined (ask the store). */
  cached(hash: string): Principal | null | undefined {
    const now = this.now();
    const principal = this.cache.get(hash, now);
    if (principal === undefined) return this.unknown.get(hash, now);
    if (principal && now - this.lastPollOkAt > this.options.revocationPollMs * 2) return undefined;
    return principal;
  }

  /** Resolves through the store; concurrent lookups of one hash share a single query. */
  resolve(hash: string): Promise<Principal | null> {
    const running = this.inflight.get(hash);
    if (running) return running;
    const now = this.now();
    const lookup = this.store.consoleSessions
      .resolve(hash, new Date(now).toISOString())
      .then((resolved) => {
        if (!resolved) {
          this.cache.delete(hash);
          this.unknown.set(hash, null, this.now() + this.options.negativeTtlMs);
          return null;
        }
        const principal: Principal = Object.freeze({
          orgId: resolved.user.orgId,
          userId: resolved.user.id,
          keyId: null,
          sessionId: resolved.session.id,
          role: resolved.user.role,
          groups: Object.freeze([...resolved.groups]) as string[],
        });
        this.unknown.delete(hash);
        // Never served from memory past the session's own expiry.
        this.cache.set(hash, principal, Math.min(this.now() + this.options.cacheTtlMs, Date.parse(resolved.session.expiresAt)));
        return principal;
      })
      .finally(() => this.inflight.delete(hash));
    this.inflight.set(hash, lookup);
    return lookup;
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
      const revoked = await this.store.consoleSessions.revokedSince(new Date(this.since).toISOString());
      for (const sessionId of revoked) this.cache.evictKeyId(sessionId);
      this.since = startedAt - POLL_OVERLAP_MS;
      this.lastPollOkAt = startedAt;
      if (this.pollFailing) this.logger.info('console session revocation polling recovered', { plugin: 'auth' });
      this.pollFailing = false;
    } catch (err) {
      if (!this.pollFailing) this.logger.warn('console session revocation polling failed', { plugin: 'auth', ...errorFields(err) });
      this.pollFailing = true;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.unsubscribe();
    await this.polling;
    this.cache.clear();
    this.unknown.clear();
  }
}
