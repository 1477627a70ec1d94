// Resolves credential hashes (API keys, console session tokens) to principals through a cache: what
// KeyResolver and SessionResolver share. A credential source says how to look a hash up in the store and
// which credential ids were revoked since a time; this class keeps resolutions (valid ones and unknown
// ones apart), shares concurrent lookups of one hash, never serves a resolution past the credential's own
// validity, and polls for revocations every `revocationPollMs`, so a revocation reaches every process
// within about two poll intervals. While polling is failing (store unreachable), cached principals are not
// trusted beyond that window: lookups go back to the store.
import type { Logger } from 'winston';
import { errorFields } from '../../src/log/logger';
import type { Principal } from '../../src/store/types';
import { KeyCache } from './key-cache';

export interface CredentialResolverOptions {
  cacheSize: number;
  /** How long a resolved credential is served from memory (revocations and its expiry end it sooner). */
  cacheTtlMs: number;
  /** How long an unknown or revoked credential is remembered (one created meanwhile works after this). */
  negativeTtlMs: number;
  revocationPollMs: number;
  now?: () => number;
}

/** A credential found in the store: who it acts as, and until when (ms since the epoch; Infinity: no end). */
export interface CredentialResolution {
  principal: Principal;
  validUntil: number;
}

export interface CredentialSource {
  /** Names the credential in log lines ("key", "console session"). */
  kind: string;
  /** The credential with this hash, or null when unknown or revoked. `now` is the time of the lookup. */
  lookup(hash: string, now: number): Promise<CredentialResolution | null>;
  /** Ids (principal.keyId or principal.sessionId) of the credentials revoked since an ISO time. */
  revokedSince(since: string): Promise<string[]>;
}

/** Revocations stamped by another process's clock may land slightly in the past: poll with overlap. */
const POLL_OVERLAP_MS = 5_000;

export class CredentialResolver {
  /** Credentials that resolved to a principal. */
  private readonly cache: KeyCache;
  /**
   * Credentials that did not (unknown, revoked or expired), apart: anyone can send any number of random
   * credentials, and in one shared LRU they would evict every valid one, sending each valid caller back
   * to the store.
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
    private readonly source: CredentialSource,
    private readonly logger: Logger,
    private readonly options: CredentialResolverOptions,
  ) {
    this.cache = new KeyCache(options.cacheSize);
    this.unknown = new KeyCache(options.cacheSize);
    this.now = options.now ?? Date.now;
    this.since = this.now() - POLL_OVERLAP_MS;
    this.lastPollOkAt = this.now();
    this.timer = setInterval(() => void this.poll(), options.revocationPollMs);
    this.timer.unref();
  }

  /** Cached resolution without I/O: a Principal, null (known bad credential), or undefined (ask the store). */
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
    const lookup = this.source
      .lookup(hash, this.now())
      .then((found) => {
        const now = this.now();
        // An expired credential is refused like a revoked one; a valid one is cached no longer than it lasts.
        if (found && found.validUntil > now) {
          this.unknown.delete(hash);
          this.cache.set(hash, found.principal, Math.min(now + this.options.cacheTtlMs, found.validUntil));
          return found.principal;
        }
        this.cache.delete(hash);
        this.unknown.set(hash, null, now + this.options.negativeTtlMs);
        return null;
      })
      .finally(() => this.inflight.delete(hash));
    this.inflight.set(hash, lookup);
    return lookup;
  }

  /** Drops a credential's cached resolution at once (a revocation made by this process). */
  evict(id: string): void {
    this.cache.evictKeyId(id);
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
      const revoked = await this.source.revokedSince(new Date(this.since).toISOString());
      for (const id of revoked) this.cache.evictKeyId(id);
      this.since = startedAt - POLL_OVERLAP_MS;
      this.lastPollOkAt = startedAt;
      if (this.pollFailing) this.logger.info(`${this.source.kind} revocation polling recovered`, { plugin: 'auth' });
      this.pollFailing = false;
    } catch (err) {
      // Logged once per outage; meanwhile cached principals are re-checked in the store (see cached()).
      if (!this.pollFailing) this.logger.warn(`${this.source.kind} revocation polling failed`, { plugin: 'auth', ...errorFields(err) });
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
