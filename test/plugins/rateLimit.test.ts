// rateLimit: the sliding-window arithmetic, the memory and Redis counters (the same expectations run
// against both), and over HTTP: 429 with Retry-After in the flat and nested envelopes, per user vs per
// organization, webhook calls counted, one budget shared by two gateway processes through Redis, fail
// open when Redis is down.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import request from 'supertest';
import rateLimitPlugin from '../../plugins/rateLimit';
import { BudgetTable } from '../../plugins/rateLimit/budgets';
import { MemoryCounter } from '../../src/limits/memory-counter';
import { RedisCounter } from '../../src/limits/redis-counter';
import { waitMs, WINDOW_MS, type Budget, type Verdict } from '../../src/limits/sliding-window';
import { rmSync } from 'node:fs';
import { startTestGateway, TEST_KEYS, type TestGateway } from '../helpers/gateway';
import { baseConfigDocument, mergeConfig, testConfig } from '../helpers/config';
import { startServer, tempDir, writeConfig, type ServerProcess } from '../helpers/process';
import { createTestSchema } from '../helpers/store';

const REDIS_URL = process.env['REDIS_URL'] || 'redis://127.0.0.1:6379';
const uniquePrefix = (): string => `agwtest${randomBytes(5).toString('hex')}`;

describe('plugins/rateLimit', () => {
  describe('sliding window', () => {
    it('admits while the weighted count is under the limit', () => {
      assert.equal(waitMs(10, 0, 0, 0), 0);
      assert.equal(waitMs(10, 9, 0, 30_000), 0);
      // Half of the previous window still counts: 10 * 0.5 + 4 = 9, one more fits.
      assert.equal(waitMs(10, 4, 10, 30_000), 0);
    });
    it('when this window is full, waits into the next one', () => {
      // 10 of 10 used, 20 s into the window: 40 s to the next, then 10 * (1 - 9/10) of a window = 6 s.
      assert.equal(waitMs(10, 10, 0, 20_000), 40_000 + 6_000);
    });
    it('when the previous window weighs too much, waits for it to decay', () => {
      // 10 previous at 50% weight + 5 current = 10: one more fits when 10 * w + 5 <= 9, w <= 0.4.
      assert.equal(waitMs(10, 5, 10, 30_000), 6_000);
    });
  });

  describe('budgets', () => {
    const config = testConfig({
      organizations: [
        { id: 'both', name: 'Both', rateLimit: { requestsPerMinute: 100, perUserRequestsPerMinute: 10 } },
        { id: 'users', name: 'Users', rateLimit: { perUserRequestsPerMinute: 5 } },
        { id: 'free', name: 'Free' },
      ],
    });
    const table = new BudgetTable(config.organizations);
    const who = (orgId: string, userId = 'u') => ({ orgId, userId, keyId: null, role: 'member' as const, groups: [] });
    it('draws on the organization and the user budget', () => {
      assert.deepEqual(table.budgetsOf(who('both', 'ann')), [
        { key: 'o:both', limit: 100 },
        { key: 'u:both:ann', limit: 10 },
      ]);
      assert.equal(table.budgetsOf(who('both', 'ann')), table.budgetsOf(who('both', 'ann')), 'built once per user');
      assert.deepEqual(table.budgetsOf(who('users')), [{ key: 'u:users:u', limit: 5 }]);
    });
    it('leaves organizations without a rateLimit (or unknown to the config) unlimited', () => {
      assert.deepEqual(table.budgetsOf(who('free')), []);
      assert.deepEqual(table.budgetsOf(who('default')), []);
    });
  });

  // One conformance suite, run against each counter backend.
  const backends: { name: string; open(): Promise<{ hit(b: readonly Budget[]): Verdict | Promise<Verdict>; close(): Promise<void> }> }[] = [
    {
      name: 'memory',
      async open() {
        const counter = new MemoryCounter();
        return { hit: (b) => counter.hit(b), close: async () => counter.close() };
      },
    },
    {
      name: 'redis',
      async open() {
        const client = new Redis(REDIS_URL);
        const prefix = `${uniquePrefix()}:rl:`;
        const counter = new RedisCounter(() => client, prefix);
        return {
          hit: (b) => counter.hit(b),
          async close() {
            const keys = await client.keys(`${prefix}*`);
            if (keys.length > 0) await client.del(...keys);
            await client.quit();
          },
        };
      },
    },
  ];
  for (const backend of backends) {
    describe(`${backend.name} counter`, () => {
      it('admits up to the limit, then denies with a retry delay, without counting denied requests', async () => {
        const counter = await backend.open();
        try {
          const budgets = [{ key: 'o:a', limit: 3 }];
          for (let i = 0; i < 3; i++) assert.equal((await counter.hit(budgets)).denied, -1);
          const denied = await counter.hit(budgets);
          assert.equal(denied.denied, 0);
          assert.ok(denied.retryAfterMs > 0 && denied.retryAfterMs <= 2 * WINDOW_MS, String(denied.retryAfterMs));
          // A request of another user of the same organization is denied by the organization budget.
          const other = await counter.hit([
            { key: 'o:a', limit: 3 },
            { key: 'u:a:2', limit: 10 },
          ]);
          assert.equal(other.denied, 0);
        } finally {
          await counter.close();
        }
      });

      it('tells which budget ran out, and charges a request to all of them or none', async () => {
        const counter = await backend.open();
        try {
          const ann = [
            { key: 'o:b', limit: 5 },
            { key: 'u:b:ann', limit: 2 },
          ];
          const bob = [
            { key: 'o:b', limit: 5 },
            { key: 'u:b:bob', limit: 2 },
          ];
          assert.equal((await counter.hit(ann)).denied, -1);
          assert.equal((await counter.hit(ann)).denied, -1);
          assert.equal((await counter.hit(ann)).denied, 1, 'the user budget');
          // ann's denied request did not use the organization budget: 3 remain for bob's 2 and one more.
          assert.equal((await counter.hit(bob)).denied, -1);
          assert.equal((await counter.hit(bob)).denied, -1);
          assert.equal((await counter.hit(bob)).denied, 1);
          assert.equal(
            (
              await counter.hit([
                { key: 'o:b', limit: 5 },
                { key: 'u:b:cy', limit: 2 },
              ])
            ).denied,
            -1,
          );
          assert.equal(
            (
              await counter.hit([
                { key: 'o:b', limit: 5 },
                { key: 'u:b:cy', limit: 2 },
              ])
            ).denied,
            0,
            'the organization budget',
          );
        } finally {
          await counter.close();
        }
      });
    });
  }

  it('memory counter: the previous window decays and idle budgets are swept', () => {
    let now = 10 * WINDOW_MS; // the start of a window
    const counter = new MemoryCounter(() => now);
    try {
      const budgets = [{ key: 'o:c', limit: 4 }];
      for (let i = 0; i < 4; i++) counter.hit(budgets);
      now += WINDOW_MS; // start of the next window: the previous one still weighs 100%
      assert.equal(counter.hit(budgets).denied, 0);
      now += WINDOW_MS / 2; // weighs 50%: 2 + 0 -> two more fit
      assert.equal(counter.hit(budgets).denied, -1);
      assert.equal(counter.hit(budgets).denied, -1);
      assert.equal(counter.hit(budgets).denied, 0);
      now += 3 * WINDOW_MS;
      counter.sweep();
      assert.equal(counter.size, 0);
    } finally {
      counter.close();
    }
  });

  describe('over HTTP', function () {
    this.timeout(60_000); // the first embedded store of a run builds its template
    const limited = (prefix: string, driver: 'inline' | 'bullmq') => ({
      queue: { driver, prefix, redisUrl: REDIS_URL },
      organizations: [
        {
          id: 'acme',
          name: 'Acme',
          rateLimit: { requestsPerMinute: 5, perUserRequestsPerMinute: 3 },
          users: [
            { id: 'u-admin', name: 'Admin', role: 'admin', keys: [TEST_KEYS.admin] },
            { id: 'u-member', name: 'Member', role: 'member', keys: [TEST_KEYS.member] },
            { id: 'u-viewer', name: 'Viewer', role: 'member', keys: [TEST_KEYS.viewer] },
          ],
        },
        { id: 'other', name: 'Other', users: [{ id: 'u-outsider', name: 'Outsider', role: 'admin', keys: [TEST_KEYS.outsider] }] },
      ],
      plugins: { auth: { enabled: true }, rateLimit: { enabled: true } },
    });

    describe('memory counters (queue.driver inline)', () => {
      let gw: TestGateway;
      before(async () => {
        gw = await startTestGateway({ config: limited(uniquePrefix(), 'inline') });
      });
      after(() => gw?.close());

      it('limits per user, then per organization, with Retry-After and the path family envelope', async () => {
        for (let i = 0; i < 3; i++) await request(gw.url).get('/v1/models').set(gw.auth('member')).expect(200);
        const nested = await request(gw.url).get('/v1/models').set(gw.auth('member')).expect(429);
        assert.match(nested.headers['retry-after'] ?? '', /^[1-9]\d*$/);
        assert.deepEqual(nested.body, {
          error: {
            message: `Rate limit exceeded: user "u-member" allows 3 requests per minute. Retry after ${nested.headers['retry-after']} s.`,
            type: 'rate_limit_error',
            code: 'rate_limit_exceeded',
            param: null,
          },
        });
        // Another user still has a budget, until the organization's 5 are used up.
        await request(gw.url).get('/v1/agents/list').set(gw.auth('viewer')).expect(200);
        await request(gw.url).get('/v1/agents/list').set(gw.auth('viewer')).expect(200);
        const flat = await request(gw.url).get('/v1/agents/list').set(gw.auth('admin')).expect(429);
        assert.match(flat.headers['retry-after'] ?? '', /^[1-9]\d*$/);
        assert.deepEqual(flat.body, {
          error: 'Too Many Requests',
          message: `Rate limit exceeded: organization "acme" allows 5 requests per minute. Retry after ${flat.headers['retry-after']} s.`,
        });
        // Organizations without a rateLimit are unlimited.
        for (let i = 0; i < 8; i++) await request(gw.url).get('/v1/models').set(gw.auth('outsider')).expect(200);
      });
    });

    describe('webhook calls (no API key)', () => {
      const HOOKED = '77777777-7777-4777-8777-777777777777';
      let gw: TestGateway;
      before(async () => {
        const agent = {
          id: HOOKED,
          organization: 'acme',
          name: 'Hooked',
          createdBy: 'u-admin',
          model: 'demo',
          steps: [{ name: 'Outline', prompt: 'Outline.', objective: 'An outline.' }],
          triggers: [{ type: 'webhook' }],
        };
        gw = await startTestGateway({ driver: 'postgres', config: { ...limited(uniquePrefix(), 'inline'), agents: [agent] } });
      });
      after(() => gw?.close());

      it("count against the organization's rate limit, and are refused past it", async () => {
        const listed = await request(gw.url).get(`/v1/agents/${HOOKED}/webhooks`).set(gw.auth('admin')).expect(200);
        const hook = new URL(listed.body.items[0].url as string).pathname;
        // 1 (the listing above) + 3 by other users: one left in the organization's 5.
        for (const who of ['member', 'member', 'viewer'] as const) await request(gw.url).get('/v1/models').set(gw.auth(who)).expect(200);
        await request(gw.url).post(hook).send({}).expect(202);
        const refused = await request(gw.url).post(hook).send({}).expect(429);
        assert.match(refused.headers['retry-after'] ?? '', /^[1-9]\d*$/);
        assert.deepEqual(refused.body, {
          error: 'Too Many Requests',
          message: `Rate limit exceeded: organization "acme" allows 5 requests per minute. Retry after ${refused.headers['retry-after']} s.`,
        });
        // The webhook calls used the organization's budget: an API call is refused too.
        await request(gw.url).get('/v1/models').set(gw.auth('admin')).expect(429);
        // The refused call started no run.
        const runs = await gw.store.runs.page({ agentId: HOOKED, limit: 10, after: null, startDate: null, endDate: null });
        assert.equal(runs.ids.length, 1);
      });
    });

    describe('Redis counters (queue.driver bullmq)', function () {
      this.timeout(240_000);
      const prefix = uniquePrefix();
      let root: string;
      let schema: Awaited<ReturnType<typeof createTestSchema>> | undefined;
      const processes: ServerProcess[] = [];
      before(async () => {
        // Two real `serve` processes (the built CLI) on one PostgreSQL schema and one Redis prefix.
        root = tempDir('agw-ratelimit-');
        schema = await createTestSchema('ratelimit');
        const doc = mergeConfig(baseConfigDocument(), {
          ...limited(prefix, 'bullmq'),
          store: { driver: 'postgres', url: schema.url },
          logging: { level: 'info', accessLog: false },
        });
        const file = writeConfig(root, doc);
        processes.push(...(await Promise.all([0, 1].map(() => startServer(['serve', '--config', file], { timeoutMs: 180_000 })))));
      });
      after(async () => {
        for (const p of processes) await p.stop('SIGKILL');
        await schema?.drop();
        rmSync(root, { recursive: true, force: true });
        const client = new Redis(REDIS_URL);
        const keys = await client.keys(`${prefix}:*`);
        if (keys.length > 0) await client.del(...keys);
        await client.quit();
      });

      it('shares one budget across two gateway processes', async () => {
        const [a, b] = processes as [ServerProcess, ServerProcess];
        assert.notEqual(a.child.pid, b.child.pid);
        const models = (url: string) => fetch(`${url}/v1/models`, { headers: { 'x-api-key': TEST_KEYS.member } });
        // The member's 3 requests per minute, drawn alternately from both processes.
        assert.equal((await models(a.url)).status, 200);
        assert.equal((await models(b.url)).status, 200);
        assert.equal((await models(a.url)).status, 200);
        const denied = await models(b.url);
        assert.equal(denied.status, 429);
        assert.match(denied.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
        assert.equal((await models(a.url)).status, 429, 'the first process sees the budget the second used');
        const client = new Redis(REDIS_URL);
        try {
          assert.deepEqual((await client.keys(`${prefix}:rl:*`)).sort(), [`${prefix}:rl:o:acme`, `${prefix}:rl:u:acme:u-member`]);
        } finally {
          await client.quit();
        }
      });
    });

    it('fails open when Redis is unreachable (admitted uncounted, logged)', async () => {
      // The plugin alone on a Redis that refuses connections: every request is admitted, and the
      // outage is logged once rather than per request.
      const dead = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, retryStrategy: () => 50 });
      dead.on('error', () => undefined);
      const warnings: string[] = [];
      const logger = { warn: (message: string) => warnings.push(message) };
      const config = testConfig(limited(uniquePrefix(), 'bullmq'));
      const hooks = await rateLimitPlugin.create(
        { enabled: true, redisTimeoutMs: 100 } as never,
        {
          config,
          logger,
          redis: { get: () => dead, close: async () => undefined },
        } as never,
      );
      try {
        const ctx = { principal: { orgId: 'acme', userId: 'u-member', keyId: 'k', role: 'member', groups: [] } };
        for (let i = 0; i < 6; i++) await hooks.onRequest?.(ctx as never);
        assert.equal(warnings.length, 1);
        assert.match(warnings[0] ?? '', /admitting requests uncounted/);
      } finally {
        await hooks.close?.();
        dead.disconnect();
      }
    });
  });
});
