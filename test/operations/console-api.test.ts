// The console's API operations over HTTP on a real gateway (auth on): GET /v1/me; key management with
// its rules (shown once, hashed at rest, a member manages only their own keys, models within the
// organization's and the calling key's, revocation at once, expiry, the allow-list on model calls and
// GET /v1/models); GET /v1/runs (filters, pages without gaps or dupes, member vs admin visibility);
// GET /v1/responses; GET /v1/admin/dlp; audit filters and newest-first order; a key's allow-list
// bounding the agents it reaches (listing, reading, triggering, their runs and run conversations).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { agentUpsert } from '../../src/agents/definition';
import { hashApiKey } from '../../src/security/keys';
import type { AuditRecord, ResponseRecord, RunRecord } from '../../src/store/types';
import { AGENTS, agentsConfig, insertRun } from '../agents/fixtures';
import { organizationsWithDlp } from '../helpers/config';
import { startTestGateway, type TestGateway } from '../helpers/gateway';

type Who = 'admin' | 'member' | 'viewer' | 'outsider';

/** u-member's agents of the allow-list tests: on demo2; on demo without judged steps; on demo2, then demo (versions). */
const ON_DEMO2 = '77777777-7777-4777-8777-777777777777';
const ON_DEMO = '88888888-8888-4888-8888-888888888888';
const REVISED = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';

describe('console API operations', function () {
  this.timeout(120_000);
  let gw: TestGateway;

  before(async () => {
    const config = agentsConfig();
    const mine = {
      organization: 'acme',
      createdBy: 'u-member',
      description: 'd',
      instructions: 'Be brief.',
      steps: [{ prompt: 'Say hi.' }],
      timeoutSeconds: 60,
    };
    gw = await startTestGateway({
      config: {
        ...config,
        agents: [
          ...(config['agents'] as Record<string, unknown>[]),
          { ...mine, id: ON_DEMO2, name: 'On demo2', model: 'demo2' },
          { ...mine, id: ON_DEMO, name: 'On demo', model: 'demo' },
          { ...mine, id: REVISED, name: 'Revised', model: 'demo2' },
        ],
        // The judge of every step with an objective (the agentsConfig agents have one): demo2.
        evaluation: { model: 'demo2' },
        plugins: { auth: { enabled: true }, dlp: { enabled: true } },
        models: [
          { id: 'demo', provider: 'demo', created: 1700000000 },
          { id: 'demo2', provider: 'demo', created: 1700000001 },
        ],
        organizations: organizationsWithDlp({ enabled: true, detectors: ['email', 'iban'], custom: [{ name: 'ticket', pattern: 'TCK-[0-9]+' }] }),
      },
    });
  });
  after(async () => {
    await gw?.close();
  });

  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const get = (path: string, who: Who = 'admin') => request(gw.url).get(path).set(gw.auth(who));
  const createKey = (body: Record<string, unknown>, who: Who | Record<string, string> = 'member') =>
    request(gw.url)
      .post('/v1/keys')
      .set(typeof who === 'string' ? gw.auth(who) : who)
      .send(body);
  const FLAT_ERRORS: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not found' };
  const flat = (res: request.Response, status: number) => {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['error', 'message']);
    assert.equal(res.body.error, FLAT_ERRORS[status]);
  };

  describe('GET /v1/me', () => {
    it("names the caller's user, organization and key", async () => {
      const res: request.Response = await get('/v1/me', 'member').expect(200);
      assert.deepEqual(res.body.user, { id: 'u-member', name: 'Member', role: 'member' });
      assert.deepEqual(res.body.organization, { id: 'acme', name: 'Acme' });
      const mine = await get('/v1/keys', 'member').expect(200);
      const config = mine.body.items.find((k: { source: string }) => k.source === 'config');
      assert.deepEqual(res.body.key, { id: config.id, name: 'config', prefix: config.prefix, expiresAt: null });
    });
  });

  describe('/v1/keys', () => {
    it('creates a key shown once, stored only as its hash, that works at once and acts as its user', async () => {
      const res = await createKey({ name: 'laptop', budgets: [{ metric: 'cost', period: 'month', limit: 5 }] }).expect(201);
      assert.match(res.body.key, /^agw_[A-Za-z0-9_-]{43}$/);
      assert.equal(res.body.userId, 'u-member');
      assert.equal(res.body.source, 'api');
      assert.equal(res.body.prefix, res.body.key.slice(0, 8));
      assert.deepEqual(res.body.budgets, [{ metric: 'cost', period: 'month', limit: 5 }]);
      assert.equal(res.body.models, null);
      const stored = await gw.store.keys.get(res.body.id);
      assert.equal(stored?.hash, hashApiKey(res.body.key));
      assert.ok(!JSON.stringify(stored).includes(res.body.key), 'the key itself is not stored');
      const listed = (await get('/v1/keys', 'member').expect(200)).body.items.find((k: { id: string }) => k.id === res.body.id);
      assert.equal(listed.key, undefined, 'never shown again');
      assert.equal(listed.name, 'laptop');
      const me = await request(gw.url).get('/v1/me').set(bearer(res.body.key)).expect(200);
      assert.equal(me.body.user.id, 'u-member');
      assert.equal(me.body.key.id, res.body.id);
    });

    it("a member lists only their own keys; the organization's keys are for admins (config keys show as source config)", async () => {
      const mine = (await get('/v1/keys', 'member').expect(200)).body;
      assert.equal(mine.nextCursor, null);
      assert.ok(mine.items.length > 0 && mine.items.every((k: { userId: string }) => k.userId === 'u-member'));
      flat(await get('/v1/keys?scope=organization', 'member'), 403);
      const all = (await get('/v1/keys?scope=organization', 'admin').expect(200)).body.items as { userId: string; source: string }[];
      assert.deepEqual([...new Set(all.map((k) => k.userId))].sort(), ['u-admin', 'u-member', 'u-viewer']);
      assert.ok(all.filter((k) => k.source === 'config').length >= 3);
      const outsider = (await get('/v1/keys?scope=organization', 'outsider').expect(200)).body.items as { userId: string }[];
      assert.deepEqual([...new Set(outsider.map((k) => k.userId))], ['u-outsider'], 'another organization never');
    });

    it('a member cannot create a key for someone else; an admin can, for a user of the organization only', async () => {
      flat(await createKey({ name: 'x', userId: 'u-viewer' }), 403);
      await createKey({ name: 'mine', userId: 'u-member' }).expect(201);
      const forViewer = await createKey({ name: 'for viewer', userId: 'u-viewer' }, 'admin').expect(201);
      assert.equal(forViewer.body.userId, 'u-viewer');
      const me = await request(gw.url).get('/v1/me').set(bearer(forViewer.body.key)).expect(200);
      assert.deepEqual(me.body.user, { id: 'u-viewer', name: 'Viewer', role: 'member' }, 'the key has its user’s rights, not the admin’s');
      flat(await get('/v1/keys?scope=organization', 'admin').set(bearer(forViewer.body.key)), 403);
      const outside = await createKey({ name: 'x', userId: 'u-outsider' }, 'admin');
      flat(outside, 400);
      assert.match(outside.body.message, /userId/);
    });

    it("refuses models outside the organization's (naming the model), and a past expiry", async () => {
      const unknown = await createKey({ name: 'x', models: ['demo', 'gpt-9'] });
      flat(unknown, 400);
      assert.match(unknown.body.message, /'gpt-9'/);
      // Organization other may use demo only.
      const notOrg = await createKey({ name: 'x', models: ['demo2'] }, 'outsider');
      flat(notOrg, 400);
      assert.match(notOrg.body.message, /'demo2'/);
      await createKey({ name: 'x', models: ['demo'] }, 'outsider').expect(201);
      flat(await createKey({ name: 'x', expiresAt: new Date(Date.now() - 1000).toISOString() }), 400);
      flat(await createKey({ name: '' }), 400);
      flat(await createKey({ name: 'x', budgets: Array.from({ length: 5 }, () => ({ metric: 'tokens', period: 'day', limit: 1 })) }), 400);
    });

    it('an allow-listed key calls only its models, sees only them in GET /v1/models, and cannot mint a wider key', async () => {
      const { key } = (await createKey({ name: 'narrow', models: ['demo2'] }).expect(201)).body as { key: string };
      const models = await request(gw.url).get('/v1/models').set(bearer(key)).expect(200);
      assert.deepEqual(
        models.body.data.map((m: { id: string }) => m.id),
        ['demo2'],
      );
      const all = await get('/v1/models', 'member').expect(200);
      assert.deepEqual(
        all.body.data.map((m: { id: string }) => m.id),
        ['demo', 'demo2'],
      );
      const chat = (model: string) =>
        request(gw.url)
          .post('/v1/chat/completions')
          .set(bearer(key))
          .send({ model, messages: [{ role: 'user', content: 'hi' }] });
      await chat('demo2').expect(200);
      const refused = await chat('demo').expect(404);
      assert.equal(refused.body.error.code, 'model_not_found');
      assert.match(refused.body.error.message, /'demo'/);
      const responses = await request(gw.url).post('/v1/responses').set(bearer(key)).send({ model: 'demo', input: 'hi' }).expect(404);
      assert.equal(responses.body.error.code, 'model_not_found');
      const messages = await request(gw.url)
        .post('/v1/messages')
        .set(bearer(key))
        .send({ model: 'demo', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
        .expect(404);
      assert.match(JSON.stringify(messages.body), /'demo'/);

      const wider = await createKey({ name: 'wider', models: ['demo'] }, bearer(key));
      flat(wider, 400);
      const inherited = await createKey({ name: 'same' }, bearer(key)).expect(201);
      assert.deepEqual(inherited.body.models, ['demo2'], 'a key made with a restricted key keeps its restriction');
    });

    it('revocation takes effect at once, also for a cached key; a member revokes only their own keys', async () => {
      const { id, key } = (await createKey({ name: 'short-lived' }).expect(201)).body as { id: string; key: string };
      await request(gw.url).get('/v1/me').set(bearer(key)).expect(200); // now cached
      const admins = (await get('/v1/keys', 'admin').expect(200)).body.items as { id: string }[];
      flat(await request(gw.url).delete(`/v1/keys/${admins[0]!.id}`).set(gw.auth('member')), 404);
      flat(await request(gw.url).delete(`/v1/keys/${id}`).set(gw.auth('outsider')), 404);
      const revoked = await request(gw.url).delete(`/v1/keys/${id}`).set(gw.auth('member')).expect(200);
      assert.equal(revoked.body.id, id);
      assert.ok(revoked.body.revokedAt);
      flat(await request(gw.url).get('/v1/me').set(bearer(key)), 401);
      flat(await request(gw.url).delete(`/v1/keys/${id}`).set(gw.auth('member')), 404);
      const listed = (await get('/v1/keys', 'member').expect(200)).body.items as { id: string }[];
      assert.ok(!listed.some((k) => k.id === id), 'revoked keys are left out by default');
      const withRevoked = (await get('/v1/keys?includeRevoked=true', 'member').expect(200)).body.items as { id: string }[];
      assert.ok(withRevoked.some((k) => k.id === id));
      // An admin revokes any key of the organization.
      const viewers = await createKey({ name: 'v', userId: 'u-viewer' }, 'admin').expect(201);
      await request(gw.url).delete(`/v1/keys/${viewers.body.id}`).set(gw.auth('admin')).expect(200);
      flat(await request(gw.url).get('/v1/me').set(bearer(viewers.body.key)), 401);
    });

    it('an expired key is refused, also while its resolution is cached', async () => {
      const expiresAt = new Date(Date.now() + 1500).toISOString();
      const { key } = (await createKey({ name: 'expiring', expiresAt }).expect(201)).body as { key: string };
      const me = await request(gw.url).get('/v1/me').set(bearer(key)).expect(200);
      assert.equal(me.body.key.expiresAt, expiresAt);
      await new Promise((r) => setTimeout(r, Date.parse(expiresAt) - Date.now() + 50));
      const refused = await request(gw.url).get('/v1/me').set(bearer(key));
      flat(refused, 401);
      assert.match(refused.body.message, /expired/);
    });
  });

  describe('GET /v1/runs', () => {
    const runs: RunRecord[] = [];
    before(async () => {
      // Several runs per timestamp (ties by id), across agents, users and statuses.
      const plan: [string, string][] = [
        [AGENTS.private, 'u-member'],
        [AGENTS.main, 'u-admin'],
        [AGENTS.group, 'u-member'],
        [AGENTS.user, 'u-admin'],
        [AGENTS.private, 'u-viewer'],
      ];
      // Finished runs only: an in-progress run without a lease would be taken up by the recovery sweep.
      const statuses = ['success', 'failure', 'cancelled', 'success'] as const;
      for (let i = 0; i < 25; i++) {
        const [agentId, userId] = plan[i % plan.length]!;
        const createdAt = new Date(Date.parse('2025-06-01T00:00:00.000Z') + Math.floor(i / 2) * 60_000).toISOString();
        runs.push(await insertRun(gw.store, agentId, createdAt, statuses[i % 4]!, userId));
      }
    });
    const newestFirst = (list: RunRecord[]) =>
      [...list].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1)).map((r) => r.id);

    async function walk(who: Who, query: string, limit: number): Promise<{ ids: string[]; pages: number; items: Record<string, unknown>[] }> {
      const ids: string[] = [];
      const items: Record<string, unknown>[] = [];
      let pages = 0;
      let after: string | null = null;
      do {
        const res: request.Response = await get(`/v1/runs?limit=${limit}${query}${after ? `&after=${encodeURIComponent(after)}` : ''}`, who).expect(200);
        pages++;
        ids.push(...res.body.items.map((r: { runId: string }) => r.runId));
        items.push(...res.body.items);
        after = res.body.nextCursor;
      } while (after && pages < 100);
      return { ids, pages, items };
    }

    it('an admin pages through every run, newest first, without gaps or dupes', async () => {
      const { ids, pages } = await walk('admin', '&createdBefore=2025-06-02T00:00:00Z', 4);
      assert.deepEqual(ids, newestFirst(runs));
      assert.equal(pages, Math.ceil(runs.length / 4));
    });

    it("a member sees their own runs and shared agents' runs, never another's run of an unshared agent", async () => {
      // u-viewer: group (via finance) and user agents are shared with them; private and main are not.
      const { ids, items } = await walk('viewer', '&createdBefore=2025-06-02T00:00:00Z', 3);
      const expected = runs.filter((r) => r.agentId === AGENTS.group || r.agentId === AGENTS.user || r.userId === 'u-viewer');
      assert.deepEqual(ids, newestFirst(expected));
      assert.ok(!ids.some((id) => runs.find((r) => r.id === id)!.agentId === AGENTS.main));
      const own = items.find((r) => r['triggeredBy'] === 'u-viewer');
      assert.equal(own?.['agentId'], AGENTS.private, 'their own run of an agent they cannot see');
      const privateOnly = await walk('viewer', `&agentId=${AGENTS.private}&createdBefore=2025-06-02T00:00:00Z`, 10);
      assert.deepEqual(privateOnly.ids, newestFirst(runs.filter((r) => r.agentId === AGENTS.private && r.userId === 'u-viewer')));
      assert.deepEqual((await walk('outsider', '', 10)).ids, [], 'another organization sees none');
    });

    it('filters by agent, status and inclusive time bounds; items carry the agent name and who triggered the run', async () => {
      const { ids, items } = await walk('admin', `&agentId=${AGENTS.main}&status=failure`, 2);
      assert.deepEqual(ids, newestFirst(runs.filter((r) => r.agentId === AGENTS.main && r.status === 'failure')));
      assert.ok(ids.length > 0);
      assert.equal(items[0]?.['agentName'], 'Main agent');
      assert.equal(items[0]?.['triggeredBy'], 'u-admin');
      assert.equal(items[0]?.['status'], 'failure');
      const from = runs[4]!.createdAt;
      const to = runs[9]!.createdAt;
      const bounded = await walk('admin', `&createdAfter=${from}&createdBefore=${to}`, 5);
      assert.deepEqual(bounded.ids, newestFirst(runs.filter((r) => r.createdAt >= from && r.createdAt <= to)));
      flat(await get('/v1/runs?status=done'), 400);
      flat(await get('/v1/runs?limit=101'), 400);
      flat(await get('/v1/runs?after=garbage'), 400);
    });
  });

  describe('GET /v1/responses', () => {
    it("lists the caller's stored responses newest first (an admin: the organization's), across pages", async () => {
      const made: ResponseRecord[] = [];
      for (let i = 0; i < 7; i++) {
        const record: ResponseRecord = {
          id: `resp_${randomUUID().replace(/-/g, '')}`,
          orgId: 'acme',
          userId: i % 2 === 0 ? 'u-member' : 'u-viewer',
          status: 'completed',
          model: 'demo',
          conversationId: null,
          previousResponseId: null,
          stored: i !== 3,
          body: {},
          inputItems: [],
          createdAt: new Date(Date.parse('2030-01-01T00:00:00Z') + i * 1000).toISOString(),
          updatedAt: new Date().toISOString(),
          expiresAt: null,
          lease: null,
        };
        made.push(record);
        await gw.store.responses.create(record);
      }
      const walk = async (who: Who) => {
        const ids: string[] = [];
        let after: string | null = null;
        do {
          const res: request.Response = await get(`/v1/responses?limit=2${after ? `&after=${after}` : ''}`, who).expect(200);
          ids.push(...res.body.items.map((r: { id: string }) => r.id));
          after = res.body.nextCursor;
        } while (after);
        return ids;
      };
      const expected = (user?: string) =>
        made
          .filter((r) => r.stored && (!user || r.userId === user))
          .reverse()
          .map((r) => r.id);
      assert.deepEqual(
        (await walk('member')).filter((id) => made.some((r) => r.id === id)),
        expected('u-member'),
      );
      assert.deepEqual(
        (await walk('admin')).filter((id) => made.some((r) => r.id === id)),
        expected(),
      );
      const first = (await get('/v1/responses?limit=1', 'viewer').expect(200)).body.items[0];
      assert.deepEqual(first, {
        id: made[5]!.id,
        createdAt: made[5]!.createdAt,
        model: 'demo',
        status: 'completed',
        conversationId: null,
        previousResponseId: null,
        userId: 'u-viewer',
      });
    });
  });

  describe('GET /v1/admin/dlp', () => {
    it("shows an admin the organization's policy; members get 403", async () => {
      const res: request.Response = await get('/v1/admin/dlp').expect(200);
      assert.deepEqual(res.body, { configured: true, enabled: true, detectors: ['email', 'iban'], custom: [{ name: 'ticket', pattern: 'TCK-[0-9]+' }] });
      assert.deepEqual((await get('/v1/admin/dlp', 'outsider').expect(200)).body, { configured: false, enabled: false, detectors: [], custom: [] });
      flat(await get('/v1/admin/dlp', 'member'), 403);
    });
  });

  describe('GET /v1/admin/audit filters and order', () => {
    const records: AuditRecord[] = [];
    before(async () => {
      for (let i = 0; i < 12; i++) {
        records.push({
          id: `aud_${randomUUID()}`,
          at: new Date(Date.parse('2031-01-01T00:00:00Z') + i * 1000).toISOString(),
          orgId: 'acme',
          userId: i % 2 === 0 ? 'u-member' : 'u-viewer',
          keyId: i % 3 === 0 ? 'key_a' : 'key_b',
          method: 'POST',
          route: '/v1/chat/completions',
          operationId: 'createChatCompletion',
          resourceIds: {},
          status: [200, 404, 500][i % 3]!,
          latencyMs: 1,
          requestId: randomUUID(),
          ...(i % 4 === 0 ? { model: 'demo2' } : { model: 'demo' }),
        });
      }
      await gw.store.audit.insertMany(records);
    });
    const since = '&since=2031-01-01T00:00:00Z';

    async function walk(query: string): Promise<string[]> {
      const ids: string[] = [];
      let after: string | null = null;
      do {
        const res: request.Response = await get(`/v1/admin/audit?limit=2${since}${query}${after ? `&after=${after}` : ''}`).expect(200);
        ids.push(...res.body.items.map((r: { id: string }) => r.id));
        after = res.body.nextCursor;
      } while (after);
      return ids;
    }
    const newest = (pred: (r: AuditRecord) => boolean) =>
      records
        .filter(pred)
        .reverse()
        .map((r) => r.id);

    it('lists newest first with order=desc and oldest first by default, across pages', async () => {
      assert.deepEqual(
        await walk('&order=desc'),
        newest(() => true),
      );
      assert.deepEqual(await walk(''), newest(() => true).reverse());
    });

    it('filters by user, key, model, operation, status, status class and until', async () => {
      assert.deepEqual(
        await walk('&order=desc&userId=u-viewer'),
        newest((r) => r.userId === 'u-viewer'),
      );
      assert.deepEqual(
        await walk('&order=desc&keyId=key_a'),
        newest((r) => r.keyId === 'key_a'),
      );
      assert.deepEqual(
        await walk('&order=desc&model=demo2'),
        newest((r) => r.model === 'demo2'),
      );
      assert.deepEqual(await walk('&order=desc&operationId=getRun'), []);
      assert.deepEqual(
        await walk('&order=desc&status=404'),
        newest((r) => r.status === 404),
      );
      assert.deepEqual(
        await walk('&order=desc&status=5xx'),
        newest((r) => r.status >= 500),
      );
      assert.deepEqual(
        await walk('&order=desc&status=4xx&userId=u-member'),
        newest((r) => r.status === 404 && r.userId === 'u-member'),
      );
      assert.deepEqual(
        await walk('&order=desc&until=2031-01-01T00:00:05Z'),
        newest((r) => r.at <= '2031-01-01T00:00:05.000Z'),
      );
      flat(await get('/v1/admin/audit?status=42'), 400);
      flat(await get('/v1/admin/audit?order=sideways'), 400);
      flat(await get('/v1/admin/audit?order=desc', 'member'), 403);
    });
  });

  describe("a key's model allow-list bounds the agents it reaches", () => {
    let narrow: Record<string, string>; // u-member's key limited to demo
    let narrowAdmin: Record<string, string>; // u-admin's key limited to demo
    let hidden: { runId: string; conversationId: string }; // a run of ON_DEMO2 by u-member's unrestricted key
    let hiddenResponse: string; // resp_run_ of ON_DEMO2, invoked by u-member's unrestricted key

    const as = (headers: Record<string, string>) => ({
      get: (path: string) => request(gw.url).get(path).set(headers),
      post: (path: string) => request(gw.url).post(path).set(headers),
    });
    async function finished(runId: string, headers: Record<string, string>): Promise<Record<string, unknown>> {
      for (let i = 0; i < 300; i++) {
        const res = await as(headers).get(`/v1/runs/${runId}`).expect(200);
        if (res.body.status !== 'in_progress') return res.body;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`run ${runId} still in progress`);
    }
    async function listedRuns(headers: Record<string, string>, query = ''): Promise<string[]> {
      const ids: string[] = [];
      let after: string | null = null;
      do {
        const res: request.Response = await as(headers)
          .get(`/v1/runs?limit=7${query}${after ? `&after=${encodeURIComponent(after)}` : ''}`)
          .expect(200);
        ids.push(...res.body.items.map((r: { runId: string }) => r.runId));
        after = res.body.nextCursor;
      } while (after);
      return ids;
    }
    const notFound = (res: request.Response, what: string) => {
      flat(res, 404);
      assert.equal(res.body.message, `${what} not found.`);
    };

    before(async () => {
      narrow = bearer((await createKey({ name: 'demo only', models: ['demo'] }).expect(201)).body.key);
      narrowAdmin = bearer((await createKey({ name: 'admin, demo only', models: ['demo'] }, 'admin').expect(201)).body.key);
      hidden = (await request(gw.url).post('/v1/agents/runs').set(gw.auth('member')).send({ agentId: ON_DEMO2 }).expect(202)).body;
      assert.equal((await finished(hidden.runId, gw.auth('member')))['status'], 'success');
      const invoked = await request(gw.url)
        .post('/v1/responses')
        .set(gw.auth('member'))
        .send({ model: `agent/${ON_DEMO2}`, input: 'hi' })
        .expect(200);
      hiddenResponse = invoked.body.id;
    });

    it('lists and shows only agents whose models are on the list, the judge model included; an unrestricted key as before', async () => {
      const listed = async (headers: Record<string, string>) =>
        ((await as(headers).get('/v1/agents/list').expect(200)).body.items as { agentId: string }[]).map((a) => a.agentId);
      const all = await listed(gw.auth('member'));
      assert.ok([ON_DEMO2, ON_DEMO, AGENTS.private].every((id) => all.includes(id)));
      const seen = await listed(narrow);
      assert.ok(seen.includes(ON_DEMO), 'an agent on demo');
      assert.ok(!seen.includes(ON_DEMO2), 'not an agent on demo2');
      assert.ok(!seen.includes(AGENTS.private), 'not an agent on demo whose judged step demo2 evaluates');
      assert.ok(!(await listed(narrowAdmin)).includes(ON_DEMO2), 'an admin key neither');

      notFound(await as(narrow).get(`/v1/agents/${ON_DEMO2}`), `Agent ${ON_DEMO2}`);
      notFound(await as(narrow).get(`/v1/agents/${AGENTS.private}`), `Agent ${AGENTS.private}`);
      notFound(await as(narrow).get(`/v1/agents/${ON_DEMO2}/webhooks`), `Agent ${ON_DEMO2}`);
      await as(narrow).get(`/v1/agents/${ON_DEMO}`).expect(200);
      await as(gw.auth('member')).get(`/v1/agents/${ON_DEMO2}`).expect(200);
      const both = bearer((await createKey({ name: 'demo and demo2', models: ['demo', 'demo2'] }).expect(201)).body.key);
      await as(both).get(`/v1/agents/${AGENTS.private}`).expect(200);
    });

    it('cannot trigger such an agent (404 as an unknown agent, also as agent/<id> on /v1/responses); runs one within the list', async () => {
      notFound(await as(narrow).post('/v1/agents/runs').send({ agentId: ON_DEMO2 }), `Agent ${ON_DEMO2}`);
      notFound(await as(narrow).post('/v1/agents/runs').send({ agentId: AGENTS.private, inputs: [] }), `Agent ${AGENTS.private}`);
      const invoked = await as(narrow)
        .post('/v1/responses')
        .send({ model: `agent/${ON_DEMO2}`, input: 'hi' });
      assert.equal(invoked.status, 404, JSON.stringify(invoked.body));
      assert.equal(invoked.body.error.code, 'model_not_found');
      assert.equal(invoked.body.error.message, `The model 'agent/${ON_DEMO2}' does not exist or you do not have access to it.`);

      const allowed = (await as(narrow).post('/v1/agents/runs').send({ agentId: ON_DEMO }).expect(202)).body as { runId: string };
      assert.equal((await finished(allowed.runId, narrow))['status'], 'success');
      assert.ok((await listedRuns(narrow)).includes(allowed.runId));
    });

    it("cannot read, list or act on a run of such an agent, though the same user's unrestricted key made it", async () => {
      await as(gw.auth('member')).get(`/v1/runs/${hidden.runId}`).expect(200);
      await as(gw.auth('member')).get(`/v1/conversations/${hidden.conversationId}/items`).expect(200);
      notFound(await as(narrow).get(`/v1/runs/${hidden.runId}`), `Run ${hidden.runId}`);
      notFound(await as(narrow).get(`/v1/runs/${hidden.runId}/evals`), `Run ${hidden.runId}`);
      notFound(await as(narrow).post(`/v1/runs/${hidden.runId}/restart`), `Run ${hidden.runId}`);
      notFound(await as(narrow).post(`/v1/runs/${hidden.runId}/retry`), `Run ${hidden.runId}`);
      notFound(await as(narrow).post(`/v1/runs/${hidden.runId}/cancel`), `Run ${hidden.runId}`);
      notFound(await as(narrowAdmin).get(`/v1/runs/${hidden.runId}`), `Run ${hidden.runId}`);
      const items = await as(narrow).get(`/v1/conversations/${hidden.conversationId}/items`);
      assert.equal(items.status, 404, JSON.stringify(items.body));
      await as(gw.auth('member')).get(`/v1/responses/${hiddenResponse}`).expect(200);
      assert.equal((await as(narrow).get(`/v1/responses/${hiddenResponse}`)).status, 404);

      assert.ok((await listedRuns(gw.auth('member'))).includes(hidden.runId), 'the unrestricted key lists it');
      assert.ok(!(await listedRuns(narrow)).includes(hidden.runId));
      assert.deepEqual(await listedRuns(narrow, `&agentId=${ON_DEMO2}`), []);
      assert.ok((await listedRuns(gw.auth('admin'))).includes(hidden.runId));
      assert.ok(!(await listedRuns(narrowAdmin)).includes(hidden.runId), 'an admin key neither');
    });

    it("retry is 403 when the run's own agent version used a model outside the list, though the agent's current one is within it", async () => {
      // A failed run of version 1 (demo2), then version 2 on demo: the run is visible, its retry would call demo2.
      const run = await insertRun(gw.store, REVISED, new Date().toISOString(), 'failure', 'u-member');
      const configured = gw.config.agents.find((a) => a.id === REVISED)!;
      assert.equal((await gw.store.agents.upsert(agentUpsert({ ...configured, model: 'demo' }, 'Member'))).agent.version, 2);
      await as(narrow).get(`/v1/runs/${run.id}`).expect(200);
      const refused = await as(narrow).post(`/v1/runs/${run.id}/retry`);
      flat(refused, 403);
      assert.match(refused.body.message, /version 1/);
      const retried = await as(gw.auth('member')).post(`/v1/runs/${run.id}/retry`).expect(200);
      assert.equal(retried.body.status, 'in_progress');
      await finished(run.id, gw.auth('member'));
    });
  });
});
