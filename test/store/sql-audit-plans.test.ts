// The audit trail is written on every API call and read by an administrator now and then: its indexes
// are paid at the request rate. Every filtered page reads the one listing index (it carries the filter
// columns) without the table until the page's own rows, and no index beyond the listing one, the error
// pages' partial one and the retention's BRIN is kept up. Each list statement the repository sends is
// EXPLAINed on a real PostgreSQL schema holding a few thousand calls (ANALYZEd, sequential scans off).
import assert from 'node:assert/strict';
import pg from 'pg';
import { sqlAudit } from '../../src/store/sql/audit-repository';
import type { AuditQuery } from '../../src/store/types';
import { explainingExecutor, type PlanNode } from '../helpers/query-plans';
import { migratedTestSchema } from '../helpers/store';

const ORG = 'org-plans';

describe('SQL audit repository: indexes and list plans', function () {
  this.timeout(60_000);
  let schema: Awaited<ReturnType<typeof migratedTestSchema>>;
  let client: pg.Client;

  before(async () => {
    schema = await migratedTestSchema('auditplans');
    client = schema.client;
    // 6,000 calls over 48 users, 300 keys, 5 operations and 3 models; one call in 50 an error.
    await client.query(
      `INSERT INTO audit_records (id, at, org_id, user_id, key_id, method, route, operation_id, resource_ids, status, latency_ms, request_id, model)
       SELECT 'rec-' || i, now() - (6000 - i) * interval '1 second', $1, 'u' || (i % 48), 'k' || (i % 300), 'POST', '/v1/chat/completions',
         (ARRAY['createChatCompletion', 'createResponse', 'listModels', 'getRun', 'createMessage'])[1 + i % 5], '{}'::jsonb,
         CASE WHEN i % 50 = 0 THEN 503 ELSE 200 END, 1.5, 'req-' || i, (ARRAY['gpt', 'demo', 'other'])[1 + i % 3]
       FROM generate_series(1, 6000) AS i`,
      [ORG],
    );
    await client.query('VACUUM ANALYZE audit_records');
    await client.query('SET enable_seqscan = off');
  });

  after(async () => {
    await schema?.drop();
  });

  /** The plan of the list statement for the query (planned, not run). */
  async function planOf(filters: Partial<AuditQuery>): Promise<PlanNode[]> {
    const plans: PlanNode[][] = [];
    await sqlAudit(explainingExecutor(client, plans)).list({ orgId: ORG, since: null, after: null, limit: 50, order: 'desc', ...filters });
    assert.equal(plans.length, 1, 'one statement was planned');
    return plans[0]!;
  }

  const scansOf = (plan: PlanNode[]): string[] =>
    plan
      .filter((node) => node['Relation Name'] === 'audit_records' && node['Node Type'] !== 'ModifyTable')
      .map((node) => `${node['Node Type']} ${node['Index Name'] ?? ''}`.trim());

  it('keeps up only the listing index, the error pages’ partial index and the retention’s BRIN', async () => {
    const { rows } = await client.query<{ indexname: string }>(
      `SELECT indexname FROM pg_indexes WHERE tablename = 'audit_records' AND schemaname = current_schema() ORDER BY indexname`,
    );
    assert.deepEqual(
      rows.map((row) => row.indexname),
      ['audit_records_at', 'audit_records_org_at_id', 'audit_records_org_error_at'],
    );
  });

  for (const [name, filters] of [
    ['user', { userId: 'u7' }],
    ['key', { keyId: 'k7' }],
    ['operation', { operationId: 'getRun' }],
    ['model', { model: 'demo' }],
    ['status 2xx', { status: { from: 200, to: 299 } }],
    ['user and model, second page', { userId: 'u7', model: 'demo', after: { at: new Date().toISOString(), id: 'rec-5000' } }],
  ] as [string, Partial<AuditQuery>][]) {
    it(`a page filtered by ${name} walks the listing index alone, then reads its rows by key`, async () => {
      const scans = scansOf(await planOf(filters));
      assert.ok(scans.includes('Index Only Scan audit_records_org_at_id'), `index-only walk: ${scans.join(', ')}`);
      assert.ok(
        scans.every((scan) => scan === 'Index Only Scan audit_records_org_at_id' || scan === 'Index Scan audit_records_org_at_id'),
        `no other read of the table: ${scans.join(', ')}`,
      );
    });
  }

  it('an error page reads the partial index of errors', async () => {
    const scans = scansOf(await planOf({ status: { from: 500, to: 599 } }));
    assert.ok(
      scans.some((scan) => scan.endsWith('audit_records_org_error_at')),
      `error index: ${scans.join(', ')}`,
    );
  });

  it('an unfiltered page reads the listing index in order', async () => {
    assert.deepEqual(scansOf(await planOf({})), ['Index Scan audit_records_org_at_id']);
  });
});
