// GET /v1/usage over real gateway calls to a fake upstream, on both SQL stores: sums of tokens, cached
// prompt tokens and cost (models[].pricing) per UTC day, model, user and key; a member sees only their
// own usage. GET /v1/models lists each model's context window and prices.
import assert from 'node:assert/strict';
import { chatCompletionBody, startFakeOpenAiUpstream, type FakeOpenAiUpstream } from '../fixtures/upstreams/openai-upstream';
import { startTestGateway, TEST_KEYS, type TestGateway } from '../helpers/gateway';

const USAGE = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, prompt_tokens_details: { cached_tokens: 4 } };
const DAY = 86_400_000;

interface UsageItem {
  day?: string;
  model?: string;
  userId?: string | null;
  keyId?: string | null;
  requests: number;
  promptTokens: number;
  cachedPromptTokens: number;
  completionTokens: number;
  cost: number;
}

for (const driver of ['embedded', 'postgres'] as const) {
  describe(`GET /v1/usage (${driver})`, function () {
    // The first embedded store of a process runs PGlite's initdb: slow on a loaded machine.
    this.timeout(300_000);
    let upstream: FakeOpenAiUpstream;
    let gw: TestGateway;

    const get = async (path: string, who: keyof typeof TEST_KEYS): Promise<{ status: number; body: Record<string, unknown> }> => {
      const res = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${TEST_KEYS[who]}` } });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const chat = async (who: keyof typeof TEST_KEYS, model: string): Promise<void> => {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_KEYS[who]}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
      });
      assert.equal(res.status, 200, await res.text());
    };

    before(async () => {
      upstream = await startFakeOpenAiUpstream();
      gw = await startTestGateway({
        driver,
        config: {
          providers: { up: { type: 'openai', baseUrl: upstream.baseUrl, apiKey: 'sk-test', retries: { max: 0 } } },
          models: [
            { id: 'gpt', provider: 'up', contextWindow: 128000, pricing: { input: 1, cachedInput: 0.5, output: 2 } },
            { id: 'gpt-free', provider: 'up' },
            { id: 'demo', provider: 'demo' },
          ],
          plugins: { auth: { enabled: true }, audit: { enabled: true, flushIntervalMs: 20 } },
        },
      });
      upstream.script(...Array.from({ length: 3 }, () => ({ kind: 'json' as const, body: chatCompletionBody('gpt', 'hi', USAGE as never) })));
      await chat('admin', 'gpt');
      await chat('admin', 'gpt');
      await chat('member', 'gpt-free');
      // An agent run's step three days ago (a usage record of its own, not carried by an audit record).
      const keys = await gw.store.keys.listByOrg('acme');
      const adminKey = keys.find((k) => k.userId === 'u-admin')!.id;
      const old = new Date(Date.now() - 3 * DAY).toISOString();
      await gw.store.usage.insertMany([
        {
          at: old,
          orgId: 'acme',
          userId: 'u-admin',
          keyId: adminKey,
          model: 'gpt',
          promptTokens: 1000,
          completionTokens: 500,
          cachedPromptTokens: 0,
          cost: 0.002,
          requestId: 'run-1',
        },
      ]);
      // The audit trail writes the calls' usage in batches.
      for (let i = 0; i < 200; i += 1) {
        const { body } = await get('/v1/usage?groupBy=model', 'admin');
        if ((body['items'] as UsageItem[]).reduce((n, item) => n + item.requests, 0) >= 4) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });

    after(async () => {
      await gw?.close();
      await upstream?.close();
    });

    it('sums tokens, cached prompt tokens and cost per UTC day and model for an admin', async () => {
      const { status, body } = await get('/v1/usage?groupBy=day,model', 'admin');
      assert.equal(status, 200);
      assert.equal(body['currency'], 'USD');
      const today = new Date().toISOString().slice(0, 10);
      const old = new Date(Date.now() - 3 * DAY).toISOString().slice(0, 10);
      assert.deepEqual(body['items'], [
        { day: old, model: 'gpt', requests: 1, promptTokens: 1000, cachedPromptTokens: 0, completionTokens: 500, cost: 0.002 },
        // Two calls of 7 prompt tokens (4 cached) and 3 completion tokens at 1 / 0.5 / 2 USD per million.
        { day: today, model: 'gpt', requests: 2, promptTokens: 14, cachedPromptTokens: 8, completionTokens: 6, cost: 0.000022 },
        { day: today, model: 'gpt-free', requests: 1, promptTokens: 7, cachedPromptTokens: 4, completionTokens: 3, cost: 0 },
      ]);
      const since = Date.parse(String(body['since']));
      const until = Date.parse(String(body['until']));
      assert.equal(until - since, 30 * DAY, 'the last 30 days by default');
    });

    it('groups by user and key; a window leaves older usage out', async () => {
      const keys = await gw.store.keys.listByOrg('acme');
      const keyOf = (user: string): string => keys.find((k) => k.userId === user)!.id;
      const since = new Date(Date.now() - DAY).toISOString();
      const { body } = await get(`/v1/usage?groupBy=user,key&since=${encodeURIComponent(since)}`, 'admin');
      assert.deepEqual(body['items'], [
        { userId: 'u-admin', keyId: keyOf('u-admin'), requests: 2, promptTokens: 14, cachedPromptTokens: 8, completionTokens: 6, cost: 0.000022 },
        { userId: 'u-member', keyId: keyOf('u-member'), requests: 1, promptTokens: 7, cachedPromptTokens: 4, completionTokens: 3, cost: 0 },
      ]);
      const month = await get('/v1/usage?groupBy=month', 'admin');
      assert.equal(
        (month.body['items'] as UsageItem[]).reduce((n, item) => n + item.requests, 0),
        4,
      );
    });

    it("shows a member only their own usage, and refuses another user's (403)", async () => {
      const { body } = await get('/v1/usage?groupBy=user,model', 'member');
      assert.deepEqual(body['items'], [
        { userId: 'u-member', model: 'gpt-free', requests: 1, promptTokens: 7, cachedPromptTokens: 4, completionTokens: 3, cost: 0 },
      ]);
      assert.equal((await get('/v1/usage?userId=u-admin', 'member')).status, 403);
      assert.equal((await get('/v1/usage?userId=u-member&groupBy=model', 'member')).status, 200);
      assert.equal((await get('/v1/usage?groupBy=user', 'outsider')).body['items'] instanceof Array, true);
      assert.deepEqual((await get('/v1/usage?groupBy=user', 'outsider')).body['items'], [], "another organization's usage is never shown");
    });

    it('refuses a reversed or too long window and an unknown grouping (400)', async () => {
      assert.equal((await get('/v1/usage?since=2025-02-01T00:00:00Z&until=2025-01-01T00:00:00Z', 'admin')).status, 400);
      assert.equal((await get('/v1/usage?since=2020-01-01T00:00:00Z&until=2025-01-01T00:00:00Z', 'admin')).status, 400);
      assert.equal((await get('/v1/usage?groupBy=day,week', 'admin')).status, 400);
    });

    it("lists each model's context window and prices in /v1/models", async () => {
      const { body } = await get('/v1/models', 'admin');
      const data = body['data'] as Record<string, unknown>[];
      assert.deepEqual(
        data.map((m) => [m['id'], m['context_window'], m['pricing']]),
        [
          ['gpt', 128000, { input: 1, cached_input: 0.5, output: 2 }],
          ['gpt-free', null, null],
          ['demo', null, null],
        ],
      );
    });
  });
}
