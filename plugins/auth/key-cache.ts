import type { Principal } from '../../src/store/types';

/** The id a revocation names: the key's, or the console session's. */
function credentialId(principal: Principal): string | null {
  return principal.keyId ?? principal.sessionId ?? null;
}

interface Entry {
  /** null: the key is unknown or revoked (negative entry). */
  principal: Principal | null;
  expiresAt: number;
}

/**
 * Key resolutions by key hash: a bounded LRU (a Map keeps insertion order; a hit re-inserts) with a
 * TTL per entry, and an index by key id (a console session's id for a session token) so a revocation
 * evicts without knowing the hash.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly hashByKeyId = new Map<string, string>();

  constructor(private readonly maxEntries: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The cached resolution (Principal or null), or undefined when absent or expired. */
  get(hash: string, now: number): Principal | null | undefined {
    const entry = this.entries.get(hash);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      this.remove(hash, entry);
      return undefined;
    }
    this.entries.delete(hash);
    this.entries.set(hash, entry);
    return entry.principal;
  }

  set(hash: string, principal: Principal | null, expiresAt: number): void {
    const existing = this.entries.get(hash);
    if (existing) this.remove(hash, existing);
    this.entries.set(hash, { principal, expiresAt });
    const id = principal ? credentialId(principal) : null;
    if (id) this.hashByKeyId.set(id, hash);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.remove(oldest.value, this.entries.get(oldest.value) as Entry);
    }
  }

  /** Drops the resolution of a key hash, if cached. */
  delete(hash: string): void {
    const entry = this.entries.get(hash);
    if (entry) this.remove(hash, entry);
  }

  /** Drops the resolution of a key id (revocation). */
  evictKeyId(keyId: string): boolean {
    const hash = this.hashByKeyId.get(keyId);
    if (hash === undefined) return false;
    const entry = this.entries.get(hash);
    if (entry) this.remove(hash, entry);
    else this.hashByKeyId.delete(keyId);
    return true;
  }

  clear(): void {
    this.entries.clear();
    this.hashByKeyId.clear();
  }

  private remove(hash: string, entry: Entry): void {
    this.entries.delete(hash);
    const id = entry.principal ? credentialId(entry.principal) : null;
    if (id && this.hashByKeyId.get(id) === hash) this.hashByKeyId.delete(id);
  }
}
