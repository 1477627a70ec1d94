// The budgets plugin: token and cost budgets per organization, user and key, refused before the
// upstream call with 429 + Retry-After and a message naming the budget, counted across two gateways
// sharing Redis, reset at the period boundary (the clock injected), the 80% warning logged once; and
// a run whose owner is over budget fails. Cost arithmetic and the cached-token reading are unit tests.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import winston from 'winston';
import { usageCounts } from '../../src/formats/chat/peek-usage';
import { budgetGuardOf } from '../../src/model-call/budget-guard';
import { costOf } from '../../src/model-call/pricing';
import { createLogger } from '../../src/log/logger';
import { createStore } from '../../src/store/index';
import type { Store } from '../../src/store/port';
import type { BudgetSpec } from '../../src/store/types';
import { periodOf } from '../../plugins/budgets/periods';
import type { Guard } from '../../plugins/budgets/guard';
import { chatCompletionBody, startFakeOpenAiUpstream, type FakeOpenAiUpstream } from '../fixtures/upstreams/openai-upstream';
import { deleteRedisKeys, REDIS_URL } from '../helpers/backends';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { openTestStore, type TestStore } from '../helpers/store';
import { startRunUpstream, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { AGENT, runConfig, waitForStatus } from '../runs/helpers';

const KEYS = {
  a1: 'agw_budget_a1_0123456789abcdefghijklmnopq',
  a2: 'agw_budget_a2_0123456789abcdefghijklmnopq',
  b1: 'agw_budget_b1_0123456789abcdefghijklmnopq',
  c1: 'agw_budget_c1_0123456789abcdefghijklmnopq',
} as const;

/** USD per million: input 1, cached input 0.5, output 2. */
const PRICING = { input: 1, cachedInput: 0.5, output: 2 };

/** Every call of the fake upstream: 7 prompt tokens (4 of them cached) and 3 completion tokens: 10 tokens, 11e-6 USD. */
const USAGE = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, prompt_tokens_details: { cached_tokens: 4 } };

function captureLogger(lines: Record<string, unknown>[]): winston.Logger {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  // The service's own allowlist format first: what the log keeps is what the test sees.
  const base = createLogger({ level: 'warn' });
  return winston.createLogger({ level: 'warn', format: base.format, transports: [new winston.transports.Stream({ stream: sink })] });
}

/** Gives every key its budgets as the console-api store will (ApiKeyRecord.budgets), on a store object. */
function withKeyBudgets(store: Store, budgets: Record<string, BudgetSpec[]>): Store {
  const resolve = store.keys.resolve.bind(store.keys);
  const get = store.keys.get.bind(store.keys);
  const byUser = (userId: string): BudgetSpec[] | undefined => budgets[userId];
  store.keys.resolve = async (hash) => {
    const resolved = await resolve(hash);
    const extra = resolved ? byUser(resolved.user.id) : undefined;
    return resolved && extra ? { ...resolved, key: { ...resolved.key, budgets: extra } } : resolved;
  };
  store.keys.get = async (id) => {
    const key = await get(id);
    const extra = key ? byUser(key.userId) : undefined;
    return key && extra ? { ...key, budgets: extra } : key;
  };
  return store;
}

async function settle(...gateways: TestGateway[]): Promise<void> {
  for (const gw of gateways) await (budgetGuardOf(gw.gateway.services.pipeline) as Guard).settled();
}

function chat(gw: TestGateway, key: string): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt', messages: [{ role: 'user', content: 'hello' }] }),
  });
}

describe('plugins/budgets', function () {
  this.timeout(240_000);

  describe('arithmetic', () => {
    it('costs a call from its pricing: cached prompt tokens at the cached-input price, the rest of the prompt at input, completion at output', () => {
      assert.equal(costOf(PRICING, 7, 4, 3), 11e-6);
      assert.equal(costOf({ input: 3, output: 15 }, 1_000_000, 400_000, 2_000_000), 33, 'no cachedInput: cached tokens at the input price');
      assert.equal(costOf({ input: 2.5, cachedInput: 1.25, output: 10 }, 1_000_000, 1_000_000, 0), 1.25);
      assert.equal(costOf(PRICING, 10, 50, 0), 5e-6, 'a cached count above the prompt counts as all of it');
      assert.equal(costOf(undefined, 10, 0, 10), null, 'no pricing: no cost');
      // Nano-dollar rounding: a thousand calls sum to the exact figure.
      let sum = 0;
      for (let i = 0; i < 1000; i += 1) sum += costOf({ input: 0.15, output: 0.6 }, 33, 0, 7)!;
      assert.equal(Math.round(sum * 1e9) / 1e9, 0.00915);
    });

    it("reads cached prompt tokens from each wire's usage object (OpenAI chat, Responses, Anthropic)", () => {
      assert.deepEqual(usageCounts(USAGE), { promptTokens: 7, completionTokens: 3, cachedPromptTokens: 4 });
      assert.deepEqual(usageCounts({ input_tokens: 20, output_tokens: 5, input_tokens_details: { cached_tokens: 8 } }), {
        promptTokens: 20,
        completionTokens: 5,
        cachedPromptTokens: 8,
      });
      // Anthropic's input_tokens leaves the cache reads and writes out.
      assert.deepEqual(usageCounts({ input_tokens: 3, cache_read_input_tokens: 100, cache_creation_input_tokens: 10, output_tokens: 2 }), {
        promptTokens: 113,
        completionTokens: 2,
        cachedPromptTokens: 100,
      });
    });

    it('periods are UTC days and calendar months', () => {
      const now = new Date('2025-12-31T23:59:59.500Z');
      assert.deepEqual(
        [periodOf('day', now).start.toISOString(), periodOf('day', now).end.toISOString(), periodOf('day', now).label],
        ['2025-12-31T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'd2025-12-31'],
      );
      assert.deepEqual(
        [periodOf('month', now).start.toISOString(), periodOf('month', now).end.toISOString()],
        ['2025-12-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'],
      );
    });
  });

  describe('two gateways sharing Redis and PostgreSQL', () => {
    let upstream: FakeOpenAiUpstream;
    let pg: TestStore;
    let second: Store;
    let gwA: TestGateway;
    let gwB: TestGateway;
    const prefix = `agwbud${randomBytes(4).toString('hex')}`;
    const logs: Record<string, unknown>[] = [];
    let offsetMs = 0;
    // Noon UTC today: a call and its reset are a known distance from the next day.
    const noon = new Date(new Date().toISOString().slice(0, 10) + 'T12:00:00.000Z').getTime();
    const clock = { now: () => new Date(noon + offsetMs) };

    before(async () => {
      upstream = await startFakeOpenAiUpstream();
      pg = await openTestStore('postgres');
      second = await createStore(pg.config, { logger: createLogger({ silent: true }) });
      const config = {
        providers: { up: { type: 'openai', baseUrl: upstream.baseUrl, apiKey: 'sk-test', retries: { max: 0 } } },
        models: [{ id: 'gpt', provider: 'up', pricing: PRICING, contextWindow: 128000 }],
        store: { driver: 'postgres', url: pg.config.url },
        queue: { driver: 'bullmq', redisUrl: REDIS_URL, prefix },
        organizations: [
          // Organization budget: 20 tokens a day (two calls).
          {
            id: 'org-a',
            models: ['*'],
            budgets: [{ metric: 'tokens', period: 'day', limit: 20 }],
            users: [
              { id: 'u-a1', keys: [KEYS.a1] },
              { id: 'u-a2', keys: [KEYS.a2] },
            ],
          },
          // User budget: 20 micro-USD a month (two calls of 11).
          { id: 'org-b', models: ['*'], users: [{ id: 'u-b1', keys: [KEYS.b1], budgets: [{ metric: 'cost', period: 'month', limit: 0.00002 }] }] },
          // Key budget (below): 10 tokens a day (one call).
          { id: 'org-c', models: ['*'], users: [{ id: 'u-c1', keys: [KEYS.c1] }] },
        ],
        plugins: { auth: { enabled: true }, budgets: { enabled: true } },
      };
      const keyBudgets = { 'u-c1': [{ metric: 'tokens' as const, period: 'day' as const, limit: 10 }] };
      const logger = captureLogger(logs);
      gwA = await startTestGateway({ store: withKeyBudgets(pg.store, keyBudgets), config, clock, logger });
      gwB = await startTestGateway({ store: withKeyBudgets(second, keyBudgets), config, clock, logger });
    });

    beforeEach(() => {
      upstream.script(...Array.from({ length: 20 }, () => ({ kind: 'json' as const, body: chatCompletionBody('gpt', 'hi', USAGE as never) })));
    });

    after(async () => {
      await gwA?.close();
      await gwB?.close();
      await second?.close();
      await pg?.cleanup();
      await upstream?.close();
      await deleteRedisKeys(prefix);
    });

    it("refuses the organization's next call on the other gateway once its token budget is used up (429, Retry-After, the budget named), warns once at 80%, and admits again the next UTC day", async () => {
      offsetMs = 0;
      assert.equal((await chat(gwA, KEYS.a1)).status, 200);
      await settle(gwA);
      assert.equal((await chat(gwB, KEYS.a2)).status, 200, 'the other gateway and user draw on the same organization budget');
      await settle(gwB);
      const calls = upstream.requests.length;
      const refused = await chat(gwA, KEYS.a1);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('retry-after'), String(12 * 3600), 'seconds to the next UTC day');
      const body = (await refused.json()) as { error: { message: string; type: string; code: string } };
      assert.equal(body.error.code, 'insufficient_quota');
      assert.match(body.error.message, /organization "org-a" tokens budget of 20 tokens per day \(UTC\) is used up \(20 tokens used\)/);
      assert.match(body.error.message, new RegExp(`resets at ${new Date(noon + 12 * 3600_000).toISOString().replace(/\./g, '\\.')}`));
      assert.equal(upstream.requests.length, calls, 'refused before the upstream call');
      assert.equal((await chat(gwB, KEYS.a2)).status, 429, 'and on the other gateway');

      const status = await fetch(`${gwB.url}/v1/usage/budgets`, { headers: { authorization: `Bearer ${KEYS.a2}` } });
      assert.deepEqual(((await status.json()) as { items: unknown[] }).items, [
        {
          scope: 'organization',
          id: 'org-a',
          metric: 'tokens',
          period: 'day',
          limit: 20,
          used: 20,
          ratio: 1,
          resetsAt: new Date(noon + 12 * 3600_000).toISOString(),
        },
      ]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const warnings = logs.filter((l) => l['message'] === 'budget 80% used' && l['holderId'] === 'org-a');
      assert.equal(warnings.length, 1, 'the 80% warning is logged once across both gateways');
      assert.deepEqual(
        [warnings[0]!['scope'], warnings[0]!['metric'], warnings[0]!['period'], warnings[0]!['limit'], warnings[0]!['orgId']],
        ['organization', 'tokens', 'day', 20, 'org-a'],
      );

      offsetMs = 12 * 3600_000 + 1000; // 00:00:01 the next day
      assert.equal((await chat(gwB, KEYS.a1)).status, 200, 'a new day, a new budget');
    });

    it("refuses a user's calls once their cost budget is used up, naming the user and the month's end", async () => {
      offsetMs = 0;
      assert.equal((await chat(gwA, KEYS.b1)).status, 200);
      await settle(gwA);
      assert.equal((await chat(gwB, KEYS.b1)).status, 200, '11 of 20 micro-USD used: admitted');
      await settle(gwB);
      const refused = await chat(gwA, KEYS.b1);
      assert.equal(refused.status, 429);
      const now = new Date(noon);
      const monthEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
      assert.equal(refused.headers.get('retry-after'), String((monthEnd.getTime() - noon) / 1000));
      const { error } = (await refused.json()) as { error: { message: string } };
      assert.match(error.message, /user "u-b1" cost budget of 0\.00002 USD per month \(UTC\) is used up \(0\.000022 USD used\)/);
      assert.match(error.message, new RegExp(monthEnd.toISOString().replace(/\./g, '\\.')));
    });

    it("refuses a key's calls once its token budget is used up", async () => {
      offsetMs = 0;
      assert.equal((await chat(gwB, KEYS.c1)).status, 200);
      await settle(gwB);
      const refused = await chat(gwA, KEYS.c1);
      assert.equal(refused.status, 429);
      const { error } = (await refused.json()) as { error: { message: string } };
      assert.match(error.message, /API key "[^"]+" tokens budget of 10 tokens per day/);
    });
  });

  describe('counted by the store (no Redis), and agent runs', () => {
    let upstream: RunUpstream;
    let pg: TestStore;
    let gw: TestGateway;

    before(async () => {
      upstream = await startRunUpstream();
      pg = await openTestStore('postgres');
      const base = runConfig(upstream);
      gw = await startTestGateway({
        store: pg.store,
        config: {
          ...base,
          models: [{ id: 'fake', provider: 'fake', pricing: PRICING }],
          organizations: [
            {
              id: 'acme',
              models: ['*'],
              budgets: [{ metric: 'tokens', period: 'month', limit: 150 }],
              users: [{ id: 'u-admin', role: 'admin', keys: [KEYS.a1] }],
            },
          ],
          plugins: { auth: { enabled: true }, audit: { enabled: true, flushIntervalMs: 20 }, budgets: { enabled: true, storeRefreshMs: 0 } },
        },
      });
    });

    after(async () => {
      await gw?.close();
      await pg?.cleanup();
      await upstream?.close();
    });

    it('refuses a gateway call from the usage records in the store, and fails a run whose organization is over budget before its model call', async () => {
      upstream.rule({ match: 'hello', judge: false, usage: { prompt: 100, completion: 60 } });
      const first = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEYS.a1}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fake', messages: [{ role: 'user', content: 'hello' }] }),
      });
      assert.equal(first.status, 200, await first.clone().text());
      // The audit trail writes the call's usage (160 tokens) in a batch a moment later.
      for (let i = 0; i < 100; i += 1) {
        const spent = await pg.store.usage.spent('acme', null, null, new Date(Date.now() - 31 * 86_400_000).toISOString());
        if (spent.organization.tokens >= 160) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const refused = await fetch(`${gw.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEYS.a1}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fake', input: 'hello' }),
      });
      assert.equal(refused.status, 429, 'Responses too');
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
      const calls = upstream.calls.length;

      const res = await fetch(`${gw.url}/v1/agents/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEYS.a1}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agentId: AGENT, inputs: [{ name: 'Topic', value: 'meters' }] }),
      });
      assert.equal(res.status, 202, await res.clone().text());
      const { runId } = (await res.json()) as { runId: string };
      const run = await waitForStatus(pg.store, runId, 'terminal', 30_000);
      assert.equal(run.status, 'failure');
      assert.equal(run.errorCode, 'budget_exceeded');
      assert.match(run.error ?? '', /organization "acme" tokens budget of 150 tokens per month/);
      assert.equal(upstream.calls.length, calls, 'no model call was made for the run');
    });
  });
});
