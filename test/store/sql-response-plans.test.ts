// The responses repository's store-wide queries read an index, never the whole table: the sweeper's
// listLapsed runs every few seconds on every gateway and the expiry prune deletes in batches. Each
// statement the repository sends is EXPLAINed on a real PostgreSQL schema with sequential scans
// disabled (a table this small would otherwise be scanned whatever the indexes): a plan that still
// scans the table has no index to use.
import assert from 'node:assert/strict';
import pg from 'pg';
import type { SqlExecutor, SqlParam } from '../../src/store/sql/database';
import { driverParams } from '../../src/store/sql/params';
import { sqlResponses } from '../../src/store/sql/responses-repository';
import { planNodes, readsOf, type PlanNode } from '../helpers/query-plans';
import { migratedTestSchema } from '../helpers/store';

describe('SQL responses repository: query plans', function () {
  this.timeout(30_000);
  let schema: Awaited<ReturnType<typeof migratedTestSchema>>;
  let client: pg.Client;
  /** Plans of the statements the repository sent, in order. */
  const plans: PlanNode[][] = [];

  before(async () => {
    schema = await migratedTestSchema('plans');
    client = schema.client;
    await client.query('SET enable_seqscan = off');
  });

  after(async () => {
    await schema?.drop();
  });

  /** Explains each statement (without running it: a prune's DELETE is planned, not executed). */
  const explaining: SqlExecutor = {
    async query<R extends object>(text: string, params: readonly SqlParam[] = []): Promise<R[]> {
      const result = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${text}`, driverParams(params));
      plans.push(planNodes(result.rows[0]!['QUERY PLAN'][0].Plan));
      return [];
    },
  };

  it('listLapsed reads the partial index of leased in-progress responses', async () => {
    plans.length = 0;
    await sqlResponses(explaining).listLapsed(new Date().toISOString(), 100);
    assert.deepEqual(readsOf(plans[0]!, 'responses'), ['lookup responses_lapsed']);
  });

  it('prune finds expired responses through the expiry index and their events through the primary key', async () => {
    plans.length = 0;
    await sqlResponses(explaining).prune(new Date().toISOString(), 200);
    assert.deepEqual(readsOf(plans[0]!, 'responses'), ['lookup responses_expiry', 'lookup responses_pkey']);
    assert.deepEqual(readsOf(plans[0]!, 'response_events'), ['lookup response_events_pkey']);
  });

  it('lastSequenceNumber reads the primary key of the event log', async () => {
    plans.length = 0;
    await sqlResponses(explaining).lastSequenceNumber('resp-x');
    assert.deepEqual(readsOf(plans[0]!, 'response_events'), ['lookup response_events_pkey']);
  });
});
