// auth with console session tokens: the session resolver's cache never outlives the session, evicts a
// session revoked in another process on the next poll (and one signed out here at once), and stops
// trusting cached sessions while polling fails.
import assert from 'node:assert/strict';
import { SessionResolver } from '../../plugins/auth/session-resolver';
import { announceSessionRevoked } from '../../src/console/session-revocations';
import { createLogger } from '../../src/log/logger';
import type { Store } from '../../src/store/port';
import type { ResolvedConsoleSession } from '../../src/store/types';

const logger = createLogger({ level: 'error', silent: true });

function resolvedSession(id: string, expiresAt: number): ResolvedConsoleSession {
  return {
    session: {
      id,
      orgId: 'acme',
      userId: 'u1',
      tokenHash: 'h',
      ticketHash: null,
      ticketExpiresAt: new Date(0).toISOString(),
      subject: 'sub',
      createdAt: new Date(0).toISOString(),
      expiresAt: new Date(expiresAt).toISOString(),
      revokedAt: null,
    },
    user: { id: 'u1', orgId: 'acme', name: 'U', role: 'member' },
    groups: ['finance'],
  };
}

/** A store whose consoleSessions answer from a map of token hash -> session, counting lookups. */
function fakeStore(known: Record<string, ResolvedConsoleSession>) {
  const sessions = {
    resolves: 0,
    revoked: [] as string[],
    failPolls: false,
    async resolve(hash: string, now: string) {
      sessions.resolves++;
      const found = known[hash];
      return found && !sessions.revoked.includes(found.session.id) && found.session.expiresAt > now ? found : null;
    },
    async revokedSince() {
      if (sessions.failPolls) throw new Error('store down');
      return [...sessions.revoked];
    },
  };
  return { store: { consoleSessions: sessions } as unknown as Store, sessions };
}

describe('plugins/auth: console sessions', () => {
  let now = 1_000_000;
  const options = { cacheSize: 100, cacheTtlMs: 60_000, negativeTtlMs: 2_000, revocationPollMs: 1_000, now: () => now };

  it('acts as the session user with keyId null and the session id, cached no longer than the session lives', async () => {
    const { store, sessions } = fakeStore({ h1: resolvedSession('cs1', now + 5_000) });
    const resolver = new SessionResolver(store, logger, options);
    const principal = await resolver.resolve('h1');
    assert.deepEqual(principal, { orgId: 'acme', userId: 'u1', keyId: null, sessionId: 'cs1', role: 'member', groups: ['finance'] });
    assert.equal(resolver.cached('h1'), principal);
    now += 4_999;
    await resolver.poll(); // revocation polling is current: only the expiry can end the cached entry
    assert.equal(resolver.cached('h1'), principal);
    now += 1;
    assert.equal(resolver.cached('h1'), undefined, 'expired: back to the store');
    assert.equal(await resolver.resolve('h1'), null);
    assert.equal(sessions.resolves, 2);
    await resolver.close();
  });

  it('evicts a session revoked elsewhere on the next poll, and one signed out in this process at once', async () => {
    const { store, sessions } = fakeStore({ h1: resolvedSession('cs1', now + 3_600_000), h2: resolvedSession('cs2', now + 3_600_000) });
    const resolver = new SessionResolver(store, logger, options);
    await resolver.resolve('h1');
    await resolver.resolve('h2');
    sessions.revoked.push('cs1');
    await resolver.poll();
    assert.equal(resolver.cached('h1'), undefined);
    assert.equal(await resolver.resolve('h1'), null);
    announceSessionRevoked(store, 'cs2');
    assert.equal(resolver.cached('h2'), undefined, 'evicted without waiting for a poll');
    await resolver.close();
  });

  it('stops trusting cached sessions while revocation polling fails', async () => {
    const { store, sessions } = fakeStore({ h1: resolvedSession('cs1', now + 3_600_000) });
    const resolver = new SessionResolver(store, logger, options);
    await resolver.resolve('h1');
    sessions.failPolls = true;
    now += 2_500;
    await resolver.poll();
    assert.equal(resolver.cached('h1'), undefined);
    sessions.failPolls = false;
    await resolver.poll();
    assert.equal(resolver.cached('h1')?.sessionId, 'cs1');
    await resolver.close();
  });
});
