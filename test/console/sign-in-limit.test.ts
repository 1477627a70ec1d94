// The console's public sign-in routes (OIDC login and callback, the ticket exchange) are limited per
// client address (console.signInRateLimit), with every plugin off: one budget for the three routes,
// past it the GET routes redirect to the console with signInError=rate_limited and POST answers 429,
// each with Retry-After; another address keeps its budget; only the last X-Forwarded-For entry (with
// server.trustProxy) names the client, IPv6 by its /64; two gateways on one Redis share the count; 0
// switches the limit off; Redis unreachable admits (fail open).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Redis } from 'ioredis';
import { createSignInLimit } from '../../src/console/sign-in-limit';
import { addressKey, clientAddress } from '../../src/http/client-address';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { openTestStore, type TestStore } from '../helpers/store';
import { startTestProvider, type TestProvider } from './oidc-test-provider';

const REDIS_URL = process.env['REDIS_URL'] || 'redis://127.0.0.1:6379';
const LIMIT = 3;

function requestFrom(remoteAddress: string | undefined, forwardedFor?: string | string[]): IncomingMessage {
  return { socket: { remoteAddress }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } } as unknown as IncomingMessage;
}

/** A fresh documentation address (TEST-NET-3) per call, so tests on one gateway never share a budget. */
let nextHost = 1;
const freshAddress = (): string => `203.0.113.${nextHost++}`;

describe('console sign-in rate limit', function () {
  this.timeout(120_000);

  describe('client address', () => {
    it('is the connection peer unless server.trustProxy; then the last X-Forwarded-For entry', () => {
      assert.equal(clientAddress(requestFrom('10.0.0.9', '198.51.100.1'), false), '10.0.0.9', 'a header nobody vouches for is ignored');
      assert.equal(
        clientAddress(requestFrom('10.0.0.9', '198.51.100.7, 198.51.100.1'), true),
        '198.51.100.1',
        'entries before the last are the client’s to write',
      );
      assert.equal(clientAddress(requestFrom('10.0.0.9', ['198.51.100.7', '198.51.100.2']), true), '198.51.100.2', 'several headers are one list');
      assert.equal(clientAddress(requestFrom('10.0.0.9', '198.51.100.3:51234'), true), '198.51.100.3');
      assert.equal(clientAddress(requestFrom('10.0.0.9', '[2001:db8::5]:443'), true), '2001:db8::5');
      assert.equal(clientAddress(requestFrom('10.0.0.9', 'unknown'), true), '10.0.0.9', 'no address in the header: the peer');
      assert.equal(clientAddress(requestFrom('10.0.0.9'), true), '10.0.0.9');
      assert.equal(clientAddress(requestFrom(undefined), false), null);
    });

    it('counts IPv4 by address (also IPv4-mapped) and IPv6 by its /64', () => {
      assert.equal(addressKey('198.51.100.1'), '198.51.100.1');
      assert.equal(addressKey('::ffff:198.51.100.1'), '198.51.100.1');
      assert.equal(addressKey('::FFFF:c633:6401'), '198.51.100.1');
      assert.equal(addressKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
      assert.equal(addressKey('2001:0db8:0001:0002::9'), '2001:db8:1:2::/64');
      assert.notEqual(addressKey('2001:db8:1:3::9'), addressKey('2001:db8:1:2::9'));
      assert.equal(addressKey('::1'), '0:0:0:0::/64');
      assert.equal(addressKey('64:ff9b::198.51.100.1'), '64:ff9b:0:0::/64');
    });
  });

  describe('one gateway, counted in memory (queue.driver inline), rateLimit plugin off', () => {
    let provider: TestProvider;
    let gw: TestGateway;
    before(async () => {
      provider = await startTestProvider();
      gw = await startTestGateway({
        config: {
          server: { trustProxy: true },
          console: { signInRateLimit: LIMIT, oidc: { issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret } },
          plugins: { auth: { enabled: true }, rateLimit: { enabled: false } },
        },
      });
      await provider.configure(`${gw.url}/console/auth/oidc/callback`, {});
    });
    after(async () => {
      await gw?.close();
      await provider?.close();
    });

    const from = (forwardedFor: string) => ({ 'x-forwarded-for': forwardedFor });
    const login = (forwardedFor: string) => fetch(`${gw.url}/console/auth/oidc/login`, { redirect: 'manual', headers: from(forwardedFor) });
    const callback = (forwardedFor: string) =>
      fetch(`${gw.url}/console/auth/oidc/callback?code=c&state=s`, { redirect: 'manual', headers: from(forwardedFor) });
    const exchange = (forwardedFor: string, ticket: string | null = 'not-a-ticket') =>
      fetch(`${gw.url}/console/auth/session`, {
        method: 'POST',
        headers: { ...from(forwardedFor), ...(ticket === null ? {} : { cookie: `agw_console_ticket=${ticket}` }) },
      });

    function assertRedirectedRateLimited(res: Response): void {
      assert.equal(res.status, 302);
      assert.equal(res.headers.get('location'), `${gw.url}/console/?signInError=rate_limited`);
      const wait = Number(res.headers.get('retry-after'));
      assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 120, `Retry-After ${res.headers.get('retry-after')}`);
      assert.deepEqual(res.headers.getSetCookie(), [], 'the sign-in cookie is kept');
    }

    it('counts login, callback and ticket exchange of an address together; past the limit GETs redirect with rate_limited, POST answers 429', async () => {
      const address = freshAddress();
      const started = await login(address);
      assert.equal(started.status, 302);
      assert.equal(new URL(started.headers.get('location') ?? '').origin, provider.issuer, 'under the limit: to the provider');
      assert.equal((await callback(address)).headers.get('location'), '/console/?signInError=invalid_state');
      assert.equal((await exchange(address)).status, 401);

      assertRedirectedRateLimited(await login(address));
      assertRedirectedRateLimited(await callback(address));
      const refused = await exchange(address);
      assert.equal(refused.status, 429);
      assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assert.deepEqual(await refused.json(), {
        error: 'Too Many Requests',
        message: `Too many sign-in requests from this address. Retry after ${refused.headers.get('retry-after')} s.`,
      });
      assert.deepEqual(refused.headers.getSetCookie(), [], 'the ticket cookie is kept for a retry');
    });

    it('leaves another address its own budget', async () => {
      const flooding = freshAddress();
      for (let i = 0; i < LIMIT; i++) assert.equal((await login(flooding)).status, 302);
      assertRedirectedRateLimited(await login(flooding));
      const other = await login(freshAddress());
      assert.equal(new URL(other.headers.get('location') ?? '').origin, provider.issuer);
    });

    it('neither counts nor limits a ticket exchange without a ticket (the console page asks on every load)', async () => {
      const address = freshAddress();
      for (let i = 0; i < LIMIT + 2; i++) assert.equal((await exchange(address, null)).status, 401);
      for (let i = 0; i < LIMIT; i++) assert.equal(new URL((await login(address)).headers.get('location') ?? '').origin, provider.issuer);
      assertRedirectedRateLimited(await login(address));
      assert.equal((await exchange(address, null)).status, 401);
    });

    it('takes the client from the last X-Forwarded-For entry: addresses a client prepends give it no new budget', async () => {
      const address = freshAddress();
      for (let i = 0; i < LIMIT; i++) assert.equal((await login(`198.18.0.${i + 1}, ${address}`)).status, 302);
      assertRedirectedRateLimited(await login(`198.18.9.9, ${address}`));
    });

    it('counts IPv6 clients by their /64', async () => {
      const net = `2001:db8:${(nextHost++).toString(16)}:1`;
      for (let i = 0; i < LIMIT; i++) assert.equal(new URL((await login(`${net}::${i + 1}`)).headers.get('location') ?? '').origin, provider.issuer);
      assertRedirectedRateLimited(await login(`${net}:ffff:ffff:ffff:ffff`));
      assert.equal(new URL((await login(`2001:db8:${(nextHost++).toString(16)}:1::1`)).headers.get('location') ?? '').origin, provider.issuer);
    });

    it('0 switches the limit off', async () => {
      const unlimited = await startTestGateway({
        store: gw.store,
        config: {
          server: { trustProxy: true },
          console: { signInRateLimit: 0, oidc: { issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret } },
        },
      });
      try {
        assert.equal(unlimited.gateway.services.signInLimit, null);
        const address = freshAddress();
        for (let i = 0; i < LIMIT + 3; i++) {
          const res = await fetch(`${unlimited.url}/console/auth/oidc/login`, { redirect: 'manual', headers: from(address) });
          assert.equal(new URL(res.headers.get('location') ?? '').origin, provider.issuer);
          const exchanged = await fetch(`${unlimited.url}/console/auth/session`, {
            method: 'POST',
            headers: { ...from(address), cookie: 'agw_console_ticket=x' },
          });
          assert.equal(exchanged.status, 401);
        }
      } finally {
        await unlimited.close();
      }
    });
  });

  describe('two gateways on one Redis (queue.driver bullmq)', () => {
    const prefix = `agwtest${randomBytes(5).toString('hex')}`;
    let provider: TestProvider;
    let store: TestStore;
    const gateways: TestGateway[] = [];
    before(async () => {
      provider = await startTestProvider();
      store = await openTestStore('postgres');
      const config = {
        server: { trustProxy: true },
        queue: { driver: 'bullmq', redisUrl: REDIS_URL, prefix },
        console: { signInRateLimit: LIMIT, oidc: { issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret } },
      };
      for (let i = 0; i < 2; i++) gateways.push(await startTestGateway({ store: store.store, config }));
      await provider.configure(`${gateways[0]!.url}/console/auth/oidc/callback`, {});
    });
    after(async () => {
      for (const gw of gateways) await gw.close();
      await store?.cleanup();
      await provider?.close();
      const client = new Redis(REDIS_URL);
      const keys = await client.keys(`${prefix}:*`);
      if (keys.length > 0) await client.del(...keys);
      await client.quit();
    });

    it('share one count per address', async () => {
      const [a, b] = gateways as [TestGateway, TestGateway];
      const address = freshAddress();
      const headers = { 'x-forwarded-for': address };
      const login = (gw: TestGateway) => fetch(`${gw.url}/console/auth/oidc/login`, { redirect: 'manual', headers });
      assert.equal(new URL((await login(a)).headers.get('location') ?? '').origin, provider.issuer);
      assert.equal(new URL((await login(b)).headers.get('location') ?? '').origin, provider.issuer);
      const exchanged = await fetch(`${a.url}/console/auth/session`, { method: 'POST', headers: { ...headers, cookie: 'agw_console_ticket=x' } });
      assert.equal(exchanged.status, 401);
      const refused = await fetch(`${b.url}/console/auth/session`, { method: 'POST', headers: { ...headers, cookie: 'agw_console_ticket=x' } });
      assert.equal(refused.status, 429, 'the second gateway sees what the first counted');
      assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      const redirected = await login(a);
      assert.equal(redirected.headers.get('location'), `${a.url}/console/?signInError=rate_limited`);
      const client = new Redis(REDIS_URL);
      try {
        assert.deepEqual(await client.keys(`${prefix}:signin:*`), [`${prefix}:signin:${address}`]);
      } finally {
        await client.quit();
      }
    });
  });

  it('admits sign-ins uncounted while Redis is unreachable (fail open, logged once)', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, retryStrategy: () => 50 });
    dead.on('error', () => undefined);
    const warnings: string[] = [];
    const config = testConfig({ queue: { driver: 'bullmq', redisUrl: REDIS_URL }, console: { signInRateLimit: 1 } });
    const limit = createSignInLimit(config, { get: () => dead, close: async () => undefined }, { warn: (message: string) => void warnings.push(message) });
    try {
      assert.ok(limit);
      for (let i = 0; i < 4; i++) assert.equal(await limit.admit(requestFrom('198.51.100.1')), 0);
      assert.equal(warnings.length, 1);
      assert.match(warnings[0] ?? '', /admitting requests uncounted/);
    } finally {
      limit?.close();
      dead.disconnect();
    }
  });
});
