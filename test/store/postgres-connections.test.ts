// The PostgreSQL connection layer (src/store/sql/database.ts) when the server ends a connection: a
// server restart or failover terminates every backend, including one a transaction holds between two
// of its statements. Its error must fail that transaction, not the process.
import assert from 'node:assert/strict';
import pg from 'pg';
import { openPostgres } from '../../src/store/sql/database';
import { startTcpProxy } from '../helpers/process';
import { databaseUrl } from '../helpers/store';
import { waitFor, within } from '../helpers/wait';

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

describe('postgres statements that take too long or are never answered (store.queryTimeoutMs)', function () {
  this.timeout(30_000);

  it('a network partition: statements in flight fail a little after the limit and the pool serves again once the network heals', async () => {
    const proxy = await startTcpProxy(Number(new URL(databaseUrl()).port || 5432));
    const url = new URL(databaseUrl());
    url.host = `127.0.0.1:${proxy.port}`;
    const db = openPostgres({ url: url.toString(), onConnectionError: () => undefined, max: 2, queryTimeoutMs: 300 });
    try {
      // Two pooled connections, both idle and handed out again below.
      await Promise.all([db.query('SELECT 1'), db.query('SELECT 1')]);
      proxy.silence();
      const outcomes = await Promise.all([
        within(8_000, db.query('SELECT 1')),
        within(
          8_000,
          db.transaction(async (tx) => tx.query('SELECT 1')),
        ),
      ]);
      for (const outcome of outcomes) {
        // Without the limit both wait for the kernel to give up on the connection (~15 minutes).
        assert.notEqual(outcome, 'still waiting');
        if (outcome === 'still waiting') return;
        assert.match(outcome.error?.message ?? '', /Query read timeout/);
        // The limit (300 ms) and the 2 s grace; a transaction does not wait again for a ROLLBACK.
        assert.ok(outcome.waited >= 2_000 && outcome.waited < 4_000, `failed after ${outcome.waited} ms`);
      }
      proxy.heal();
      // The unanswered connections were dropped: the pool answers on new ones at once.
      const after = await within(
        3_000,
        Promise.all([db.query<{ one: number }>('SELECT 1 AS one'), db.transaction(async (tx) => tx.query<{ one: number }>('SELECT 1 AS one'))]),
      );
      assert.notEqual(after, 'still waiting');
      if (after !== 'still waiting') assert.deepEqual(after.value, [[{ one: 1 }], [{ one: 1 }]], after.error?.message);
    } finally {
      proxy.heal();
      // (Without the limit, the pool's end would wait for the connections that never get an answer.)
      await within(2_000, db.close());
      await proxy.close();
    }
  });

  it('a statement over the limit is cancelled by the server on a connection that stays usable; a migration is not limited', async () => {
    const db = openPostgres({ url: databaseUrl(), onConnectionError: () => undefined, max: 1, queryTimeoutMs: 300 });
    try {
      await assert.rejects(db.query('SELECT pg_sleep(1)'), (err: Error & { code?: string }) => err.code === '57014');
      await assert.rejects(
        db.transaction(async (tx) => tx.query('SELECT pg_sleep(1)')),
        (err: Error & { code?: string }) => err.code === '57014',
      );
      const [row] = await db.query<{ statement_timeout: string }>('SHOW statement_timeout');
      assert.equal(row!.statement_timeout, '300ms');
      // max: 1, so this is the connection whose statements were cancelled.
      assert.deepEqual(await db.query('SELECT 1 AS one'), [{ one: 1 }]);
      const slow = await db.transaction(async (tx) => tx.query<{ one: number }>('SELECT 1 AS one FROM pg_sleep(1)'), { unbounded: true });
      assert.deepEqual(slow, [{ one: 1 }]);
      // The lifted limit was the transaction's own (SET LOCAL).
      assert.equal((await db.query<{ statement_timeout: string }>('SHOW statement_timeout'))[0]!.statement_timeout, '300ms');
    } finally {
      await db.close();
    }
  });
});
