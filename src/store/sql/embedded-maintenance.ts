// VACUUM and ANALYZE for the embedded database. PGlite runs PostgreSQL in single-user mode: no
// autovacuum worker ever runs, so without this its updated tables (responses, conversations, runs, the
// usage day totals) keep every dead row version, its planner never has statistics, and its transaction
// ids age toward wraparound (PostgreSQL refuses writes some two billion transactions after a table's
// last freeze). Every intervalMs (autovacuum's naptime) this applies autovacuum's default rules to the
// schema's tables, from pg_stat_user_tables, one table at a time: each VACUUM holds the database's one
// connection while it runs, and a table vacuumed before skips its all-visible pages.
//   VACUUM  when dead rows > 50 + 20% of live rows, rows inserted since the last vacuum > 1,000 + 20%,
//           or the table's age > 150 million transactions (vacuum_freeze_table_age: the vacuum freezes);
//   ANALYZE when rows changed since the last analyze > 50 + 10% (VACUUM (ANALYZE) when both apply).
import type { Logger } from 'winston';
import type { SqlDatabase } from './database';

export const MAINTENANCE_INTERVAL_MS = 60_000;

interface TableDue {
  name: string;
  vacuum: boolean;
  analyze: boolean;
}

const TABLES_DUE = `SELECT s.relname AS name,
    (s.n_dead_tup > 50 + 0.2 * s.n_live_tup OR s.n_ins_since_vacuum > 1000 + 0.2 * s.n_live_tup OR age(c.relfrozenxid) > 150000000) AS vacuum,
    (s.n_mod_since_analyze > 50 + 0.1 * s.n_live_tup) AS analyze
  FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
  WHERE s.schemaname = current_schema()`;

export interface EmbeddedMaintenance {
  /** One round now (after the one running, if any); resolves with the tables it vacuumed or analyzed. */
  runNow(): Promise<string[]>;
  /** Stops the timer and waits for a round in progress. */
  stop(): Promise<void>;
}

export function startEmbeddedMaintenance(db: SqlDatabase, options: { intervalMs?: number; logger?: Logger } = {}): EmbeddedMaintenance {
  let running: Promise<string[]> = Promise.resolve([]);
  let stopped = false;

  const round = async (): Promise<string[]> => {
    const done: string[] = [];
    const due = (await db.query<TableDue>(TABLES_DUE)).filter((table) => table.vacuum || table.analyze);
    if (due.length === 0) return done;
    // The database's WebAssembly memory never shrinks once grown: VACUUM's dead-row list (sized up to
    // maintenance_work_mem, 64 MB, from the table's size) and ANALYZE's sample (300 rows per unit of
    // the statistics target, 100) are kept small. A list that fills is emptied by one more pass over the
    // indexes; ten-bucket statistics serve lookups by key and by time.
    await db.query(`SET maintenance_work_mem = '4MB'`);
    await db.query('SET default_statistics_target = 10');
    try {
      for (const table of due) {
        if (stopped) break;
        const name = `"${table.name.replace(/"/g, '""')}"`;
        await db.query(table.vacuum ? `VACUUM ${table.analyze ? '(ANALYZE) ' : ''}${name}` : `ANALYZE ${name}`);
        done.push(table.name);
      }
    } finally {
      await db.query('RESET maintenance_work_mem');
      await db.query('RESET default_statistics_target');
    }
    return done;
  };

  const next = (): Promise<string[]> => {
    running = running.then(round).catch((err: unknown) => {
      // A failed round is retried at the next interval; the store's own queries are not affected.
      options.logger?.warn('embedded database maintenance failed', { component: 'store', errorName: err instanceof Error ? err.name : 'unknown' });
      return [];
    });
    return running;
  };

  const timer = setInterval(() => void next(), options.intervalMs ?? MAINTENANCE_INTERVAL_MS);
  timer.unref();
  return {
    runNow: next,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
