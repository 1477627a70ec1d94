// The embedded database (PGlite: PostgreSQL compiled to WebAssembly) runs in a child process of its
// own, which the gateway starts, talks to over an IPC channel and stops. In the gateway's own thread
// every statement ran on the event loop: a batch of 500 audit records kept it busy ~13 ms, during which
// no request moved (json c64 p99 43 ms against the postgres store's 24), and PGlite's 150-190 MB of
// WebAssembly memory counted against the gateway's. In a process of its own it runs beside the event
// loop, on another core when there is one. The child exits with its parent: when the IPC channel
// closes (the gateway stopped or was killed) it closes the database and exits.
//
// Statements travel as messages (v8 serialization keeps Dates, BigInts and bytes). The child runs them
// in arrival order on PGlite's single connection; a transaction holds that connection from BEGIN to
// COMMIT/ROLLBACK, so statements from outside it wait on this side until it ends (what PGlite's own
// transaction() does in-process).
import { spawn, type ChildProcess } from 'node:child_process';
import type { JsonRowsCopy, SqlDatabase, SqlExecutor } from './database';
import { driverParams, type SqlParam } from './params';
import { childGcFlags } from '../../v8-settings';

/** The child: plain JavaScript run with `node -e`, so it needs no build step (tests run sources). */
const CHILD_SCRIPT = `
const [dataDir, modulePath, extraStartParams] = process.argv.slice(1);
const { PGlite } = require(modulePath);
// Fields of a PostgreSQL error worth carrying back; never the query's parameters.
const FIELDS = ['code', 'severity', 'detail', 'hint', 'constraint', 'schema', 'table', 'column', 'where', 'routine'];
const describe = (err) => {
  const out = { message: String((err && err.message) || err), name: (err && err.name) || 'Error' };
  for (const field of FIELDS) if (err && err[field] !== undefined) out[field] = err[field];
  return out;
};
let db = null;
let closing = false;
const close = () => {
  if (closing) return;
  closing = true;
  Promise.resolve(db && !db.closed ? db.close() : undefined).catch(() => {}).finally(() => process.exit(0));
};
process.on('disconnect', close);
// A terminal's Ctrl-C or a service manager's SIGTERM reaches the whole process group: the gateway
// still has records to flush at shutdown, so only its close (or its exit) ends this process.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});
// Bytes are json parameters (JsonBytes; no statement takes bytea), decoded here rather than in the
// gateway: an audit batch turned into a string there was a megabyte in its old generation per write.
const decoder = new TextDecoder();
const asText = (param) => (param instanceof Uint8Array ? decoder.decode(param) : param);
// Bulk loads: COPY in PostgreSQL's text format, one line per object. Expanding a JSON array in SQL
// (json_to_recordset) parses the text twice inside WebAssembly; JSON.parse here and COPY's own column
// input cost well under half as much per audit record.
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;
const ESCAPES = { '\\\\': '\\\\\\\\', '\\t': '\\\\t', '\\n': '\\\\n', '\\r': '\\\\r' };
const SPECIAL = /[\\\\\\t\\n\\r]/;
const SPECIALS = /[\\\\\\t\\n\\r]/g;
const escape = (c) => ESCAPES[c];
const field = (value, column) => {
  if (value === undefined || value === null) {
    if (column.fallback === undefined) return '\\\\N';
    value = column.fallback;
  } else if (column.type === 'jsonb' || column.type === 'json') value = JSON.stringify(value);
  if (typeof value !== 'string') return String(value);
  // Most values have nothing to escape: a test is cheaper than a replace with a callback.
  return SPECIAL.test(value) ? value.replace(SPECIALS, escape) : value;
};
// The COPY text is written as UTF-8 straight into a buffer, reused from batch to batch (the Blob takes
// a copy). Built as a string, one concatenation per field, it was a third of this process's garbage
// (~9 MB/s at ~7,000 calls/s), and the Blob encoded it once more.
const TAB = 9;
const NEWLINE = 10;
const COPY_BUFFER_KEPT = 4 * 1024 * 1024;
let copyBuffer = Buffer.allocUnsafeSlow(256 * 1024);
const copyBytes = (rows, columns) => {
  let out = copyBuffer;
  let pos = 0;
  const last = columns.length - 1;
  for (const row of rows) {
    for (let i = 0; i <= last; i++) {
      const text = field(row[columns[i].key], columns[i]);
      const n = text.length;
      // Room for the text at three bytes per UTF-16 unit, and its tab or newline.
      if (pos + n * 3 + 1 > out.length) {
        const grown = Buffer.allocUnsafeSlow(Math.max(out.length * 2, pos + n * 3 + 1));
        out.copy(grown, 0, 0, pos);
        out = grown;
      }
      for (let c = 0; c < n; c++) {
        const code = text.charCodeAt(c);
        if (code > 0x7f) {
          pos += out.write(c === 0 ? text : text.slice(c), pos, 'utf8');
          break;
        }
        out[pos++] = code;
      }
      out[pos++] = i === last ? NEWLINE : TAB;
    }
  }
  if (out.length <= COPY_BUFFER_KEPT) copyBuffer = out;
  return out.subarray(0, pos);
};
// The usage day totals of a bulk load: its calls (an organization and token counts) summed per
// organization, UTC day, model, user and key here, so the statement that adds them parses a few groups.
// A record's time is the gateway's UTC ISO text: its first ten characters are the day, without a Date
// (parsing and formatting one per row was ~3% of this process's time under load).
const UTC_ISO = /^\\d{4}-\\d{2}-\\d{2}T[^+]*Z$/;
const dayOf = (at) => (typeof at === 'string' && UTC_ISO.test(at) ? at.slice(0, 10) : new Date(at).toISOString().slice(0, 10));
// A group's key: the five values, each null ('-') or its length and text, so no two groups share one
// (JSON.stringify of an array cost more).
const part = (value) => (value == null ? '-' : value.length + ':' + value);
const addCalls = (groups, rows) => {
  let last = null;
  for (const row of rows) {
    if (row.orgId == null || row.promptTokens == null) continue;
    let group = last;
    // A batch's calls mostly fall in one group: compared with the last call's before a key is built.
    if (
      group === null || row.orgId !== group.orgId || (row.model ?? null) !== group.model || (row.userId ?? null) !== group.userId ||
      (row.keyId ?? null) !== group.keyId || typeof row.at !== 'string' || !row.at.startsWith(group.day) || !UTC_ISO.test(row.at)
    ) {
      const day = dayOf(row.at);
      const key = day + part(row.orgId) + part(row.model) + part(row.userId) + part(row.keyId);
      group = groups.get(key);
      if (!group) {
        group = { orgId: row.orgId, day, model: row.model ?? null, userId: row.userId ?? null, keyId: row.keyId ?? null,
          requests: 0, promptTokens: 0, cachedPromptTokens: 0, completionTokens: 0, cost: 0 };
        groups.set(key, group);
      }
      last = group;
    }
    group.requests += 1;
    group.promptTokens += row.promptTokens;
    group.cachedPromptTokens += row.cachedPromptTokens ?? 0;
    group.completionTokens += row.completionTokens ?? 0;
    group.cost += typeof row.cost === 'number' ? row.cost : 0;
  }
};
const copy = (loads, dayTotals) =>
  db.transaction(async (tx) => {
    const groups = new Map();
    for (const load of loads) {
      const names = [load.table, ...load.columns.map((c) => c.column)];
      if (!names.every((name) => IDENTIFIER.test(name))) throw new Error('bulk load: not a plain identifier: ' + names.join(', '));
      const rows = JSON.parse(decoder.decode(load.json));
      if (rows.length === 0) continue;
      const columns = load.columns.map((c) => c.column).join(', ');
      await tx.query('COPY ' + load.table + ' (' + columns + ") FROM '/dev/blob'", [], { blob: new Blob([copyBytes(rows, load.columns)]) });
      if (dayTotals && load.usage) addCalls(groups, rows);
    }
    if (groups.size > 0) await tx.query(dayTotals, [JSON.stringify([...groups.values()])]);
    return [];
  });
process.on('message', (message) => {
  if (message.op === 'close') return close();
  (message.op === 'copy' ? copy(message.loads, message.dayTotals) : db.query(message.text, message.params.map(asText))).then(
    (result) => process.send({ id: message.id, rows: Array.isArray(result) ? result : result.rows }),
    (err) => process.send({ id: message.id, error: describe(err) }),
  );
});
PGlite.create({ dataDir, startParams: [...PGlite.defaultStartParams, ...JSON.parse(extraStartParams)] }).then(
  (opened) => {
    db = opened;
    process.send({ ready: true });
  },
  (err) => {
    process.send({ ready: false, error: describe(err) });
    process.exit(1);
  },
);
`;

interface Reply {
  id?: number;
  ready?: boolean;
  rows?: object[];
  error?: { message: string; name: string; [field: string]: unknown };
}

/** Rebuilds the child's description of a failure as an Error with the same PostgreSQL fields. */
function toError(described: NonNullable<Reply['error']>): Error {
  const { message, name, ...fields } = described;
  const err = new Error(message);
  err.name = name;
  return Object.assign(err, fields);
}

/**
 * Node flags of the child, for its memory: the embedded configuration's two processes are counted
 * together (an operator's `ps`), and this one was ~220 MB idle, ~245 MB at peak under load, measured
 * by mapping (/proc/<pid>/smaps) and by V8's heap statistics:
 * - `--liftoff-only`: V8 tiers hot WebAssembly functions up to TurboFan, and PostgreSQL's startup alone
 *   makes ~90 MB of optimized code and compiler memory, kept for the process's life. Liftoff's code
 *   ran the audit batches at the same CPU per call (interleaved runs of 80,000 calls: 23.7-29.0 µs
 *   with tier-up, 25.0-26.3 without; the work is COPY's parsing and index inserts, not tight loops).
 * - `--max-semi-space-size=1`: the young generation had grown to 32 MB for garbage that dies within a
 *   batch (a batch's parsed rows and its COPY text).
 * - `--heap-growing-percent=50`: the old generation grows to 1.5× its live size, as in the gateway.
 * Together: idle 220 → 129 MB, peak under 80,000 audit calls 248 → 147 MB.
 * On one CPU (the gateway's affinity, which the child inherits) it also collects on its main thread
 * (`--single-threaded-gc`): V8's helper threads would take turns with the gateway on that core.
 */
const CHILD_NODE_FLAGS = ['--liftoff-only', '--max-semi-space-size=1', '--heap-growing-percent=50'];

/**
 * glibc's malloc raises its mmap threshold each time a large block is freed, after which a batch's
 * megabyte buffers (its IPC message, the COPY text's Blob) come from the heap and stay there: with the
 * threshold fixed at 128 KiB they are unmapped when freed (steady RSS under load 145 → 125 MB).
 * Ignored by other C libraries; an operator's own setting wins.
 */
const CHILD_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' };

/** Longest wait for the child to close the database and exit before it is killed. */
const CLOSE_TIMEOUT_MS = 10_000;

export interface PgliteProcessOptions {
  dataDir: string;
  /** Resolved path of the @electric-sql/pglite module. */
  modulePath: string;
  /** PostgreSQL settings added to PGlite's defaults (`-c name=value` pairs). */
  extraStartParams: readonly string[];
}

type Waiter = { resolve(rows: object[]): void; reject(err: Error): void };

class PgliteProcess implements SqlDatabase {
  readonly kind = 'embedded' as const;
  private child: ChildProcess | null = null;
  private starting: Promise<ChildProcess> | null = null;
  private readonly waiting = new Map<number, Waiter>();
  private nextId = 1;
  /** Set while a transaction holds the connection; other statements wait for it. */
  private transactionDone: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly options: PgliteProcessOptions) {}

  /** The running child, started (again, after a crash) when there is none. */
  start(): Promise<ChildProcess> {
    if (this.child) return Promise.resolve(this.child);
    this.starting ??= new Promise<ChildProcess>((resolve, reject) => {
      const { dataDir, modulePath, extraStartParams } = this.options;
      const child = spawn(
        process.execPath,
        [...CHILD_NODE_FLAGS, ...childGcFlags(), '-e', CHILD_SCRIPT, dataDir, modulePath, JSON.stringify(extraStartParams)],
        {
          env: { ...CHILD_ENV, ...process.env },
          stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
          serialization: 'advanced',
        },
      );
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        if (stderr.length < 4096) stderr += chunk.toString();
      });
      child.on('message', (reply: Reply) => {
        if (reply.ready === true) {
          this.child = child;
          this.starting = null;
          resolve(child);
        } else if (reply.ready === false) reject(toError(reply.error!));
        else this.settle(reply);
      });
      child.once('error', reject);
      child.once('exit', (code, signal) => {
        const reason = new Error(`the embedded database process exited (${signal ?? `code ${String(code)}`})${stderr ? `: ${stderr.split('\n')[0]}` : ''}`);
        if (this.child === child) this.child = null;
        if (this.starting) {
          this.starting = null;
          reject(reason);
        }
        for (const waiter of this.waiting.values()) waiter.reject(reason);
        this.waiting.clear();
      });
    });
    return this.starting;
  }

  private settle(reply: Reply): void {
    const waiter = this.waiting.get(reply.id!);
    if (!waiter) return;
    this.waiting.delete(reply.id!);
    if (reply.error) waiter.reject(toError(reply.error));
    else waiter.resolve(reply.rows ?? []);
  }

  /** Sends one statement, in order after everything sent before it. */
  private send<R extends object>(text: string, params: readonly SqlParam[]): Promise<R[]> {
    return this.request<R>({ text, params: driverParams(params) });
  }

  private async request<R extends object>(message: object): Promise<R[]> {
    if (this.closed) throw new Error('the embedded database is closed');
    const child = await this.start();
    const id = this.nextId++;
    return new Promise<R[]>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (rows: object[]) => void, reject });
      child.send({ id, ...message }, (err) => {
        if (!err) return;
        this.waiting.delete(id);
        reject(err);
      });
    });
  }

  async query<R extends object>(text: string, params: readonly SqlParam[] = []): Promise<R[]> {
    while (this.transactionDone) await this.transactionDone;
    return this.send<R>(text, params);
  }

  /** One message: the child runs the COPYs in a transaction of its own (PGlite's, exclusive there). */
  async copyJsonRows(loads: readonly JsonRowsCopy[], dayTotals?: string): Promise<void> {
    while (this.transactionDone) await this.transactionDone;
    await this.request({ op: 'copy', loads, ...(dayTotals === undefined ? {} : { dayTotals }) });
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    while (this.transactionDone) await this.transactionDone;
    let finish!: () => void;
    this.transactionDone = new Promise<void>((resolve) => (finish = resolve));
    try {
      await this.send('BEGIN', []);
      try {
        const result = await fn({ query: <R extends object>(text: string, params: readonly SqlParam[] = []) => this.send<R>(text, params) });
        await this.send('COMMIT', []);
        return result;
      } catch (err) {
        await this.send('ROLLBACK', []).catch(() => undefined);
        throw err;
      }
    } finally {
      this.transactionDone = null;
      finish();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const child = this.child ?? (this.starting ? await this.starting.catch(() => null) : null);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_TIMEOUT_MS);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.send({ op: 'close' }, (err) => {
        if (err) child.kill('SIGKILL');
      });
    });
  }

  /** The child's pid (tests, and the bench that pins it to a core of its own). */
  get pid(): number | undefined {
    return this.child?.pid;
  }
}

/** The embedded database: it has the bulk load, and a process of its own. */
export type EmbeddedDatabase = SqlDatabase & {
  readonly pid: number | undefined;
  copyJsonRows(loads: readonly JsonRowsCopy[], dayTotals?: string): Promise<void>;
};

/** Starts the embedded database's process and resolves once the database is open. */
export async function openPgliteProcess(options: PgliteProcessOptions): Promise<EmbeddedDatabase> {
  const db = new PgliteProcess(options);
  await db.start();
  return db;
}
