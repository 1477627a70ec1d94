// The PostgreSQL connection layer (src/store/sql/database.ts) when the server ends a connection: a
// server restart or failover terminates every backend, including one a transaction holds between two
// of its statements. Its error must fail that transaction, not the process.
import assert from 'node:assert/strict';
import pg from 'pg';
import { openPostgres } from '../../src/store/sql/database';
import { databaseUrl } from '../helpers/store';
import { waitFor } from '../helpers/wait';

describe('postgres connections ended by the server', function () {
  this.timeout(20_000);

  it('a transaction whose connection the server terminates between two statements fails; the process and the pool live on', async () => {
    const reported: Error[] = [];
    const db = openPostgres({ url: databaseUrl(), onConnectionError: (err) => reported.push(err), max: 2 });
    const admin = new pg.Client({ connectionString: databaseUrl() });
    await admin.connect();
    try {
      await assert.rejects(
        db.transaction(async (tx) => {
          const [row] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          // What `service postgresql restart` does to every backend (SQLSTATE 57P01).
          await admin.query('SELECT pg_terminate_backend($1)', [row!.pid]);
          // The server's FATAL arrives while no statement of the transaction runs: an 'error' event on
          // the checked-out connection (unhandled, it ended the gateway; mocha reports it uncaught).
          await waitFor(() => reported.length > 0, { what: 'the connection error reported' });
          await tx.query('SELECT 1');
        }),
      );
      assert.equal(reported.length, 1, `reported once: ${reported.map((e) => e.message).join(' / ')}`);
      assert.match(reported[0]!.message, /terminating connection/);
      // The broken connection was not put back: the pool answers on a new one.
      const [again] = await db.query<{ one: number }>('SELECT 1 AS one');
      assert.equal(again!.one, 1);
      await db.transaction(async (tx) => tx.query('SELECT 1'));
    } finally {
      await admin.end();
      await db.close();
    }
  });
});
