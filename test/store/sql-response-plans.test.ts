// The responses repository's store-wide queries read an index, never the whole table: the sweeper's
// listLapsed runs every few seconds on every gateway and the expiry prune deletes in batches. Each
// statement the repository sends is EXPLAINed on a real PostgreSQL schema with sequential scans
// disabled (a table this small would otherwise be scanned whatever the indexes): a plan that still
// scans the table has no index to use.
import assert from 'node:assert/strict';
import pg from 'pg';
import type { SqlExecutor } from '../../src/store/sql/database';
import { sqlResponses } from '../../src/store/sql/responses-repository';
import { explainingExecutor, readsOf, type PlanNode } from '../helpers/query-plans';
import { migratedTestSchema } from '../helpers/store';

describe('SQL responses repository: query plans', function () {
  this.timeout(30_000);
  let schema: Awaited<ReturnType<typeof migratedTestSchema>>;
  let client: pg.Client;
  /** Plans of the statements the repository sent, in order. */
  const plans: PlanNode[][] = [];
  /** Explains each statement (without running it: a prune's DELETE is planned, not executed). */
  let explaining: SqlExecutor;

  before(async () => {
    schema = await migratedTestSchema('plans');
    client = schema.client;
    explaining = explainingExecutor(client, plans);
    await client.query('SET enable_seqscan = off');
  });

  after(async () => {
    await schema?.drop();
  });

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
