// The stored turns' group commit reads the conversations and responses it updates by their primary
// key at any table size. json_to_recordset is planned at 100 rows whatever it holds: joined on that
// estimate alone, the UPDATE of conversations hashed the batch and scanned the whole table until the
// table was some 20,000 rows long, and a plan cached on a small table kept scanning after it grew
// (every commit slower than the last). The statement is prepared as the gateway prepares it, its
// generic plan (the one a pooled connection reuses) explained over 5,000 analyzed rows per table.
import assert from 'node:assert/strict';
import pg from 'pg';
import type { SqlDatabase, SqlParam } from '../../src/store/sql/database';
import { driverParams } from '../../src/store/sql/params';
import { sqlTurns } from '../../src/store/sql/turns-repository';
import { planNodes, readsOf, type PlanNode } from '../helpers/query-plans';
import { migratedTestSchema } from '../helpers/store';

describe('SQL turns repository: the group commit reads by primary key', function () {
  this.timeout(30_000);
  let schema: Awaited<ReturnType<typeof migratedTestSchema>>;
  let client: pg.Client;

  before(async () => {
    schema = await migratedTestSchema('turnplans');
    client = schema.client;
    await client.query(
      `INSERT INTO conversations (id, org_id, user_id, metadata, created_at, turn_response_id)
       SELECT 'conv_' || g, 'org', 'u', '{}', now(), 'resp_' || g FROM generate_series(1, 5000) g`,
    );
    await client.query(
      `INSERT INTO responses (id, org_id, user_id, status, model, conversation_id, stored, body, input_items, created_at, updated_at)
       SELECT 'resp_' || g, 'org', 'u', 'in_progress', 'm', 'conv_' || g, true, '{}', '[]', now(), now() FROM generate_series(1, 5000) g`,
    );
    await client.query('ANALYZE conversations, responses');
  });

  after(async () => {
    await schema?.drop();
  });

  it("the ends' UPDATEs look their rows up by id in the plan a pooled connection reuses", async () => {
    // The statement and parameters the repository sends for three ends, captured and not run.
    let sent: { text: string; params: readonly SqlParam[] } | null = null;
    const capturing = {
      kind: 'postgres',
      async query(text: string, params: readonly SqlParam[] = []) {
        sent = { text, params };
        return [];
      },
    } as unknown as SqlDatabase;
    await sqlTurns(capturing).commit(
      [],
      [1, 2, 3].map((n) => ({
        responseId: `resp_${n}`,
        outcome: { status: 'completed' as const, body: { status: 'completed' } },
        conversationId: `conv_${n}`,
        items: [],
        contextTokens: null,
      })),
    );
    const { text, params } = sent!;
    await client.query(`PREPARE commit_turns AS ${text}`);
    await client.query('SET plan_cache_mode = force_generic_plan');
    const literals = driverParams(params).map((value) => {
      if (Array.isArray(value)) return `${client.escapeLiteral(`{${value.map((v: string) => `"${v}"`).join(',')}}`)}::text[]`;
      if (Buffer.isBuffer(value)) return client.escapeLiteral(value.toString('utf8'));
      return value === null ? 'NULL' : client.escapeLiteral(String(value));
    });
    const result = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) EXECUTE commit_turns(${literals.join(', ')})`);
    const plan = planNodes(result.rows[0]!['QUERY PLAN'][0].Plan);
    assert.deepEqual(readsOf(plan, 'conversations'), ['lookup conversations_pkey']);
    assert.deepEqual(readsOf(plan, 'responses'), ['lookup responses_pkey']);
  });
});
