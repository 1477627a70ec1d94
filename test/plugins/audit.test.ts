// audit: the batch writer (size, interval, retry, bounded buffer, flush on close), the records it
// builds, and over HTTP: records for success, error and 401 calls with route templates and no key,
// usage records and token metrics, nothing lost on shutdown, and the admin endpoint that reads them.
import assert from 'node:assert/strict';
import request from 'supertest';
import auditPlugin from '../../plugins/audit';
import { BatchWriter } from '../../plugins/audit/batch-writer';
import { createLogger } from '../../src/log/logger';
import { createMetrics } from '../../src/log/metrics';
import type { AuditRecord, UsageRecord } from '../../src/store/types';
import { startTestGateway, TEST_KEYS, type TestGateway } from '../helpers/gateway';
import { openTestStore } from '../helpers/store';

const logger = createLogger({ level: 'error', silent: true });
const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

function writer(write: (records: readonly number[]) => Promise<void>, options: Partial<{ batchSize: number; flushIntervalMs: number; maxBuffered: number }> = {}) {
  return new BatchWriter<number>({ name: 'test', write, batchSize: 3, flushIntervalMs: 60_000, maxBuffered: 100, logger, ...options });
}

describe('plugins/audit', () => {
  describe('BatchWriter', () => {
    it('writes a full batch at once and the rest on the interval', async () => {
      const batches: number[][] = [];
      const w = writer(async (r) => void batches.push([...r]), { flushIntervalMs: 30 });
      [1, 2, 3, 4].forEach((n) => w.add(n));
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
      [1, 2].forEach((n) => w.add(n));
      await w.flush();
      assert.equal(w.pending, 2);
      w.add(3);
      fail = false;
      await w.flush();
      await w.flush();
      assert.deepEqual(batches, [[1, 2, 3]]);
    });

    it('drops the oldest records beyond maxBuffered instead of growing without bound', async () => {
      const w = writer(async () => {
        throw new Error('store down');
      }, { maxBuffered: 5, batchSize: 100 });
      for (let i = 0; i < 8; i++) w.add(i);
      assert.equal(w.pending, 5);
      await w.close();
    });

    it('close() writes everything buffered', async () => {
      const written: number[] = [];
      const w = writer(async (r) => void written.push(...r), { batchSize: 2 });
      for (let i = 0; i < 7; i++) w.add(i);
      await w.close();
      assert.deepEqual(written, [0, 1, 2, 3, 4, 5, 6]);
    });
  });

  describe('plugin', () => {
    function fakeDeps() {
      const audit: AuditRecord[] = [];
      const usage: UsageRecord[] = [];
      const metrics = createMetrics();
      const store = { audit: { insertMany: async (r: readonly AuditRecord[]) => void audit.push(...r) }, usage: { insertMany: async (r: readonly UsageRecord[]) => void usage.push(...r) } };
      return { audit, usage, metrics, deps: { store, logger, metrics } as never };
    }
    const route = (operationId: string, template: string) => ({ operationId, template, method: 'post' });

    it('records the call with its route template and no key, and turns usage into records and metrics', async () => {
      const { audit, usage, metrics, deps } = fakeDeps();
      const hooks = await auditPlugin.create({ enabled: true, flushIntervalMs: 60_000 } as never, deps);
      const ctx = {
        requestId: 'req-1',
        route: route('createChatCompletion', '/v1/chat/completions'),
        startedAt: process.hrtime.bigint(),
        principal: { orgId: 'acme', userId: 'u1', keyId: 'key_1', role: 'member', groups: [] },
        resourceIds: {},
        usage: [{ model: 'demo', promptTokens: 12, completionTokens: 5 }],
      };
      hooks.onFinish?.(ctx as never, { status: 200, aborted: false });
      hooks.onFinish?.({ ...ctx, route: route('getLiveness', '/health/live'), usage: [] } as never, { status: 200, aborted: false });
      assert.equal(audit.length, 0, 'written off the request path');
      await hooks.close?.();
      assert.equal(audit.length, 1, 'health probes are excluded');
      const [record] = audit;
      assert.equal(record?.route, '/v1/chat/completions');
      assert.equal(record?.method, 'POST');
      assert.equal(record?.keyId, 'key_1');
      assert.equal(record?.status, 200);
      assert.ok((record?.latencyMs ?? -1) >= 0);
      assert.deepEqual(
        usage.map((u) => [u.orgId, u.model, u.promptTokens, u.completionTokens, u.requestId]),
        [['acme', 'demo', 12, 5, 'req-1']],
      );
      const text = await metrics.registry.metrics();
      assert.match(text, /agw_upstream_tokens_total\{org="acme",model="demo",kind="prompt"\} 12/);
      assert.match(text, /agw_upstream_tokens_total\{org="acme",model="demo",kind="completion"\} 5/);
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
        { id: undefined, at: undefined, latencyMs: undefined, orgId: 'other', userId: 'u-outsider', keyId: ok.keyId, method: 'GET', route: '/v1/models', operationId: 'listModels', resourceIds: {}, status: 200, requestId: 'audit-ok-1' },
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
      const original = gw.store.audit.insertMany.bind(gw.store.audit);
      gw.store.audit.insertMany = async (records) => {
        inserted.push(...records);
        return original(records);
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
        gw.store.audit.insertMany = original;
      }
    });

    it('does not record health probes', async () => {
      await request(gw.url).get('/health/live').set('x-request-id', 'audit-probe').expect(200);
      await tick(120);
      const all = [...(await recordsOf('acme', 0)), ...(await recordsOf('other', 0))];
      assert.ok(!all.some((r) => r.requestId === 'audit-probe'));
    });
  });

  it('loses nothing on shutdown: close() flushes the buffer (SIGTERM path)', async function () {
    this.timeout(60_000);
    const { store, cleanup } = await openTestStore('embedded');
    try {
      const gw = await startTestGateway({ store, config: { plugins: { auth: { enabled: true }, audit: { enabled: true, flushIntervalMs: 60_000, batchSize: 1000 } } } });
      for (let i = 0; i < 5; i++) await request(gw.url).get('/v1/models').set(gw.auth('admin')).set('x-request-id', `shutdown-${i}`).expect(200);
      await tick(20);
      assert.equal((await store.audit.list({ orgId: 'acme', since: null, limit: 100, after: null })).length, 0, 'still buffered');
      await gw.close();
      const records = await store.audit.list({ orgId: 'acme', since: null, limit: 100, after: null });
      assert.deepEqual(records.map((r) => r.requestId).sort(), [0, 1, 2, 3, 4].map((i) => `shutdown-${i}`));
    } finally {
      await cleanup();
    }
  });
});
