// The SQL stores' audit table: a batch written again after a failed flush adds no record twice, records
// without an organization included (their org_id is NULL, and the one unique index that both lists and
// deduplicates treats NULLs as equal), nor counts the usage an audit record carries twice. Counted with
// SQL: the store's API lists one organization's records.
import assert from 'node:assert/strict';
import pg from 'pg';
import { openPglite } from '../../src/store/sql/database';
import type { AuditRecord, UsageRecord } from '../../src/store/types';
import { openTestStore, type TestStoreDriver } from '../helpers/store';

const record = (id: string, orgId: string | null, at: string): AuditRecord => ({
  id,
  at,
  orgId,
  userId: null,
  keyId: null,
  method: 'GET',
  route: '/v1/models',
  operationId: 'listModels',
  resourceIds: {},
  status: 401,
  latencyMs: 0.4,
  requestId: `req-${id}`,
});

async function countRows(driver: TestStoreDriver, location: string): Promise<{ audit: number; usage: number }> {
  const sql = `SELECT (SELECT count(*)::int FROM audit_records) AS audit, (SELECT count(*)::int FROM usage_records) AS usage`;
  if (driver === 'embedded') {
    const db = await openPglite(location);
    try {
      const [row] = await db.query<{ audit: number; usage: number }>(sql);
      return row!;
    } finally {
      await db.close();
    }
  }
  const client = new pg.Client({ connectionString: location });
  await client.connect();
  try {
    return (await client.query<{ audit: number; usage: number }>(sql)).rows[0]!;
  } finally {
    await client.end();
  }
}

for (const driver of ['embedded', 'postgres'] as const) {
  describe(`${driver} store: audit records written twice`, function () {
    this.timeout(60_000);

    it('keeps one copy of each record of a retried batch, with or without an organization', async () => {
      const t = await openTestStore(driver);
      try {
        const at = '2026-11-25T10:00:00.000Z';
        const records = [
          record('0190a000-0000-7000-8000-000000000001', null, at),
          record('0190a000-0000-7000-8000-000000000002', null, at),
          record('0190a000-0000-7000-8000-000000000003', 'org-a', at),
        ];
        // The third call carries its own usage; another call's usage is a usage record.
        records[2] = { ...records[2]!, model: 'm', promptTokens: 7, completionTokens: 1 } as AuditRecord;
        const usage: UsageRecord[] = [{ at, orgId: 'org-a', userId: null, keyId: null, model: 'm', promptTokens: 1, completionTokens: 2, requestId: 'req-x' }];
        const json = (items: readonly unknown[]): Buffer => Buffer.from(JSON.stringify(items));
        await t.store.audit.insertJson({ audit: json(records), usage: json(usage) });
        // The same batch again (its first write landed but was not acknowledged), then a part of it.
        await t.store.audit.insertJson({ audit: json(records), usage: json([]) });
        await t.store.audit.insertMany(records.slice(0, 2));
        // Another record at the same time without an organization is a record of its own.
        await t.store.audit.insertMany([record('0190a000-0000-7000-8000-000000000004', null, at)]);
        // The usage carried by an audit record is counted once however often its batch was written.
        assert.deepEqual(await t.store.usage.totals('org-a', null), [{ model: 'm', requests: 2, promptTokens: 8, completionTokens: 3 }]);
        await t.store.close();
        const location = driver === 'embedded' ? t.config.path : t.config.url!;
        assert.deepEqual(await countRows(driver, location), { audit: 4, usage: 1 });
      } finally {
        await t.cleanup();
      }
    });
  });
}
