// audit: the batch writer (size, interval, retry, bounded buffer, flush on close), the records it
// builds, and over HTTP: records for success, error and 401 calls with route templates and no key,
// usage records and token metrics, nothing lost on shutdown, and the admin endpoint that reads them.
import assert from 'node:assert/strict';
import request from 'supertest';
import auditPlugin from '../../plugins/audit';
import { JsonArrayBuilder, JsonBatchWriter } from '../../plugins/audit/json-batches';
import { auditJsonOf, isoNow, timeOrderedId, usageJsonOf } from '../../plugins/audit/records';
import { decodeAuditCursor } from '../../src/operations/admin/audit-cursor';
import { listAuditRecords } from '../../src/operations/admin/list-audit-records';
import { createLogger } from '../../src/log/logger';
import { createMetrics } from '../../src/log/metrics';
import type { RecordsJson } from '../../src/store/port';
import type { AuditRecord, UsageRecord } from '../../src/store/types';
import { startTestGateway, TEST_KEYS, type TestGateway } from '../helpers/gateway';
import { openTestStore } from '../helpers/store';

const logger = createLogger({ level: 'error', silent: true });
const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

/** A writer whose batches are read back as arrays of numbers (audit items) for the assertions. */
function writer(
  write: (calls: readonly number[]) => Promise<void>,
  options: Partial<{ batchSize: number; flushIntervalMs: number; maxBuffered: number }> = {},
) {
  return new JsonBatchWriter({
    write: (batch) => write(JSON.parse(batch.audit.toString('utf8')) as number[]),
    batchSize: 3,
    flushIntervalMs: 60_000,
    maxBuffered: 100,
    logger,
    ...options,
  });
}
const add = (w: JsonBatchWriter, n: number): void => w.add(JSON.stringify(n), []);

describe('plugins/audit', () => {
  it('audit ids are UUID version 7: the time first, so the primary key grows at its right edge', () => {
    const id = timeOrderedId(0x0123456789ab);
    assert.match(id, /^01234567-89ab-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const ids = [1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000].map((t) => timeOrderedId(t));
    assert.deepEqual([...ids].sort(), ids, 'later ids sort after earlier ones');
    const same = Array.from({ length: 1000 }, () => timeOrderedId(5));
    assert.equal(new Set(same).size, same.length, 'distinct within one millisecond');
    assert.ok(same.every((id) => /^00000000-0005-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)));
  });

  it("builds the records' JSON text field by field: it parses back to the same records, whatever the strings hold", () => {
    const awkward = 'q"uo\\te\ttab\u0001ctl\ud800lone é 😀';
    const ctx = {
      requestId: 'req-9',
      route: { operationId: 'getRun', template: '/v1/runs/{runId}', method: 'get' },
      startedAt: process.hrtime.bigint(),
      principal: { orgId: `org ${awkward}`, userId: awkward, keyId: null, role: 'member', groups: [] },
      resourceIds: { runId: awkward },
      usage: [
        { model: awkward, promptTokens: 3, completionTokens: 0, cachedPromptTokens: 0, cost: null },
        { model: 'm2', promptTokens: 1, completionTokens: 2, cachedPromptTokens: 1, cost: 0.000012 },
      ],
    };
    const at = isoNow();
    const record = JSON.parse(auditJsonOf(ctx as never, { status: 404, aborted: false }, at)) as AuditRecord;
    assert.match(record.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    assert.ok(record.latencyMs >= 0);
    assert.deepEqual(record, {
      id: record.id,
      at,
      orgId: `org ${awkward}`,
      userId: awkward,
      keyId: null,
      method: 'GET',
      route: '/v1/runs/{runId}',
      operationId: 'getRun',
      resourceIds: { runId: awkward },
      status: 404,
      latencyMs: record.latencyMs,
      requestId: 'req-9',
    } satisfies AuditRecord);
    const carrying = JSON.parse(auditJsonOf(ctx as never, { status: 404, aborted: false }, at, ctx.usage[0]!)) as AuditRecord;
    assert.deepEqual(carrying, {
      ...record,
      id: carrying.id,
      latencyMs: carrying.latencyMs,
      model: awkward,
      promptTokens: 3,
      completionTokens: 0,
      cachedPromptTokens: 0,
    });
    const usage = usageJsonOf(ctx as never, at).map((text) => JSON.parse(text) as UsageRecord);
    const who = { at, orgId: `org ${awkward}`, userId: awkward, keyId: null, requestId: 'req-9' };
    assert.deepEqual(usage, [
      { ...who, model: awkward, promptTokens: 3, completionTokens: 0, cachedPromptTokens: 0 },
      { ...who, model: 'm2', promptTokens: 1, completionTokens: 2, cachedPromptTokens: 1, cost: 0.000012 },
    ]);
    assert.equal(new Date(at).toISOString(), at);
    const unauthenticated = JSON.parse(auditJsonOf({ ...ctx, principal: null, resourceIds: {} } as never, { status: 401, aborted: false }, at)) as AuditRecord;
    assert.deepEqual([unauthenticated.orgId, unauthenticated.userId, unauthenticated.keyId, unauthenticated.resourceIds], [null, null, null, {}]);
    assert.deepEqual(usageJsonOf({ ...ctx, principal: null } as never, at), []);
  });

  describe('JsonArrayBuilder', () => {
    it('builds a JSON array item by item, growing past its first buffer, multi-byte text included', () => {
      const builder = new JsonArrayBuilder(16);
      const items = ['a', 'é'.repeat(40), '😀 emoji', 'x'.repeat(1000), { nested: ['"quoted"', null] }];
      for (const item of items) builder.push(JSON.stringify(item));
      assert.equal(builder.count, items.length);
      assert.deepEqual(JSON.parse(builder.finish().toString('utf8')), items);
      assert.equal(new JsonArrayBuilder().finish().toString(), '[]');
    });
  });

  describe('JsonBatchWriter', () => {
    it('writes a full batch at once and the rest on the interval', async () => {
      const batches: number[][] = [];
      const w = writer(async (r) => void batches.push([...r]), { flushIntervalMs: 30 });
      [1, 2, 3, 4].forEach((n) => add(w, n));
      await tick();
      assert.deepEqual(batches, [[1, 2, 3]]);
      await tick(60);
      assert.deepEqual(batches, [[1, 2, 3], [4]]);
      await w.close();
    });

    it('keeps a failed batch, in order, for the next flush', async () => {
      const batches: number[][] = [];
      let fail = true;
      const w = writer(async (r) => {
        if (fail) throw new Error('store down');
        batches.push([...r]);
      });
      [1, 2].forEach((n) => add(w, n));
      await w.flush();
      assert.equal(w.pending, 2);
      add(w, 3);
      await w.flush();
      assert.equal(w.pending, 3, 'still failing: both batches kept');
      fail = false;
      await w.flush();
      assert.deepEqual(batches, [[1, 2], [3]]);
      assert.equal(w.pending, 0);
    });

    it('writes a usage-only call (its audit record excluded) in the usage array', async () => {
      const written: { audit: unknown[]; usage: unknown[] }[] = [];
      const w = new JsonBatchWriter({
        write: async (b) => void written.push({ audit: JSON.parse(b.audit.toString()) as unknown[], usage: JSON.parse(b.usage.toString()) as unknown[] }),
        batchSize: 10,
        flushIntervalMs: 60_000,
        maxBuffered: 100,
        logger,
      });
      w.add(null, ['{"model":"a"}', '{"model":"b"}']);
      w.add('{"id":"x"}', []);
      await w.close();
      assert.deepEqual(written, [{ audit: [{ id: 'x' }], usage: [{ model: 'a' }, { model: 'b' }] }]);
    });

    it('drops the oldest batches beyond maxBuffered calls instead of growing without bound', async () => {
      const batches: number[][] = [];
      let fail = true;
      const w = writer(
        async (r) => {
          if (fail) throw new Error('store down');
          batches.push([...r]);
        },
        { maxBuffered: 4, batchSize: 2 },
      );
      for (let i = 0; i < 9; i++) add(w, i);
      await w.flush();
      assert.ok(w.pending <= 4, `pending ${w.pending}`);
      fail = false;
      await w.close();
      assert.deepEqual(batches.flat(), [6, 7, 8], 'the newest calls are the ones kept (whole batches are dropped)');
    });

    it("reuses written batches' memory, never while a write still reads it", async () => {
      const seen: number[] = [];
      const buffers = new Set<ArrayBufferLike>();
      const w = new JsonBatchWriter({
        write: async (batch) => {
          buffers.add(batch.audit.buffer);
          await tick(5); // more calls arrive and batches are sealed while this write is in flight
          seen.push(...(JSON.parse(batch.audit.toString('utf8')) as number[]));
        },
        batchSize: 2,
        flushIntervalMs: 60_000,
        maxBuffered: 1000,
        logger,
      });
      for (let i = 0; i < 40; i++) {
        add(w, i);
        if (i % 3 === 0) await tick(1);
      }
      await w.close();
      assert.deepEqual(
        seen,
        Array.from({ length: 40 }, (_, i) => i),
      );
      assert.ok(buffers.size < 20, `20 batches written from ${buffers.size} buffers`);
    });

    it('reports the backlog (agw_audit_pending_calls) as batches are sealed and written', async () => {
      const reported: number[] = [];
      let fail = true;
      const w = new JsonBatchWriter({
        write: async () => {
          if (fail) throw new Error('store down');
        },
        batchSize: 2,
        flushIntervalMs: 60_000,
        maxBuffered: 100,
        logger,
        onPending: (n) => reported.push(n),
      });
      [1, 2, 3].forEach((n) => add(w, n));
      await w.flush();
      assert.equal(reported.at(-1), 3, 'a failing store leaves all three buffered');
      fail = false;
      await w.flush();
      assert.equal(reported.at(-1), 0);
      assert.ok(reported.includes(1), 'each written batch is reported');
    });

    it('close() writes everything buffered', async () => {
      const written: number[] = [];
      const w = writer(async (r) => void written.push(...r), { batchSize: 2 });
      for (let i = 0; i < 7; i++) add(w, i);
      await w.close();
      assert.deepEqual(written, [0, 1, 2, 3, 4, 5, 6]);
    });
  });

  describe('plugin', () => {
    function fakeDeps() {
      const audit: AuditRecord[] = [];
      const usage: UsageRecord[] = [];
      const metrics = createMetrics();
      const store = {
        audit: {
          insertJson: async (batch: RecordsJson) => {
            audit.push(...(JSON.parse(batch.audit.toString('utf8')) as AuditRecord[]));
            usage.push(...(JSON.parse(batch.usage.toString('utf8')) as UsageRecord[]));
          },
        },
      };
      return { audit, usage, metrics, deps: { store, logger, metrics } as never };
    }
    const route = (operationId: string, template: string) => ({ operationId, template, method: 'post' });

    it('records the call with its route template and no key, and turns usage into records and metrics', async () => {
      const { audit, usage, metrics, deps } = fakeDeps();
      const hooks = await auditPlugin.create({ enabled: true, flushIntervalMs: 60_000, excludeOperations: ['getLiveness', 'getUsage'] } as never, deps);
      const ctx = {
        requestId: 'req-1',
        route: route('createChatCompletion', '/v1/chat/completions'),
        startedAt: process.hrtime.bigint(),
        principal: { orgId: 'acme', userId: 'u1', keyId: 'key_1', role: 'member', groups: [] },
        resourceIds: {},
        usage: [{ model: 'demo', promptTokens: 12, completionTokens: 5, cachedPromptTokens: 0, cost: null }],
      };
      hooks.onFinish?.(ctx as never, { status: 200, aborted: false });
      hooks.onFinish?.({ ...ctx, route: route('getLiveness', '/health/live'), usage: [] } as never, { status: 200, aborted: false });
      // Several upstream calls in one request, and usage of a call whose operation is not audited.
      const two = [
        { model: 'demo', promptTokens: 1, completionTokens: 2, cachedPromptTokens: 0, cost: null },
        { model: 'other', promptTokens: 3, completionTokens: 4, cachedPromptTokens: 2, cost: 0.5 },
      ];
      hooks.onFinish?.({ ...ctx, requestId: 'req-2', usage: two } as never, { status: 200, aborted: false });
      hooks.onFinish?.({ ...ctx, requestId: 'req-3', route: route('getUsage', '/v1/x') } as never, { status: 200, aborted: false });
      assert.equal(audit.length, 0, 'written off the request path');
      await hooks.close?.();
      assert.deepEqual(
        audit.map((r) => r.requestId),
        ['req-1', 'req-2'],
        'excluded operations are not recorded',
      );
      const [record, severalCalls] = audit;
      assert.equal(record?.route, '/v1/chat/completions');
      assert.equal(record?.method, 'POST');
      assert.equal(record?.keyId, 'key_1');
      assert.equal(record?.status, 200);
      assert.ok((record?.latencyMs ?? -1) >= 0);
      // One upstream call: its usage travels in the audit record, no usage record of its own.
      assert.deepEqual([record?.model, record?.promptTokens, record?.completionTokens], ['demo', 12, 5]);
      assert.equal(severalCalls?.model, undefined);
      assert.deepEqual(
        usage.map((u) => [u.orgId, u.model, u.promptTokens, u.completionTokens, u.cachedPromptTokens, u.cost, u.requestId]),
        [
          ['acme', 'demo', 1, 2, 0, undefined, 'req-2'],
          ['acme', 'other', 3, 4, 2, 0.5, 'req-2'],
          ['acme', 'demo', 12, 5, 0, undefined, 'req-3'],
        ],
      );
      const text = await metrics.registry.metrics();
      assert.match(text, /agw_upstream_tokens_total\{org="acme",model="demo",kind="prompt"\} 25/);
      assert.match(text, /agw_upstream_tokens_total\{org="acme",model="demo",kind="completion"\} 12/);
    });
  });

  it('publishes the backlog of a store that does not accept writes as agw_audit_pending_calls', async () => {
    const metrics = createMetrics();
    const store = {
      audit: {
        insertJson: async () => {
          throw new Error('store down');
        },
      },
    };
    const hooks = await auditPlugin.create({ enabled: true, flushIntervalMs: 60_000 } as never, { store, logger, metrics } as never);
    const ctx = {
      requestId: 'r',
      route: { operationId: 'listModels', template: '/v1/models', method: 'get' },
      startedAt: process.hrtime.bigint(),
      principal: null,
      resourceIds: {},
      usage: [],
    };
    hooks.onFinish?.(ctx as never, { status: 200, aborted: false });
    hooks.onFinish?.({ ...ctx, requestId: 'r2' } as never, { status: 200, aborted: false });
    await hooks.close?.(); // gives up after a few attempts, the records still buffered
    assert.match(await metrics.registry.metrics(), /agw_audit_pending_calls 2/);
  });

  describe('listAuditRecords handler', () => {
    it('asks for one record more than the page to know whether another page exists', async () => {
      const rows = [1, 2, 3].map((i) => ({ id: `r${i}`, at: `2024-01-0${i}T00:00:00.000Z` }));
      const queries: unknown[] = [];
      const store = { audit: { list: async (q: { limit: number }) => (queries.push(q), rows.slice(0, q.limit)) } };
      const call = (query: Record<string, unknown>) =>
        listAuditRecords({ principal: { orgId: 'acme', userId: 'a', keyId: null, role: 'admin', groups: [] }, query } as never, { store } as never);
      const full = await call({ limit: 3 });
      assert.deepEqual(full?.body, { items: rows, nextCursor: null });
      const partial = (await call({ limit: 2, since: '2024-01-01T00:00:00+01:00' }))?.body as { items: unknown[]; nextCursor: string };
      assert.deepEqual(partial.items, rows.slice(0, 2));
      assert.deepEqual(decodeAuditCursor(partial.nextCursor), { at: rows[1]?.at, id: 'r2' });
      assert.deepEqual(queries[1], {
        orgId: 'acme',
        since: '2023-12-31T23:00:00.000Z',
        until: null,
        userId: null,
        keyId: null,
        model: null,
        operationId: null,
        status: null,
        order: 'asc',
        limit: 3,
        after: null,
      });
    });
  });

  describe('over HTTP', function () {
    this.timeout(60_000); // the first embedded store of a run builds its template
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ config: { plugins: { auth: { enabled: true }, audit: { enabled: true, flushIntervalMs: 50 } } } });
    });
    after(() => gw?.close());

    async function recordsOf(orgId: string, count: number): Promise<AuditRecord[]> {
      const deadline = Date.now() + 3_000;
      for (;;) {
        const records = await gw.store.audit.list({ orgId, since: null, limit: 1000, after: null });
        if (records.length >= count || Date.now() > deadline) return records;
        await tick(50);
      }
    }

    it('records successful and failed calls with route templates, resource ids, status and no key', async () => {
      await request(gw.url).get('/v1/models?limit=5').set('x-api-key', TEST_KEYS.outsider).set('x-request-id', 'audit-ok-1').expect(200);
      await request(gw.url).get('/v1/runs/00000000-0000-4000-8000-000000000000').set('x-api-key', TEST_KEYS.outsider).expect(404);
      const records = await recordsOf('other', 2);
      const ok = records.find((r) => r.requestId === 'audit-ok-1');
      assert.ok(ok);
      assert.deepEqual(
        { ...ok, id: undefined, at: undefined, latencyMs: undefined },
        {
          id: undefined,
          at: undefined,
          latencyMs: undefined,
          orgId: 'other',
          userId: 'u-outsider',
          keyId: ok.keyId,
          method: 'GET',
          route: '/v1/models',
          operationId: 'listModels',
          resourceIds: {},
          status: 200,
          requestId: 'audit-ok-1',
        },
      );
      assert.match(ok.keyId ?? '', /^key_/);
      const missing = records.find((r) => r.operationId === 'getRun');
      assert.equal(missing?.route, '/v1/runs/{runId}');
      assert.equal(missing?.status, 404);
      assert.deepEqual(missing?.resourceIds, { runId: '00000000-0000-4000-8000-000000000000' });
      assert.ok(!JSON.stringify(records).includes(TEST_KEYS.outsider), 'the key never reaches the audit trail');
    });

    it('records a 401 (no organization known) without the key that was tried', async () => {
      const inserted: AuditRecord[] = [];
      const original = gw.store.audit.insertJson.bind(gw.store.audit);
      gw.store.audit.insertJson = async (batch) => {
        inserted.push(...(JSON.parse(batch.audit.toString('utf8')) as AuditRecord[]));
        return original(batch);
      };
      try {
        await request(gw.url).get('/v1/agents/list').set('x-api-key', 'agw_wrong_key_0000000000000').set('x-request-id', 'audit-401').expect(401);
        const deadline = Date.now() + 2_000;
        while (!inserted.some((r) => r.requestId === 'audit-401') && Date.now() < deadline) await tick(25);
        const record = inserted.find((r) => r.requestId === 'audit-401');
        assert.ok(record);
        assert.equal(record.status, 401);
        assert.equal(record.orgId, null);
        assert.equal(record.keyId, null);
        assert.equal(record.route, '/v1/agents/list');
        assert.ok(!JSON.stringify(record).includes('agw_wrong_key'));
      } finally {
        gw.store.audit.insertJson = original;
      }
    });

    it('GET /v1/admin/audit: organization admins page through their own trail, oldest first', async () => {
      const seeded: AuditRecord[] = [0, 1, 2, 3, 4].map((i) => ({
        id: `seed-${i}`,
        at: `2001-01-0${i + 1}T00:00:00.000Z`,
        orgId: 'other',
        userId: 'u-outsider',
        keyId: null,
        method: 'GET',
        route: '/v1/models',
        operationId: 'listModels',
        resourceIds: {},
        status: 200,
        latencyMs: 1,
        requestId: `seed-${i}`,
      }));
      const acmeSeed: AuditRecord = { ...seeded[0]!, id: 'seed-acme', orgId: 'acme', userId: 'u-admin', requestId: 'seed-acme' };
      await gw.store.audit.insertMany([...seeded, acmeSeed]);
      const page1 = await request(gw.url).get('/v1/admin/audit?limit=2').set('x-api-key', TEST_KEYS.outsider).expect(200);
      assert.deepEqual(page1.body.items, seeded.slice(0, 2));
      assert.equal(typeof page1.body.nextCursor, 'string');
      const page2 = await request(gw.url).get(`/v1/admin/audit?limit=2&after=${page1.body.nextCursor}`).set('x-api-key', TEST_KEYS.outsider).expect(200);
      assert.deepEqual(page2.body.items, seeded.slice(2, 4));
      const since = await request(gw.url).get('/v1/admin/audit?since=2001-01-04T00:00:00Z&limit=2').set('x-api-key', TEST_KEYS.outsider).expect(200);
      assert.deepEqual(
        since.body.items.map((r: AuditRecord) => r.id),
        ['seed-3', 'seed-4'],
      );
      const none = await request(gw.url).get('/v1/admin/audit?since=2999-01-01T00:00:00Z').set('x-api-key', TEST_KEYS.outsider).expect(200);
      assert.deepEqual(none.body, { items: [], nextCursor: null });
      // Another organization's admin never sees them.
      const acme = await request(gw.url).get('/v1/admin/audit?limit=1000').set('x-api-key', TEST_KEYS.admin).expect(200);
      // Not vacuous: acme's own record is listed, and nothing of another organization.
      assert.ok(acme.body.items.some((r: AuditRecord) => r.id === 'seed-acme'));
      assert.ok(acme.body.items.every((r: AuditRecord) => r.orgId === 'acme'));
    });

    it('GET /v1/admin/audit: 403 for members, 400 for a bad cursor, in the flat envelope', async () => {
      const member = await request(gw.url).get('/v1/admin/audit').set('x-api-key', TEST_KEYS.member).expect(403);
      assert.deepEqual(member.body, { error: 'Forbidden', message: 'Only organization admins may read the audit trail.' });
      const bad = await request(gw.url).get('/v1/admin/audit?after=not-a-cursor').set('x-api-key', TEST_KEYS.admin).expect(400);
      assert.deepEqual(bad.body, { error: 'Bad Request', message: 'Invalid cursor: pass the nextCursor of a previous page as after.' });
      const limit = await request(gw.url).get('/v1/admin/audit?limit=0').set('x-api-key', TEST_KEYS.admin).expect(400);
      assert.equal(limit.body.error, 'Bad Request');
    });

    it('does not record health probes', async () => {
      await request(gw.url).get('/health/live').set('x-request-id', 'audit-probe').expect(200);
      // A call made after the probe, and recorded: records are written in order, so once this one is in
      // the store, the probe's would be too had it been recorded.
      await request(gw.url).get('/v1/models').set('x-api-key', TEST_KEYS.admin).set('x-request-id', 'audit-after-probe').expect(200);
      const deadline = Date.now() + 30_000;
      let acme = await recordsOf('acme', 0);
      while (!acme.some((r) => r.requestId === 'audit-after-probe') && Date.now() < deadline) {
        await tick(50);
        acme = await recordsOf('acme', 0);
      }
      assert.ok(
        acme.some((r) => r.requestId === 'audit-after-probe'),
        'the later call was written',
      );
      const all = [...acme, ...(await recordsOf('other', 0))];
      assert.ok(!all.some((r) => r.requestId === 'audit-probe'));
    });
  });

  it('loses nothing on shutdown: close() flushes the buffer (SIGTERM path)', async function () {
    this.timeout(60_000);
    const { store, cleanup } = await openTestStore('embedded');
    try {
      const gw = await startTestGateway({
        store,
        config: { plugins: { auth: { enabled: true }, audit: { enabled: true, flushIntervalMs: 60_000, batchSize: 1000 } } },
      });
      for (let i = 0; i < 5; i++) await request(gw.url).get('/v1/models').set(gw.auth('admin')).set('x-request-id', `shutdown-${i}`).expect(200);
      await tick(20);
      assert.equal((await store.audit.list({ orgId: 'acme', since: null, limit: 100, after: null })).length, 0, 'still buffered');
      await gw.close();
      const records = await store.audit.list({ orgId: 'acme', since: null, limit: 100, after: null });
      assert.deepEqual(
        records.map((r) => r.requestId).sort(),
        [0, 1, 2, 3, 4].map((i) => `shutdown-${i}`),
      );
    } finally {
      await cleanup();
    }
  });
});
