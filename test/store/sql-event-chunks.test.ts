// The SQL event log stores a response's events in chunks (schema migration 18): one row per response
// per event-log write instead of one row per event, which was most of the database's work per stored
// stream. Checked on a real PostgreSQL schema: a write of three responses' interleaved events is three
// rows, read back in order; and a database written before the migration keeps its events, readable
// through the repository after it.
import assert from 'node:assert/strict';
import pg from 'pg';
import { createLogger } from '../../src/log/logger';
import { createStore } from '../../src/store/index';
import type { Store } from '../../src/store/port';
import type { ResponseEventRecord } from '../../src/store/types';
import { createTestSchema } from '../helpers/store';

const AT = '2001-01-01T00:00:00.000Z';

function event(responseId: string, sequenceNumber: number): ResponseEventRecord {
  return {
    responseId,
    sequenceNumber,
    event: 'response.output_text.delta',
    data: { type: 'response.output_text.delta', sequence_number: sequenceNumber, delta: `d${sequenceNumber}` },
    createdAt: AT,
  };
}

describe('SQL event log in chunks', function () {
  this.timeout(60_000);
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let client: pg.Client;
  let store: Store | null = null;
  const open = (): Promise<Store> =>
    createStore({ driver: 'postgres', path: '', url: schema.url, retentionDays: 30, queryTimeoutMs: 15_000 }, { logger: createLogger({ silent: true }) });

  before(async () => {
    schema = await createTestSchema('chunks');
    client = new pg.Client({ connectionString: schema.url });
    await client.connect();
  });

  afterEach(async () => {
    await store?.close();
    store = null;
  });

  after(async () => {
    await client?.end();
    await schema?.drop();
  });

  it('one write of interleaved events of three responses is one row per response, read back whole and in order', async () => {
    store = await open();
    const ids = ['resp-a', 'resp-b', 'resp-c'];
    const batch: ResponseEventRecord[] = [];
    for (let n = 0; n < 10; n++) for (const id of ids) batch.push(event(id, n));
    await store.responses.appendEvents(batch);
    // The next write continues each response: one more row each.
    await store.responses.appendEvents(ids.map((id) => event(id, 10)));
    const { rows } = await client.query<{ response_id: string; n: number }>(
      'SELECT response_id, count(*)::int AS n FROM response_events WHERE response_id = ANY($1) GROUP BY response_id ORDER BY response_id',
      [ids],
    );
    assert.deepEqual(rows, [
      { response_id: 'resp-a', n: 2 },
      { response_id: 'resp-b', n: 2 },
      { response_id: 'resp-c', n: 2 },
    ]);
    for (const id of ids) {
      assert.deepEqual(
        await store.responses.listEvents(id, -1),
        Array.from({ length: 11 }, (_, n) => event(id, n)),
      );
      assert.deepEqual(
        (await store.responses.listEvents(id, 8, 2)).map((e) => e.sequenceNumber),
        [9, 10],
      );
      assert.equal(await store.responses.lastSequenceNumber(id), 10);
    }
  });

  it('a page reads on past chunks that hold only events already read (a retried write stored again)', async () => {
    store = await open();
    // 0-4 committed, then a retry of the same write carrying more (0-7): the second chunk repeats 0-4.
    await store.responses.appendEvents([0, 1, 2, 3, 4].map((n) => event('resp-retry', n)));
    await store.responses.appendEvents([0, 1, 2, 3, 4, 5, 6, 7].map((n) => event('resp-retry', n)));
    assert.deepEqual(
      (await store.responses.listEvents('resp-retry', 3, 3)).map((e) => e.sequenceNumber),
      [4, 5, 6],
    );
    assert.deepEqual(
      (await store.responses.listEvents('resp-retry', -1)).map((e) => e.sequenceNumber),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
    // A page of two chunks that yields one new event (the second repeats it) reads the next page.
    await store.responses.appendEvents([event('resp-dup', 0), event('resp-dup', 1)]);
    await store.responses.appendEvents([event('resp-dup', 1)]);
    await store.responses.appendEvents([event('resp-dup', 2)]);
    assert.deepEqual(
      (await store.responses.listEvents('resp-dup', 0, 2)).map((e) => e.sequenceNumber),
      [1, 2],
    );
  });

  it('migration 18 moves the events of a database written before it into chunks', async () => {
    store = await open();
    await store.close();
    store = null;
    // The database as version 17 left it: one row per event.
    await client.query(`DELETE FROM schema_migrations WHERE version = 18`);
    await client.query(`DROP TABLE response_events`);
    await client.query(`CREATE TABLE response_events (
        response_id text NOT NULL, sequence_number integer NOT NULL, event text NOT NULL, data jsonb NOT NULL,
        created_at timestamptz NOT NULL, PRIMARY KEY (response_id, sequence_number))`);
    for (const e of [event('resp-old', 0), event('resp-old', 1), event('resp-old', 2)]) {
      await client.query('INSERT INTO response_events VALUES ($1, $2, $3, $4, $5)', [
        e.responseId,
        e.sequenceNumber,
        e.event,
        JSON.stringify(e.data),
        e.createdAt,
      ]);
    }
    store = await open();
    assert.deepEqual(await store.responses.listEvents('resp-old', -1), [event('resp-old', 0), event('resp-old', 1), event('resp-old', 2)]);
    assert.equal(await store.responses.lastSequenceNumber('resp-old'), 2);
    // New events continue the log after the moved ones.
    await store.responses.appendEvents([event('resp-old', 3)]);
    assert.deepEqual(
      (await store.responses.listEvents('resp-old', 1)).map((e) => e.sequenceNumber),
      [2, 3],
    );
  });
});
