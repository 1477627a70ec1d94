// Opening stores: unreachable backends fail with a one-line reason (the CLI prints it), credentials never
// appear in it, and several processes may migrate one postgres database at once.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { resetPeakRss, rssOf } from '../../bench/process-memory';
import { createLogger } from '../../src/log/logger';
import { createStore } from '../../src/store/index';
import { openPglite } from '../../src/store/sql/database';
import { MIGRATIONS } from '../../src/store/sql/schema';
import { createTestSchema, databaseUrl } from '../helpers/store';
import { waitFor } from '../helpers/wait';

const logger = createLogger({ level: 'error', silent: true });

function assertOneLine(err: unknown, pattern: RegExp): true {
  assert.ok(err instanceof Error);
  assert.match(err.message, pattern);
  assert.ok(!err.message.includes('\n'), 'one line');
  assert.ok(!err.message.includes('hunter2'), 'no password');
  return true;
}

describe('opening stores', function () {
  this.timeout(30_000);

  it('postgres: an unreachable server gives a one-line reason without credentials', async () => {
    await assert.rejects(
      createStore({ driver: 'postgres', path: '', url: 'postgres://app:hunter2@127.0.0.1:1/nowhere', retentionDays: 30, queryTimeoutMs: 15_000 }, { logger }),
      (err) => assertOneLine(err, /^cannot open the postgres store at postgres:\/\/127\.0\.0\.1:1\/nowhere: .*ECONNREFUSED/),
    );
  });

  it('mongodb: an unreachable server gives a one-line reason without credentials', async () => {
    await assert.rejects(
      createStore(
        {
          driver: 'mongodb',
          path: '',
          url: 'mongodb://app:hunter2@127.0.0.1:1/nowhere?serverSelectionTimeoutMS=300',
          retentionDays: 30,
          queryTimeoutMs: 15_000,
        },
        { logger },
      ),
      (err) => assertOneLine(err, /^cannot open the mongodb store at mongodb:\/\/127\.0\.0\.1:1\/nowhere: /),
    );
  });

  it('embedded: a store path that cannot be a directory gives a one-line reason', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'agw-open-'));
    try {
      const file = path.join(dir, 'not-a-dir');
      await writeFile(file, 'x');
      await assert.rejects(createStore({ driver: 'embedded', path: file, retentionDays: 30, queryTimeoutMs: 15_000 }, { logger }), (err) =>
        assertOneLine(err, /^cannot open the embedded store at .*not-a-dir: /),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('postgres: several processes starting at once migrate once (advisory lock)', async () => {
    const schema = await createTestSchema('migrate');
    try {
      const config = { driver: 'postgres' as const, path: '', url: schema.url, retentionDays: 30, queryTimeoutMs: 15_000 };
      const stores = await Promise.all([1, 2, 3, 4].map(() => createStore(config, { logger })));
      await Promise.all(stores.map((s) => s.migrate()));
      await Promise.all(stores.map((s) => s.close()));
      const client = new pg.Client({ connectionString: databaseUrl() });
      await client.connect();
      try {
        const { rows } = await client.query<{ version: number }>(`SELECT version FROM ${schema.schema}.schema_migrations ORDER BY version`);
        assert.deepEqual(
          rows.map((r) => r.version),
          MIGRATIONS.map((m) => m.version),
        );
        const tables = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1`, [schema.schema]);
        assert.ok((tables.rows[0]?.n ?? 0) >= 15, 'the tables landed in the test schema');
      } finally {
        await client.end();
      }
    } finally {
      await schema.drop();
    }
  });
  it('postgres: migrating waits for another process migrating longer than store.queryTimeoutMs', async () => {
    const schema = await createTestSchema('migrate');
    const other = new pg.Client({ connectionString: databaseUrl() });
    await other.connect();
    try {
      // Another process's migrations: its transaction holds the schema's migration lock for 1 s.
      await other.query('BEGIN');
      await other.query(`SELECT pg_advisory_xact_lock(hashtext('agent-gateway-migrate:' || $1::text))`, [schema.schema]);
      const released = new Promise<void>((resolve) => setTimeout(() => void other.query('COMMIT').then(() => resolve()), 1_000));
      const started = Date.now();
      const store = await createStore({ driver: 'postgres', path: '', url: schema.url, retentionDays: 30, queryTimeoutMs: 200 }, { logger });
      await store.close();
      await released;
      assert.ok(Date.now() - started >= 900, 'it waited for the lock');
    } finally {
      await other.end();
      await schema.drop();
    }
  });

  it("embedded: a new data directory is made in a child process, so the gateway never carries initdb's memory", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'agw-embedded-rss-'));
    try {
      // A process of its own, as the gateway would be: its peak RSS is then the store's alone. Creating
      // the directory in-process peaks at ~800 MB (PGlite's initdb; a WebAssembly memory never shrinks).
      const script = `require('./src/store/sql/database.ts').openPglite(process.argv[1]).then(async (db) => {
        const [row] = await db.query("SELECT current_setting('shared_buffers') AS sb, current_setting('wal_buffers') AS wb");
        await db.close();
        process.stdout.write(JSON.stringify({ peakMb: process.resourceUsage().maxRSS / 1024, sharedBuffers: row.sb, walBuffers: row.wb }));
      })`;
      const output = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--require', 'tsx/cjs', '-e', script, dir], {
          cwd: path.resolve(__dirname, '../..'),
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.once('error', reject);
        child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${String(code)}`))));
      });
      const { peakMb, sharedBuffers, walBuffers } = JSON.parse(output) as { peakMb: number; sharedBuffers: string; walBuffers: string };
      assert.ok(peakMb < 450, `peak RSS of the opening process: ${peakMb.toFixed(0)} MB`);
      assert.equal(sharedBuffers, '4MB'); // PGLITE_SHARED_BUFFERS: the embedded database's memory budget
      assert.equal(walBuffers, '1MB'); // PGLITE_WAL_BUFFERS: WAL written in runs, not a page at a time
      // The directory is complete: a second open finds it and does not initialise it again.
      const store = await createStore({ driver: 'embedded', path: dir, retentionDays: 30, queryTimeoutMs: 15_000 }, { logger });
      await store.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  it('embedded: a new WAL segment is not filled through the database process memory (its peak RSS stays put)', async function () {
    if (process.platform !== 'linux') this.skip(); // /proc/<pid>/status and clear_refs
    const dir = await mkdtemp(path.join(os.tmpdir(), 'agw-embedded-wal-'));
    const db = await openPglite(dir);
    try {
      const pid = db.pid;
      assert.ok(pid !== undefined, 'the database runs in a process of its own');
      await db.query('CREATE TABLE wal_probe (x text)');
      // The peak from here on: the high-water mark reset to the current RSS (Linux 4.0+, our own child).
      assert.ok(resetPeakRss(pid), 'the peak RSS could be reset');
      const before = rssOf(pid, 'VmRSS');
      // Each switch moves the log to a new 16 MB segment, which the next write creates. Zero-filled, each
      // creation took the process 14-18 MB up for the length of the write.
      for (let i = 0; i < 3; i++) {
        await db.query("INSERT INTO wal_probe VALUES ('row')");
        await db.query('SELECT pg_switch_wal()');
      }
      await db.query("INSERT INTO wal_probe VALUES ('row')");
      const peak = rssOf(pid, 'VmHWM');
      assert.ok(peak - before < 8, `peak RSS ${peak.toFixed(1)} MB against ${before.toFixed(1)} MB before three new segments`);
      const [setting] = await db.query<{ zero: string }>("SELECT current_setting('wal_init_zero') AS zero");
      assert.equal(setting?.zero, 'off'); // PGLITE_WAL_INIT_ZERO
    } finally {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
  it('embedded: rows committed in a WAL segment that was not zero-filled survive the database process being killed', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'agw-embedded-wal-crash-'));
    const db = await openPglite(dir);
    try {
      await db.query('CREATE TABLE wal_crash (n int)');
      await db.query('INSERT INTO wal_crash VALUES (1)');
      await db.query('SELECT pg_switch_wal()');
      // Committed in the new segment, whose bytes past the log's end were never written.
      await db.transaction(async (tx) => {
        await tx.query('INSERT INTO wal_crash SELECT generate_series(2, 500)');
      });
      const first = db.pid!;
      process.kill(first, 'SIGKILL');
      // Until the store has seen the exit (its child gone), the next statement would go to the dead
      // process; a zombie's /proc entry says "not running" before that.
      await waitFor(() => db.pid !== first, { what: 'the store to see its database process exit' });
      // The next statement starts it again; recovery replays the segment and stops at its end.
      const [after] = await db.query<{ rows: number; total: number }>('SELECT count(*)::int AS rows, sum(n)::int AS total FROM wal_crash');
      assert.deepEqual(after, { rows: 500, total: (500 * 501) / 2 });
      assert.ok(db.pid !== undefined && db.pid !== first, 'a new database process');
      // And the log goes on from there.
      await db.query('INSERT INTO wal_crash VALUES (501)');
      const [more] = await db.query<{ rows: number }>('SELECT count(*)::int AS rows FROM wal_crash');
      assert.equal(more?.rows, 501);
    } finally {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
