// What an audit record may hold of the request: path parameters only as the operation declares them
// and once validated (a webhook's secret token never; its agent id instead), and never more than
// 2 KB whatever the caller sent (values shortened, the record marked).
import assert from 'node:assert/strict';
import request from 'supertest';
import { AUDIT_RECORD_MAX_BYTES, boundedRecord } from '../../plugins/audit/bounded-record';
import type { AuditRecord } from '../../src/store/types';
import { startTestGateway, type TestGateway } from '../helpers/gateway';

const HOOKED = '77777777-7777-4777-8777-777777777777';

function record(resourceIds: Record<string, string>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: '0190a000-0000-7000-8000-000000000000',
    at: '2026-11-26T00:00:00.000Z',
    orgId: 'acme',
    userId: 'u-admin',
    keyId: null,
    method: 'GET',
    route: '/v1/conversations/{conversation_id}/items',
    operationId: 'listConversationItems',
    resourceIds,
    status: 200,
    latencyMs: 1.5,
    requestId: 'r-1',
    ...extra,
  });
}

describe('plugins/audit: path parameters and record size', () => {
  describe('boundedRecord', () => {
    it('leaves a record within 2 KB as it is', () => {
      const json = record({ conversation_id: 'conv_1' }, { model: 'gpt-test' });
      assert.equal(boundedRecord(json), json);
    });

    it('shortens a record over 2 KB, marking it and each value it cut', () => {
      const cases = [
        { conversation_id: 'x'.repeat(15_000) },
        { conversation_id: '\u0001'.repeat(5_000) }, // 6 bytes of JSON each
        { conversation_id: '€'.repeat(5_000), other: '😀'.repeat(3_000) }, // multi-byte, surrogate pairs
        Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`key${i}`, `value${i}`])),
      ];
      for (const ids of cases) {
        const bounded = boundedRecord(record(ids, { model: 'm'.repeat(3_000) }));
        assert.ok(Buffer.byteLength(bounded) <= AUDIT_RECORD_MAX_BYTES, `${Buffer.byteLength(bounded)} bytes`);
        const parsed = JSON.parse(bounded) as AuditRecord;
        assert.equal(parsed.truncated, true);
        assert.equal(parsed.requestId, 'r-1');
        assert.equal(parsed.status, 200);
        assert.ok(parsed.model?.endsWith('…'));
        // Never half of a surrogate pair (PostgreSQL refuses one in JSON).
        assert.doesNotMatch(bounded, /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
      }
    });
  });

  describe('over HTTP', function () {
    this.timeout(120_000);
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({
        driver: 'postgres',
        config: {
          plugins: { auth: { enabled: true }, audit: { enabled: true, flushIntervalMs: 20 } },
          agents: [
            {
              id: HOOKED,
              organization: 'acme',
              name: 'Hooked',
              createdBy: 'u-admin',
              model: 'demo',
              steps: [{ name: 'Outline', prompt: 'Outline.', objective: 'An outline.' }],
              triggers: [{ type: 'webhook' }],
            },
          ],
        },
      });
    });
    after(() => gw?.close());

    async function recordOf(orgId: string | null, requestId: string): Promise<AuditRecord> {
      const deadline = Date.now() + 30_000;
      for (;;) {
        // Records without an organization (a 401, an unknown webhook) are only in the whole table.
        const records = orgId ? await gw.store.audit.list({ orgId, since: null, limit: 1000, after: null }) : captured;
        const found = records.find((r) => r.requestId === requestId);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no audit record for ${requestId}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    }

    /** Every record as the plugin wrote it. */
    const captured: AuditRecord[] = [];
    before(() => {
      const original = gw.store.audit.insertJson.bind(gw.store.audit);
      gw.store.audit.insertJson = async (batch) => {
        captured.push(...(JSON.parse(batch.audit.toString('utf8')) as AuditRecord[]));
        return original(batch);
      };
    });

    it('a 15,000-character path parameter is refused and not recorded: the record stays small', async () => {
      const long = 'x'.repeat(15_000);
      await request(gw.url).get(`/v1/conversations/${long}/items`).set(gw.auth('admin')).set('x-request-id', 'long-path').expect(400);
      const stored = await recordOf('acme', 'long-path');
      assert.deepEqual(stored.resourceIds, {});
      assert.equal(stored.status, 400);
      const written = captured.find((r) => r.requestId === 'long-path');
      assert.ok(written);
      assert.ok(Buffer.byteLength(JSON.stringify(written)) <= AUDIT_RECORD_MAX_BYTES, `${Buffer.byteLength(JSON.stringify(written))} bytes`);
    });

    it('records a valid path parameter the operation declares', async () => {
      await request(gw.url).get('/v1/conversations/conv_audit_1/items').set(gw.auth('admin')).set('x-request-id', 'valid-path');
      const stored = await recordOf('acme', 'valid-path');
      assert.deepEqual(stored.resourceIds, { conversation_id: 'conv_audit_1' });
    });

    it("never records a webhook's secret token: the agent id instead", async () => {
      const listed = await request(gw.url).get(`/v1/agents/${HOOKED}/webhooks`).set(gw.auth('admin')).expect(200);
      const url = new URL(listed.body.items[0].url as string);
      const token = url.pathname.split('/').pop()!;
      const mac = token.split('.').pop()!;
      const accepted = await request(gw.url).post(url.pathname).set('x-request-id', 'hook-ok').send({}).expect(202);
      const stored = await recordOf('acme', 'hook-ok');
      assert.deepEqual(stored.resourceIds, { agentId: HOOKED, runId: accepted.body.runId });
      assert.ok(!JSON.stringify(stored).includes(mac), 'the secret part of the token is not in the record');
      // Nor when the token is refused (no organization known: the record has none).
      await request(gw.url)
        .post(`/v1/webhooks/${HOOKED}.0.${mac.slice(0, -2)}AA`)
        .set('x-request-id', 'hook-bad')
        .send({})
        .expect(404);
      const refused = await recordOf(null, 'hook-bad');
      assert.deepEqual(refused.resourceIds, {});
      assert.ok(!JSON.stringify(refused).includes(mac.slice(0, -2)));
    });
  });
});
