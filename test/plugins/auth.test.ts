// auth: header forms, the key cache (LRU, TTL, unknown keys apart, revocation eviction) and, over HTTP,
// 401s in the flat envelope and revocation taking effect on running gateways through the poll.
import assert from 'node:assert/strict';
import request from 'supertest';
import { readApiKey } from '../../plugins/auth/credentials';
import { KeyCache } from '../../plugins/auth/key-cache';
import { KeyResolver } from '../../plugins/auth/key-resolver';
import { AUTH_MESSAGES } from '../../plugins/auth';
import { createLogger } from '../../src/log/logger';
import { hashApiKey } from '../../src/security/keys';
import type { KeyRepository } from '../../src/store/port';
import type { Principal, ResolvedKey } from '../../src/store/types';
import { startTestGateway, TEST_KEYS, type TestGateway } from '../helpers/gateway';

const logger = createLogger({ level: 'error', silent: true });

function principal(keyId: string): Principal {
  return { orgId: 'acme', userId: `user-${keyId}`, keyId, role: 'member', groups: [] };
}

/** A KeyRepository over a map of hash -> resolved key, counting store calls. */
function fakeKeys(known: Record<string, ResolvedKey>): KeyRepository & { resolves: number; revoked: string[]; failPolls: boolean } {
  const repo = {
    resolves: 0,
    revoked: [] as string[],
    failPolls: false,
    async resolve(hash: string) {
      repo.resolves++;
      await new Promise((r) => setImmediate(r));
      const found = known[hash];
      return found && !repo.revoked.includes(found.key.id) ? found : null;
    },
    async revokedSince() {
      if (repo.failPolls) throw new Error('store down');
      return [...repo.revoked];
    },
  };
  return repo as unknown as KeyRepository & typeof repo;
}

function resolved(keyId: string): ResolvedKey {
  return {
    key: {
      id: keyId,
      orgId: 'acme',
      userId: 'u1',
      name: 'k',
      hash: 'h',
      prefix: 'agw_',
      source: 'cli',
      createdAt: '',
      lastUsedAt: null,
      revokedAt: null,
      expiresAt: null,
      models: null,
      budgets: [],
    },
    user: { id: 'u1', orgId: 'acme', name: 'U', role: 'admin' },
    groups: ['finance'],
  };
}

describe('plugins/auth', () => {
  describe('readApiKey', () => {
    const key = 'agw_0123456789abcdef';
    it('accepts the three header forms', () => {
      assert.deepEqual(readApiKey({ authorization: `Bearer ${key}` }), { ok: true, key });
      assert.deepEqual(readApiKey({ authorization: `bearer   ${key} ` }), { ok: true, key });
      assert.deepEqual(readApiKey({ 'x-api-key': key }), { ok: true, key });
      assert.deepEqual(readApiKey({ 'api-key': ` ${key}` }), { ok: true, key });
    });
    it('prefers Bearer, then x-api-key, then api-key; ignores a Basic header when a key header is present', () => {
      assert.deepEqual(readApiKey({ authorization: `Bearer ${key}`, 'x-api-key': 'agw_other_key_000' }), { ok: true, key });
      assert.deepEqual(readApiKey({ 'x-api-key': key, 'api-key': 'agw_other_key_000' }), { ok: true, key });
      assert.deepEqual(readApiKey({ authorization: 'Basic dXNlcjpwYXNz', 'x-api-key': key }), { ok: true, key });
    });
    it('tells missing from malformed', () => {
      assert.deepEqual(readApiKey({}), { ok: false, reason: 'missing' });
      for (const headers of [
        { authorization: 'Basic dXNlcjpwYXNz' },
        { authorization: 'Bearer' },
        { authorization: 'Bearer a b' },
        { authorization: `Bearer short` },
        { 'x-api-key': '' },
        { 'x-api-key': `${key}, ${key}` },
        { 'api-key': 'x'.repeat(600) },
        { 'x-api-key': 'agw_ключ_0123456789' },
      ]) {
        assert.deepEqual(readApiKey(headers), { ok: false, reason: 'malformed' }, JSON.stringify(headers).slice(0, 60));
      }
    });
  });

  describe('KeyCache', () => {
    it('expires entries after their TTL and evicts the least recently used beyond its size', () => {
      const cache = new KeyCache(2);
      cache.set('a', principal('ka'), 100);
      cache.set('b', principal('kb'), 100);
      assert.equal(cache.get('a', 50)?.keyId, 'ka'); // a is now most recent
      cache.set('c', null, 100);
      assert.equal(cache.get('b', 50), undefined, 'b was least recently used');
      assert.equal(cache.get('c', 50), null, 'negative entries are cached as null');
      assert.equal(cache.get('a', 100), undefined, 'expired at its deadline');
      assert.equal(cache.size, 1);
    });
    it('evicts by key id (revocation)', () => {
      const cache = new KeyCache(10);
      cache.set('a', principal('ka'), 100);
      assert.equal(cache.evictKeyId('ka'), true);
      assert.equal(cache.get('a', 0), undefined);
      assert.equal(cache.evictKeyId('ka'), false);
    });
  });

  describe('KeyResolver', () => {
    let now = 1_000_000;
    const options = { cacheSize: 100, cacheTtlMs: 60_000, negativeTtlMs: 2_000, revocationPollMs: 1_000, now: () => now };

    it('shares one store query between concurrent lookups and then serves from memory', async () => {
      const keys = fakeKeys({ h1: resolved('k1') });
      const resolver = new KeyResolver(keys, logger, options);
      const [a, b] = await Promise.all([resolver.resolve('h1'), resolver.resolve('h1')]);
      assert.equal(keys.resolves, 1);
      assert.deepEqual(a, { orgId: 'acme', userId: 'u1', keyId: 'k1', role: 'admin', groups: ['finance'], models: null, keyBudgets: [] });
      assert.equal(a, b);
      assert.equal(resolver.cached('h1'), a);
      assert.ok(Object.isFrozen(a), 'a cached principal cannot be changed by one request for the next');
      await resolver.close();
    });

    it("refuses an expired key, caches a valid one no longer than it lasts, and carries the key's model allow-list", async () => {
      const base = resolved('k-exp');
      const keys = fakeKeys({
        soon: { ...base, key: { ...base.key, expiresAt: new Date(now + 5_000).toISOString(), models: ['demo'] } },
        gone: { ...base, key: { ...base.key, id: 'k-gone', expiresAt: new Date(now - 1).toISOString() } },
      });
      const resolver = new KeyResolver(keys, logger, options);
      const principal = await resolver.resolve('soon');
      assert.deepEqual(principal?.models, ['demo']);
      assert.ok(Object.isFrozen(principal?.models));
      assert.equal(resolver.cached('soon'), principal);
      assert.equal(await resolver.resolve('gone'), null, 'expired: refused like a revoked key');
      now += 5_000;
      assert.equal(resolver.cached('soon'), undefined, 'the cache entry ends with the key (cacheTtlMs is 60 s)');
      assert.equal(await resolver.resolve('soon'), null);
      await resolver.close();
    });

    it('remembers unknown keys for the negative TTL only', async () => {
      const keys = fakeKeys({});
      const resolver = new KeyResolver(keys, logger, options);
      assert.equal(await resolver.resolve('nope'), null);
      assert.equal(resolver.cached('nope'), null);
      now += 2_000;
      assert.equal(resolver.cached('nope'), undefined);
      await resolver.close();
    });

    it('keeps unknown keys apart: a flood of random keys past the cache bound evicts no valid key', async () => {
      const keys = fakeKeys({ h1: resolved('k1') });
      const resolver = new KeyResolver(keys, logger, { ...options, cacheSize: 4 });
      await resolver.resolve('h1');
      for (let i = 0; i < 50; i++) assert.equal(await resolver.resolve(`random-${i}`), null);
      const lookups = keys.resolves;
      assert.equal(resolver.cached('h1')?.keyId, 'k1', 'the valid key is still served from memory');
      // The unknown keys are bounded too: the most recent ones are remembered, the oldest dropped.
      assert.equal(resolver.cached('random-49'), null);
      assert.equal(resolver.cached('random-0'), undefined);
      assert.equal(keys.resolves, lookups);
      await resolver.close();
    });

    it('evicts a key revoked elsewhere on the next poll', async () => {
      const keys = fakeKeys({ h1: resolved('k1') });
      const resolver = new KeyResolver(keys, logger, options);
      await resolver.resolve('h1');
      keys.revoked.push('k1');
      await resolver.poll();
      assert.equal(resolver.cached('h1'), undefined);
      assert.equal(await resolver.resolve('h1'), null);
      await resolver.close();
    });

    it('stops trusting cached principals while revocation polling fails', async () => {
      const keys = fakeKeys({ h1: resolved('k1') });
      const resolver = new KeyResolver(keys, logger, options);
      await resolver.resolve('h1');
      keys.failPolls = true;
      now += 2_500;
      await resolver.poll();
      assert.equal(resolver.cached('h1'), undefined, 'must go back to the store');
      keys.failPolls = false;
      await resolver.poll();
      assert.equal(resolver.cached('h1')?.keyId, 'k1');
      await resolver.close();
    });
  });

  describe('over HTTP', function () {
    this.timeout(60_000); // the first embedded store of a run builds its template
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ config: { plugins: { auth: { enabled: true, touchFlushMs: 100 } } } });
    });
    after(() => gw?.close());

    it('accepts Authorization: Bearer, x-api-key and api-key', async () => {
      await request(gw.url).get('/v1/models').set('authorization', `Bearer ${TEST_KEYS.member}`).expect(200);
      await request(gw.url).get('/v1/models').set('x-api-key', TEST_KEYS.member).expect(200);
      await request(gw.url).get('/v1/models').set('api-key', TEST_KEYS.member).expect(200);
    });

    it('answers 401 in the flat envelope for a missing, malformed or unknown key, on every path family', async () => {
      const cases: [Record<string, string>, string][] = [
        [{}, AUTH_MESSAGES.missing],
        [{ authorization: 'Basic dXNlcjpwYXNz' }, AUTH_MESSAGES.malformed],
        [{ authorization: 'Bearer' }, AUTH_MESSAGES.malformed],
        [{ 'x-api-key': 'agw_not_a_real_key_0000000000' }, AUTH_MESSAGES.invalid],
      ];
      for (const path of ['/v1/models', '/v1/agents/list']) {
        for (const [headers, message] of cases) {
          const res = await request(gw.url).get(path).set(headers).expect(401);
          assert.deepEqual(res.body, { error: 'Unauthorized', message }, `${path} ${JSON.stringify(headers)}`);
          assert.equal(res.headers['www-authenticate'], 'Bearer');
        }
      }
      const messages = await request(gw.url).post('/v1/messages').send({}).expect(401);
      assert.deepEqual(messages.body, { error: 'Unauthorized', message: AUTH_MESSAGES.missing });
    });

    it('leaves unauthenticated operations open', async () => {
      await request(gw.url).get('/health/live').expect(200);
    });

    it('resolves the key to the user, organization and role', async () => {
      const admin = await request(gw.url).get('/v1/admin/audit').set('x-api-key', TEST_KEYS.admin).expect(200);
      assert.ok(Array.isArray(admin.body.items));
      await request(gw.url).get('/v1/admin/audit').set('x-api-key', TEST_KEYS.member).expect(403);
    });

    it('records the last use of keys in a batch', async () => {
      await request(gw.url).get('/v1/models').set('x-api-key', TEST_KEYS.viewer).expect(200);
      const deadline = Date.now() + 2_000;
      let lastUsedAt: string | null = null;
      while (lastUsedAt === null && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        const keys = await gw.store.keys.listByOrg('acme');
        lastUsedAt = keys.find((k) => k.userId === 'u-viewer')?.lastUsedAt ?? null;
      }
      assert.ok(lastUsedAt, 'lastUsedAt was recorded');
    });

    it('serves a valid key from its cache after more random keys than the cache holds (store lookups counted)', async () => {
      const limited = await startTestGateway({ store: gw.store, config: { plugins: { auth: { enabled: true, cacheSize: 8 } } } });
      const valid = hashApiKey(TEST_KEYS.viewer);
      const lookups = new Map<string, number>();
      const original = gw.store.keys.resolve.bind(gw.store.keys);
      gw.store.keys.resolve = (hash) => {
        lookups.set(hash, (lookups.get(hash) ?? 0) + 1);
        return original(hash);
      };
      try {
        await request(limited.url).get('/v1/models').set('x-api-key', TEST_KEYS.viewer).expect(200);
        assert.equal(lookups.get(valid), 1);
        for (let i = 0; i < 40; i++) await request(limited.url).get('/v1/models').set('x-api-key', `agw_random_${i}_0123456789abcdef`).expect(401);
        assert.equal(lookups.size, 41, 'every random key was looked up once');
        await request(limited.url).get('/v1/models').set('x-api-key', TEST_KEYS.viewer).expect(200);
        assert.equal(lookups.get(valid), 1, 'the valid key was served from the cache, not the store');
      } finally {
        gw.store.keys.resolve = original;
        await limited.close();
      }
    });

    it('makes a revocation effective on every running gateway through the revocation poll, long before the cache TTL', async () => {
      const started = await startTestGateway({ store: gw.store, config: { plugins: { auth: { enabled: true } } } });
      try {
        // Warm both gateways' caches, then revoke through the store (as the CLI does from another process).
        await request(gw.url).get('/v1/models').set('x-api-key', TEST_KEYS.member).expect(200);
        await request(started.url).get('/v1/models').set('x-api-key', TEST_KEYS.member).expect(200);
        const key = (await gw.store.keys.listByOrg('acme')).find((k) => k.userId === 'u-member');
        assert.ok(key);
        assert.equal(key.hash, hashApiKey(TEST_KEYS.member));
        assert.equal(await gw.store.keys.revoke(key.id, new Date().toISOString()), true);
        // Polls run every second; cached keys live 60 s (cacheTtlMs). A generous 20 s ceiling for a busy
        // machine still tells a poll-driven eviction from a cache entry merely expiring.
        const pending = new Set([gw.url, started.url]);
        const deadline = Date.now() + 20_000;
        while (pending.size > 0 && Date.now() < deadline) {
          for (const url of pending) {
            const res = await request(url).get('/v1/models').set('x-api-key', TEST_KEYS.member);
            if (res.status === 401) pending.delete(url);
          }
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.equal(pending.size, 0, 'every gateway rejects the revoked key');
        const res = await request(started.url).get('/v1/agents/list').set('x-api-key', TEST_KEYS.member).expect(401);
        assert.deepEqual(res.body, { error: 'Unauthorized', message: AUTH_MESSAGES.invalid });
      } finally {
        await started.close();
      }
    });
  });
});
