// The embedded database's own process: statements run there (not on the gateway's thread), a
// transaction keeps other statements out until it ends, a crashed process is started again with the
// committed data intact, the process never outlives the gateway that started it, and its memory stays
// within the embedded configuration's budget.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openPglite } from '../../src/store/sql/database';
import { JsonBytes } from '../../src/store/sql/params';
import { createSqlStore } from '../../src/store/sql/sql-store';
import type { AuditRecord } from '../../src/store/types';
import { auditRecord } from './contract/fixtures';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The audit record of a chat call carrying its own usage, with a time-ordered id as the gateway mints
 * one (appended at the right edge of the audit indexes); `fields` override.
 */
const auditCall = (n: number, at: string, fields: Partial<AuditRecord> = {}): AuditRecord =>
  auditRecord('acme', 0, {
    id: `0192d000-0000-7000-8000-${n.toString(16).padStart(12, '0')}`,
    at,
    model: 'gpt-4o-mini',
    promptTokens: 12,
    completionTokens: 10,
    ...fields,
  });

describe('embedded store: PGlite in a process of its own', function () {
  this.timeout(60_000);
  let dir: string;
  /** Opens the embedded database in `dir`, runs `use`, and closes it whatever happened. */
  const withDatabase = async (use: (db: Awaited<ReturnType<typeof openPglite>>) => Promise<void>): Promise<void> => {
    const db = await openPglite(dir);
    try {
      await use(db);
    } finally {
      await db.close();
    }
  };
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'agw-pglite-proc-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs statements in a child process, JSON bytes and PostgreSQL errors carried across', async () => {
    await withDatabase(async (db) => {
      assert.ok(db.pid && db.pid !== process.pid);
      const status = await readFile(`/proc/${db.pid}/status`, 'utf8');
      assert.match(status, /PPid:\s+(\d+)/);
      assert.equal(Number(/PPid:\s+(\d+)/.exec(status)![1]), process.pid, 'a child of this process');
      const [row] = await db.query<{ n: number; at: Date; j: unknown }>(
        `SELECT count(*)::int AS n, max(x.at) AS at, json_agg(x.name) AS j FROM json_to_recordset($1::json) AS x(at timestamptz, name text)`,
        [
          new JsonBytes(
            Buffer.from(
              JSON.stringify([
                { at: '2026-01-02T03:04:05.000Z', name: 'é' },
                { at: '2025-01-01T00:00:00.000Z', name: 'b' },
              ]),
            ),
          ),
        ],
      );
      assert.equal(row?.n, 2);
      assert.ok(row?.at instanceof Date, 'timestamps come back as Dates');
      assert.equal(row.at.toISOString(), '2026-01-02T03:04:05.000Z');
      assert.deepEqual(row.j, ['é', 'b']);
      await assert.rejects(
        db.query('SELECT * FROM no_such_table'),
        (err: Error & { code?: string }) => err.code === '42P01' && /no_such_table/.test(err.message),
      );
    });
  });

  it('bulk loads JSON rows with COPY: text escapes, nulls, fallbacks and JSON values arrive as they were; all or nothing', async () => {
    await withDatabase(async (db) => {
      await db.query('CREATE TABLE a (id text PRIMARY KEY, note text, n float8, doc jsonb NOT NULL, at timestamptz)');
      await db.query('CREATE TABLE b (id text, k int)');
      // Non-ASCII at the start and after ASCII, and one note larger than the COPY buffer's first size.
      const notes = [
        'tab\there',
        'line\nbreak\r\n',
        'back\\slash \\N \\t',
        '\\N',
        'é ✓ 😀',
        'plain, then é ✓ 😀 and\ta tab',
        `${'x'.repeat(300_000)}é\t`,
        '',
        null,
      ];
      const rows = notes.map((note, i) => ({ id: `r${i}`, note, n: i + 0.5, ...(i % 2 ? { doc: { k: [i, 'x\ty'] } } : {}), at: '2026-01-02T03:04:05.000Z' }));
      const columns = [
        { column: 'id', key: 'id', type: 'text' },
        { column: 'note', key: 'note', type: 'text' },
        { column: 'n', key: 'n', type: 'float8' },
        { column: 'doc', key: 'doc', type: 'jsonb', fallback: '{}' },
        { column: 'at', key: 'at', type: 'timestamptz' },
      ];
      const bytes = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
      await db.copyJsonRows([
        { table: 'a', columns, json: bytes(rows) },
        {
          table: 'b',
          columns: [
            { column: 'id', key: 'id', type: 'text' },
            { column: 'k', key: 'k', type: 'int' },
          ],
          json: bytes([]),
        },
      ]);
      const back = await db.query<{ id: string; note: string | null; n: number; doc: unknown; at: Date }>('SELECT * FROM a ORDER BY id');
      assert.deepEqual(
        back.map((r) => ({ id: r.id, note: r.note, n: r.n, doc: r.doc, at: r.at.toISOString() })),
        rows.map((r, i) => ({ id: r.id, note: r.note, n: r.n, doc: i % 2 ? { k: [i, 'x\ty'] } : {}, at: r.at })),
      );
      // A duplicate key in the second load: the first load of the same call is rolled back with it.
      await assert.rejects(
        db.copyJsonRows([
          {
            table: 'b',
            columns: [
              { column: 'id', key: 'id', type: 'text' },
              { column: 'k', key: 'k', type: 'int' },
            ],
            json: bytes([{ id: 'x', k: 1 }]),
          },
          { table: 'a', columns, json: bytes([{ id: 'r0', n: 1 }]) },
        ]),
        (err: Error & { code?: string }) => err.code === '23505',
      );
      assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM b'), [{ n: 0 }]);
      // Table and column names are spliced into COPY: anything but a plain identifier is refused.
      await assert.rejects(db.copyJsonRows([{ table: 'a; DROP TABLE a', columns, json: bytes([{}]) }]), /not a plain identifier/);
      assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM a'), [{ n: notes.length }]);
    });
  });

  it('a statement from outside a transaction waits until the transaction ends', async () => {
    await withDatabase(async (db) => {
      await db.query('CREATE TABLE t (a int)');
      let outside: Promise<{ n: number }[]> | null = null;
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO t VALUES (1)');
          outside = db.query<{ n: number }>('SELECT count(*)::int AS n FROM t');
          await new Promise((r) => setTimeout(r, 50));
          await tx.query('INSERT INTO t VALUES (2)');
          throw new Error('roll back');
        }),
        /roll back/,
      );
      assert.deepEqual(await outside!, [{ n: 0 }], 'it saw neither the uncommitted rows nor ran inside the transaction');
      await db.transaction(async (tx) => tx.query('INSERT INTO t VALUES (3)'));
      assert.deepEqual(await db.query('SELECT a FROM t'), [{ a: 3 }]);
    });
  });

  it('a SIGTERM or SIGINT sent to the whole process group does not end it: the gateway still has records to flush', async () => {
    await withDatabase(async (db) => {
      const pid = db.pid!;
      process.kill(pid, 'SIGTERM');
      process.kill(pid, 'SIGINT');
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(await db.query('SELECT 1 AS one'), [{ one: 1 }]);
      assert.equal(db.pid, pid, 'the same process answered');
    });
  });

  it('a crashed database process is started again on the next statement, committed rows intact', async () => {
    await withDatabase(async (db) => {
      await db.query('CREATE TABLE t (a int)');
      await db.query('INSERT INTO t VALUES (7)');
      const first = db.pid!;
      process.kill(first, 'SIGKILL');
      await waitFor(() => !alive(first), 5000, 'the process to die');
      assert.deepEqual(await db.query('SELECT a FROM t'), [{ a: 7 }]);
      assert.ok(db.pid && db.pid !== first, 'a new process');
    });
  });

  it("a bulk load's day totals: each call on its UTC day whatever the offset of its time; groups apart by every value, null or not", async () => {
    await withDatabase(async (db) => {
      const store = createSqlStore(db);
      await store.migrate();
      // Each call one request and one prompt token, so the totals count them.
      const call = (n: number, at: string, fields: Partial<AuditRecord>): AuditRecord =>
        auditCall(n, at, { model: 'm', promptTokens: 1, completionTokens: 1, ...fields });
      const calls = [
        call(1, '2026-01-01T23:30:00.000Z', {}),
        // 23:30 at UTC-05:00 is 04:30 UTC the next day; 00:30 at UTC+02:00 is 22:30 UTC the day before.
        call(2, '2026-01-01T23:30:00-05:00', {}),
        call(3, '2026-01-02T00:30:00+02:00', { promptTokens: 5 }),
        // Values that a key joined by a separator could confuse: a null key id, an empty one, a user id
        // that holds the next value, an organization's id that continues into the model's.
        call(4, '2026-01-01T10:00:00.000Z', { keyId: null }),
        call(5, '2026-01-01T10:00:00.000Z', { keyId: '' }),
        call(6, '2026-01-01T10:00:00.000Z', { userId: 'u1-k1', keyId: null }),
        call(7, '2026-01-01T10:00:00.000Z', { orgId: 'acme1', model: '' }),
        call(8, '2026-01-01T10:00:00.000Z', { orgId: 'acme', model: '1' }),
      ];
      await store.audit.insertJson({ audit: Buffer.from(JSON.stringify(calls)), usage: Buffer.from('[]') });
      const totals = await db.query<Record<string, unknown>>(
        `SELECT org_id, to_char(day, 'YYYY-MM-DD') AS day, model, user_id, key_id, requests::int AS requests, prompt_tokens::int AS prompt FROM usage_day_totals
          ORDER BY org_id, day, model, user_id, key_id NULLS FIRST`,
      );
      assert.deepEqual(totals, [
        { org_id: 'acme', day: '2026-01-01', model: '1', user_id: 'u1', key_id: 'k1', requests: 1, prompt: 1 },
        { org_id: 'acme', day: '2026-01-01', model: 'm', user_id: 'u1', key_id: null, requests: 1, prompt: 1 },
        { org_id: 'acme', day: '2026-01-01', model: 'm', user_id: 'u1', key_id: '', requests: 1, prompt: 1 },
        { org_id: 'acme', day: '2026-01-01', model: 'm', user_id: 'u1', key_id: 'k1', requests: 2, prompt: 6 },
        { org_id: 'acme', day: '2026-01-01', model: 'm', user_id: 'u1-k1', key_id: null, requests: 1, prompt: 1 },
        { org_id: 'acme', day: '2026-01-02', model: 'm', user_id: 'u1', key_id: 'k1', requests: 1, prompt: 1 },
        { org_id: 'acme1', day: '2026-01-01', model: '', user_id: 'u1', key_id: 'k1', requests: 1, prompt: 1 },
      ]);
    });
  });

  it('its memory stays bounded: peak RSS under 170 MB through 60 batches of 2,000 audit calls', async function () {
    // The embedded configuration's two processes share a 250 MB budget (gateway ~110 MB at peak). With
    // V8's defaults this process was ~220 MB before its first statement (pglite-process.ts says where
    // it went); RSS does not depend on timing, so this holds on a busy machine too.
    this.timeout(300_000);
    await withDatabase(async (db) => {
      const store = createSqlStore(db);
      await store.migrate();
      let n = 0;
      for (let batch = 0; batch < 60; batch++) {
        const audit: string[] = [];
        for (let i = 0; i < 2000; i++, n++) {
          audit.push(JSON.stringify(auditCall(n, new Date(1_700_000_000_000 + n).toISOString())));
        }
        await store.audit.insertJson({ audit: Buffer.from(`[${audit.join(',')}]`), usage: Buffer.from('[]') });
      }
      const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_records');
      assert.equal(row!.n, n, 'every record written');
      const status = await readFile(`/proc/${db.pid!}/status`, 'utf8');
      const peakMb = Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
      assert.ok(peakMb < 170, `the database process peaked at ${peakMb.toFixed(1)} MB`);
    });
  });

  it('the database process exits when the process that started it is killed', async () => {
    // A gateway stand-in: opens the embedded database, prints its child's pid, then waits to be killed.
    const script = `require('./src/store/sql/database.ts').openPglite(process.argv[1]).then((db) => {
      process.stdout.write(String(db.pid) + '\\n');
      setInterval(() => {}, 1000);
    })`;
    const parent = spawn(process.execPath, ['--require', 'tsx/cjs', '-e', script, dir], {
      cwd: path.resolve(__dirname, '../..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const childPid = await new Promise<number>((resolve, reject) => {
      let out = '';
      parent.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(Number(out.trim()));
      });
      parent.once('exit', (code) => reject(new Error(`the stand-in exited with ${String(code)}`)));
    });
    assert.ok(alive(childPid));
    parent.kill('SIGKILL');
    await waitFor(() => !alive(childPid), 10_000, 'the orphaned database process to exit');
  });
});
