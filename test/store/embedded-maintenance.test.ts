// The embedded store vacuums and analyzes its own tables: PGlite runs PostgreSQL in single-user mode,
// where no autovacuum worker runs, so dead row versions, missing statistics and aging transaction ids
// would otherwise stay for the life of the data directory. Driven through the store as the gateway
// opens it (its database process included), with a short interval.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openPglite, type SqlDatabase } from '../../src/store/sql/database';
import { startEmbeddedMaintenance } from '../../src/store/sql/embedded-maintenance';
import { createSqlStore } from '../../src/store/sql/sql-store';
import type { Store } from '../../src/store/port';
import { waitFor } from '../helpers/wait';

interface TableStats {
  n_dead_tup: number;
  vacuum_count: number;
  analyze_count: number;
}

describe('embedded store: VACUUM and ANALYZE without autovacuum', function () {
  this.timeout(60_000);
  let dir: string;
  let db: SqlDatabase;
  let store: Store | null = null;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'agw-maintenance-'));
    db = await openPglite(dir);
  });

  after(async () => {
    await (store ? store.close() : db?.close());
    await rm(dir, { recursive: true, force: true });
  });

  const stats = async (table: string): Promise<TableStats> => {
    // A backend reports its counts at most once a second unless told to: this one now.
    await db.query('SELECT pg_stat_force_next_flush()');
    const [row] = await db.query<TableStats>(
      'SELECT n_dead_tup::int AS n_dead_tup, vacuum_count::int AS vacuum_count, analyze_count::int AS analyze_count FROM pg_stat_user_tables WHERE relname = $1',
      [table],
    );
    return row!;
  };

  it("applies autovacuum's rules: a table with dead rows is vacuumed and analyzed, then nothing is due", async () => {
    await db.query('CREATE TABLE left_alone (id int PRIMARY KEY, n int)');
    await db.query('INSERT INTO left_alone SELECT g, 0 FROM generate_series(1, 100) g');
    for (let i = 0; i < 5; i++) await db.query('UPDATE left_alone SET n = n + 1');
    const before = await stats('left_alone');
    assert.ok(before.n_dead_tup > 70, `dead rows: ${before.n_dead_tup}`);
    assert.equal(before.vacuum_count, 0);
    // The rules: over 50 + 20% of 100 live rows dead is due for VACUUM; 600 changes, for ANALYZE.
    const maintenance = startEmbeddedMaintenance(db, { intervalMs: 3_600_000 });
    assert.deepEqual(await maintenance.runNow(), ['left_alone']);
    const after = await stats('left_alone');
    assert.equal(after.n_dead_tup, 0);
    assert.equal(after.vacuum_count, 1);
    assert.equal(after.analyze_count, 1);
    assert.deepEqual(await maintenance.runNow(), [], 'nothing due any more');
    await maintenance.stop();
  });

  it('the store runs it on its interval: updated rows are vacuumed, inserted ones analyzed', async () => {
    store = createSqlStore(db, { maintenanceIntervalMs: 200 });
    await store.migrate();
    await db.query('CREATE TABLE churned (id int PRIMARY KEY, n int)');
    await db.query('INSERT INTO churned SELECT g, 0 FROM generate_series(1, 200) g');
    for (let i = 0; i < 3; i++) await db.query('UPDATE churned SET n = n + 1');
    await db.query('CREATE TABLE appended (id int PRIMARY KEY)');
    await db.query('INSERT INTO appended SELECT g FROM generate_series(1, 2000) g');
    await waitFor(async () => (await stats('churned')).vacuum_count > 0, { what: 'the vacuum of churned' });
    assert.equal((await stats('churned')).n_dead_tup, 0);
    // 2,000 inserts: over 1,000 + 20% since the last vacuum (none) and 50 + 10% since the last analyze.
    await waitFor(
      async () => {
        const s = await stats('appended');
        return s.vacuum_count > 0 && s.analyze_count > 0;
      },
      { what: 'the vacuum and analyze of appended' },
    );
  });
});
