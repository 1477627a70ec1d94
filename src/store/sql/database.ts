// The tiny query interface the SQL repositories are written against. PGlite (embedded) and node-postgres
// (postgres) both satisfy it, so every repository's SQL is written once and runs on both.
import { access, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type PgModule from 'pg';
import { runNodeScript } from '../../node-script';
import { driverParams, type SqlParam } from './params';
import { openPgliteProcess, type EmbeddedDatabase } from './pglite-process';

// Each driver is loaded only by the store that uses it: a postgres gateway does not carry PGlite's
// JavaScript in memory, nor an embedded one node-postgres.
function loadPg(): typeof PgModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('pg') as typeof PgModule;
}

export { JsonBytes, type SqlParam } from './params';

export interface SqlExecutor {
  /** Runs one statement with $1.. parameters and returns its rows. */
  query<R extends object>(text: string, params?: readonly SqlParam[]): Promise<R[]>;
  /**
   * Bulk load, where the driver has a path cheaper than expanding JSON in SQL: each JSON array of
   * objects goes into its table with COPY, all in one transaction (nothing loaded if one fails; a
   * duplicate key fails with the usual 23505). The embedded database has it; node-postgres does not.
   * `dayTotals`: a statement run in the same transaction with $1 the JSON array of the `usage` loads'
   * calls summed per organization, UTC day, model, user and key (usage-repository.ts, ADD_DAY_TOTALS_JSON).
   */
  copyJsonRows?(loads: readonly JsonRowsCopy[], dayTotals?: string): Promise<void>;
}

/**
 * One column of a table written from JSON records: the object property it comes from and its SQL type.
 * The same list makes the json_to_recordset INSERT (insertFromJson) and the bulk load's COPY lines.
 */
export interface JsonCopyColumn {
  column: string;
  key: string;
  /** The column's type; a json/jsonb property (an object or array) is loaded as its JSON text. */
  type: string;
  /** Written when the property is missing or null. */
  fallback?: string;
}

/**
 * One fixed INSERT whatever the batch size: the records travel as one JSON text parameter (`$param`)
 * and are expanded server-side by json_to_recordset, so the server parses and plans the same text every
 * time instead of a new VALUES list per batch. `suffix`: e.g. an ON CONFLICT clause.
 */
export function insertFromJson(table: string, columns: readonly JsonCopyColumn[], param: number, suffix = ''): string {
  const property = (c: JsonCopyColumn): string => `x."${c.key}"`;
  const value = (c: JsonCopyColumn): string =>
    c.fallback === undefined ? property(c) : `COALESCE(${property(c)}, '${c.fallback.replace(/'/g, "''")}'::${c.type})`;
  return `INSERT INTO ${table} (${columns.map((c) => c.column).join(', ')})
  SELECT ${columns.map(value).join(', ')}
  FROM json_to_recordset($${param}::json) AS x(${columns.map((c) => `"${c.key}" ${c.type}`).join(', ')})${suffix ? `\n  ${suffix}` : ''}`;
}

export interface JsonRowsCopy {
  table: string;
  columns: readonly JsonCopyColumn[];
  /** A JSON array of objects, as UTF-8 bytes. */
  json: Buffer;
  /** Its objects with an `orgId` and `promptTokens` are calls counted in the usage day totals. */
  usage?: boolean;
}

export interface SqlDatabase extends SqlExecutor {
  readonly kind: 'embedded' | 'postgres';
  /**
   * Runs `fn` in one transaction on one connection (BEGIN/COMMIT, ROLLBACK on throw). Inside it use the
   * executor passed in, never the database itself: PGlite has a single connection and serializes
   * transactions in-process, so querying the database from inside a transaction would wait forever.
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T>;
  close(): Promise<void>;
}

export interface TransactionOptions {
  /** No time limit on its statements (schema migrations: an index built on a large table). */
  unbounded?: boolean;
}

/**
 * PGlite's shared buffers: PostgreSQL's default (128 MB) is sized for a dedicated server; the embedded
 * store's process sits beside the gateway's, and its WebAssembly memory never shrinks once grown.
 * PostgreSQL touches all of it at start: 16 MB → 4 MB took the process from 127 to 115 MB idle and
 * 142 to 127 MB at peak under audit load, at the same CPU per call (the audit trail appends at the
 * right edge of its indexes; pages not cached here are in the operating system's page cache).
 */
const PGLITE_SHARED_BUFFERS = '4MB';

/**
 * PGlite's WAL buffers: PostgreSQL sizes them at 1/32 of shared_buffers, 128 kB here, and a bulk load
 * of audit records filled them mid-statement, writing WAL out a page at a time as it went, each write
 * a trip through the WebAssembly file system. At 1 MB most of it goes out in runs: WAL writes in a 3 s
 * trace of the database process under json c64 load, 1,705 -> 630 (the rest are the flushes PostgreSQL
 * makes before it writes out a data page).
 */
const PGLITE_WAL_BUFFERS = '1MB';

/**
 * New WAL segments are not filled with zeros (`wal_init_zero=off`, PostgreSQL's setting for file systems
 * where pre-filling buys nothing). Zero-filling a 16 MB segment went through a buffer of the whole
 * segment in the database process: under audit load, every ~10 s (one segment's worth of WAL) its RSS
 * jumped 14-18 MB for the ~200 ms of that write, which set the process's peak (bench soak, json c64:
 * process tree peak 262.7 -> 250.5 MB). Recovery does not depend on the zeros: each WAL record carries
 * its CRC, and replay stops at the first record that does not check out.
 */
const PGLITE_WAL_INIT_ZERO = 'off';

/**
 * Creates a new embedded data directory (initdb) in a short-lived child process. Initdb grows PGlite's
 * WebAssembly memory to ~700 MB, and a WebAssembly memory is never given back: done in the gateway's
 * own process, the first start would carry that for the process's lifetime.
 */
async function initPgliteDataDir(dataDir: string, modulePath: string): Promise<void> {
  const script = `const [dataDir, modulePath] = process.argv.slice(1);
require(modulePath).PGlite.create({ dataDir }).then((db) => db.close()).then(
  () => process.exit(0),
  (err) => { process.stderr.write(String((err && err.message) || err)); process.exit(1); });`;
  const failure = await runNodeScript(script, [dataDir, modulePath]);
  if (failure !== null) throw new Error(`initdb failed: ${failure.split('\n')[0]}`);
}

/** The embedded database lives in `<store.path>/pgdata`: the store directory also holds the lock file and socket. */
export async function openPglite(storePath: string): Promise<EmbeddedDatabase> {
  const dataDir = path.join(path.resolve(storePath), 'pgdata');
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const modulePath = require.resolve('@electric-sql/pglite');
  const initialised = await access(path.join(dataDir, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  if (!initialised) await initPgliteDataDir(dataDir, modulePath);
  // The database runs in a child process of its own (pglite-process.ts says why).
  return openPgliteProcess({
    dataDir,
    modulePath,
    extraStartParams: [
      '-c',
      `shared_buffers=${PGLITE_SHARED_BUFFERS}`,
      '-c',
      `wal_buffers=${PGLITE_WAL_BUFFERS}`,
      '-c',
      `wal_init_zero=${PGLITE_WAL_INIT_ZERO}`,
    ],
  });
}

export interface PostgresOptions {
  url: string;
  /**
   * Called with errors of pooled connections outside a query: idle ones, and one a transaction holds
   * between its statements (unhandled, either would end the process). Once per connection.
   */
  onConnectionError(err: Error): void;
  max?: number;
  /** store.queryTimeoutMs (postgresTimeouts says what it bounds); 0 or absent: no limit. */
  queryTimeoutMs?: number;
}

/**
 * How long past the server's own limit the gateway waits for an answer before it drops the connection:
 * the server cancels a slow statement itself (statement_timeout) and the connection stays usable; only
 * a server that cannot answer at all (a network partition) leaves the client-side limit to act.
 */
const UNANSWERED_GRACE_MS = 2000;
/** The largest delay a Node timer takes: a statement of an unbounded transaction. */
const NO_TIMER_LIMIT = 2 ** 31 - 1;

/**
 * Connection settings that keep a statement from waiting forever. Without them a server that stopped
 * answering without closing its connections (its host gone in a failover, a partition, a middlebox that
 * dropped the connection) left every pooled connection with a statement in flight, waiting for the
 * kernel to give up on it (~15 minutes): requests on them hung that long, and new ones waited for a
 * connection (a byte-dropping relay in the tests: the pool stayed wedged after the network healed).
 * - statement_timeout: the server cancels a statement running (or waiting for a lock) longer.
 * - idle_in_transaction_session_timeout: the server ends a session whose transaction waits on its
 *   client that long (a gateway cut off mid-transaction must not hold its row locks for hours).
 * - query_timeout: node-postgres fails a statement not answered a little after that; its connection is
 *   then dropped (pool.query releases it with the error; transaction() below).
 * - TCP keepalive: an idle pooled connection to a vanished server is found dead, not handed out.
 */
/** How long a new PostgreSQL connection may take to be made (a server that does not answer would hold it for ever). */
export const CONNECT_TIMEOUT_MS = 10_000;

export function postgresTimeouts(queryTimeoutMs: number | undefined): Partial<PgModule.ClientConfig> {
  const keepAlive = { keepAlive: true, keepAliveInitialDelayMillis: 10_000 };
  if (!queryTimeoutMs) return keepAlive;
  return {
    ...keepAlive,
    statement_timeout: queryTimeoutMs,
    idle_in_transaction_session_timeout: queryTimeoutMs,
    query_timeout: queryTimeoutMs + UNANSWERED_GRACE_MS,
  };
}

/**
 * A statement PostgreSQL (or the embedded database) refused: SQLSTATE classes 22 (data exception), 23
 * (integrity constraint) and 42 (syntax or access rule): the same statement gets the same answer.
 * Anything else (no answer within the time limit, a connection lost, a cancelled statement, a
 * serialization failure, a failure without a SQLSTATE) says nothing about the statement itself.
 */
export function isSqlRefusal(err: unknown): boolean {
  const code = err !== null && typeof err === 'object' ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^(22|23|42)/.test(code);
}

/** node-postgres's error for a statement not answered within query_timeout: its connection is unusable. */
export function isUnanswered(err: unknown): boolean {
  return err instanceof Error && err.message === 'Query read timeout';
}

/** Statement texts run as named prepared statements on PostgreSQL (see preparedStatement). */
const PREPARED = new Map<string, string>();

/**
 * Marks a constant statement text of a hot path as prepared: on PostgreSQL each pooled connection
 * parses and plans it once and reuses the plan (an unnamed statement is planned at every execution,
 * which is most of the cost of a one-row statement). Only for texts that are constants: every text
 * marked stays prepared on every connection for its life. The embedded database ignores it.
 */
export function preparedStatement(text: string): string {
  if (!PREPARED.has(text)) PREPARED.set(text, `agw_${PREPARED.size + 1}`);
  return text;
}

function pgQuery(text: string, params: readonly SqlParam[]): PgModule.QueryConfig {
  const name = PREPARED.get(text);
  return name === undefined ? { text, values: driverParams(params) as unknown[] } : { name, text, values: driverParams(params) as unknown[] };
}

/** A statement of an unbounded transaction: no client-side limit (the server's is lifted by SET LOCAL). */
function unboundedQuery(text: string, params: readonly SqlParam[]): PgModule.QueryConfig {
  // query_timeout per statement: node-postgres's QueryConfig type does not declare it.
  return { ...pgQuery(text, params), query_timeout: NO_TIMER_LIMIT } as PgModule.QueryConfig;
}

export function openPostgres(options: PostgresOptions): SqlDatabase {
  const pg = loadPg();
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    ...postgresTimeouts(options.queryTimeoutMs),
  });
  pool.on('error', options.onConnectionError);
  return {
    kind: 'postgres',
    async query<R extends object>(text: string, params: readonly SqlParam[] = []): Promise<R[]> {
      return (await pool.query<R & PgModule.QueryResultRow>(pgQuery(text, params))).rows;
    },
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>, transactionOptions: TransactionOptions = {}): Promise<T> {
      const client = await pool.connect();
      const unbounded = transactionOptions.unbounded === true;
      const statement = unbounded ? unboundedQuery : pgQuery;
      // BEGIN, COMMIT and the SET LOCALs: plain texts, each with no client-side limit when unbounded.
      const control = (text: string): Promise<unknown> => (unbounded ? client.query(unboundedQuery(text, [])) : client.query(text));
      let broken = false;
      // A checked-out connection has no listener of the pool's: an error event on it while no query of
      // it runs (the server restarting between two statements of the transaction) would otherwise be
      // unhandled and end the process. Its query then fails, and the connection is not reused.
      const onError = (err: Error): void => {
        // The server's FATAL message, then the socket's end: the first says why.
        if (!broken) options.onConnectionError(err);
        broken = true;
      };
      client.on('error', onError);
      try {
        await control('BEGIN');
        if (unbounded) await control('SET LOCAL statement_timeout = 0');
        if (unbounded) await control('SET LOCAL idle_in_transaction_session_timeout = 0');
        const result = await fn({
          async query<R extends object>(text: string, params: readonly SqlParam[] = []): Promise<R[]> {
            return (await client.query<R & PgModule.QueryResultRow>(statement(text, params))).rows;
          },
        });
        await control('COMMIT');
        return result;
      } catch (err) {
        // An unanswered statement is still in flight on the connection: a ROLLBACK would wait behind it.
        if (isUnanswered(err)) broken = true;
        else
          await client.query('ROLLBACK').catch(() => {
            broken = true;
          });
        throw err;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
    async close(): Promise<void> {
      await pool.end();
    },
  };
}
