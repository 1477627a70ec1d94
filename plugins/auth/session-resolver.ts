// Resolves console session token hashes to principals: a CredentialResolver (cache, shared lookups,
// revocation poll over store.consoleSessions.revokedSince) like KeyResolver is for keys, with what sessions
// add: a cached session is served no longer than it lives (its expiresAt), and a sign-out in this process
// evicts it at once (session-revocations.ts). The principal acts as the session's user: role and groups
// are read from the store with the session, never more than the user has.
import type { Logger } from 'winston';
import { onSessionRevoked } from '../../src/console/session-revocations';
import type { Store } from '../../src/store/port';
import type { Principal } from '../../src/store/types';
import { CredentialResolver, type CredentialResolution, type CredentialResolverOptions } from './credential-resolver';

async function lookupSession(store: Store, hash: string, now: number): Promise<CredentialResolution | null> {
  const resolved = await store.consoleSessions.resolve(hash, new Date(now).toISOString());
  if (!resolved) return null;
  const principal: Principal = Object.freeze({
    orgId: resolved.user.orgId,
    userId: resolved.user.id,
    keyId: null,
    sessionId: resolved.session.id,
    role: resolved.user.role,
    groups: Object.freeze([...resolved.groups]) as string[],
  });
  // Never served from memory past the session's own expiry.
  return { principal, validUntil: Date.parse(resolved.session.expiresAt) };
}

export class SessionResolver extends CredentialResolver {
  private readonly unsubscribe: () => void;

  constructor(store: Store, logger: Logger, options: CredentialResolverOptions) {
    super(
      {
        kind: 'console session',
        lookup: (hash, now) => lookupSession(store, hash, now),
        revokedSince: (since) => store.consoleSessions.revokedSince(since),
      },
      logger,
      options,
    );
    this.unsubscribe = onSessionRevoked(store, (sessionId) => this.evict(sessionId));
  }

  override async close(): Promise<void> {
    this.unsubscribe();
    await super.close();
  }
}
