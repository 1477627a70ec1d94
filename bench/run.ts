// `npm run bench`: the gateway's overhead against a direct call to the same upstream and against the
// floor (a minimal node:http pass-through proxy), as ratios measured in one run.
//
// Processes: the fake upstreams and the load generator share core 0, with a local PostgreSQL server
// (the postgres store's); the proxy under test (floor or gateway) gets core 1 (taskset). The gateway
// is measured as an operator runs it: its whole process tree (the embedded store's database process
// included) on its core, and its memory as the sum of the tree's processes (what `ps` shows).
// The gateway runs as `npm start` would, with the auth, rateLimit, audit and stripFields plugins on.
// Upstreams are called over plain HTTP and over TLS (a self-signed certificate made at start with the
// `openssl` CLI, trusted by the gateway through its provider's `tls.caFile`); the targets are checked
// on plain HTTP, the TLS figures are reported.
// The Responses points (POST /v1/responses relayed to the plain upstream, a native Responses upstream)
// follow the chat matrix: stateless non-streamed at c = 64 against the floor, streamed at c = 1 (TTFB
// over the floor's), and streamed at c = 64 with `store: true` against `store: false` (the event log
// written, then read back for one response); the gateway's peak RSS is taken over those points alone.
// The stored-conversation point drives conversations to 20 turns (turn 1 `store: true`, each later turn
// only its own input with `previous_response_id`, non-streamed, a few conversations at a time) and
// reports turn 20's p50 latency over turn 1's: what loading the history and appending the turn add.
//
//   npm run bench                      the full matrix (non-streaming and streaming, c = 1, 16, 64)
//   npm run bench -- --duration 5      seconds measured per run (default 5, after 1 s of warm-up)
//   npm run bench -- --repeat 3        runs per cell, interleaved across targets; figures are medians
//   npm run bench -- --warm-up 10      seconds of c = 64 load per request kind on the floor proxy and each
//                                      gateway before the first measured run (default 10; 0: none)
//   npm run bench -- --soak 600        c = 64 non-streaming through the gateway for 600 s (after 30 s of
//                                      warm-up), RSS sampled
//   npm run bench -- --soak 30 --soak-request responses-stored-stream
//                                      the soak's request: chat (default), chat-stream, responses (also
//                                      --api responses), responses-stream, responses-stored-stream
//   npm run bench -- --soak 20 --soak-concurrency 1
//                                      the soak's concurrency (default 64): c = 1 for profiling the added
//                                      latency of one request at a time
//   BENCH_GATEWAY_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' npm run bench -- ...
//                                      extra node flags for the gateway process only (profiling)
//   npm run bench -- --upstream plain  plain HTTP upstreams only (or tls); default: both
//   npm run bench -- --api responses   the Responses points only, the stored-conversation point included (or chat:
//                                      the chat matrix only; or conversation: the stored-conversation point only);
//                                      default: all
//   npm run bench -- --api lists       the list point only (bench/lists.ts): the console's list operations
//                                      on PostgreSQL holding 100,000 runs and 1,000,000 audit records (a
//                                      database of its own, seeded, dropped after), p50/p95 of 200 requests
//                                      each against p95 <= 100 ms; --requests N per operation, --lists-scale
//                                      0.1 a tenth of the rows, --lists-database-url URL a database to seed
//                                      once and keep (reused as it is when seeded at the same scale)
//   npm run bench -- --conversations 60  conversations counted in the stored-conversation point (default 60)
//   npm run bench -- --store postgres  one store only: embedded (PGlite, the single-process default) or
//                                      postgres (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test,
//                                      in a fresh schema created and dropped by the bench); default: both
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { stringify } from 'yaml';
import { makeCertificate } from './certificate';
import { readStoredEventLog } from './event-log-check';
import { resetPeakRss, rssOf } from './process-memory';
import { busyPercent, readCoreTimes } from './core-busy';
import { BENCH_KEY as KEY, gatewayConfigDocument, servingNodeFlags, type StoreKind, type Upstreams } from './gateway-config';
import type { ConversationLoadOptions, ConversationLoadResult } from './conversation-load';
import type { LoadOptions } from './loadgen';
import { listsPoint, listsScale } from './lists';
import { chatRequest, RESPONSES_DONE, responsesRequest } from './requests';
import { responsesStreamEventCount } from './responses-wire';

const DIST = path.resolve(__dirname);
const MAIN = path.resolve(__dirname, '../src/main.js');

const PACKAGE = JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { scripts: Record<string, string> };
// The node flags `npm start` runs the gateway with: the bench measures the gateway as an operator runs it.
const SERVE_NODE_FLAGS = servingNodeFlags(PACKAGE.scripts['start'] ?? '');
/** Load before each measured run (connections opened, code warm), not counted. */
const WARMUP_MS = 1000;
/** Text deltas per stream (the upstreams read the same variable). */
const CHUNKS = Number(process.env['BENCH_CHUNKS'] ?? 20);

interface CellResult {
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
  ttfbP50: number;
  ttfbP99: number;
  /** With LoadOptions.captureResponseId: one measured reply's response id. */
  responseId?: string | null;
}

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(process.argv[at + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

type UpstreamKind = 'plain' | 'tls';
type Api = 'chat' | 'responses' | 'conversation' | 'lists';

/** A flag naming one of `choices`, or `both` / `all` (absent: all of them). */
function choiceFlag<T extends string>(flag: string, choices: readonly T[]): T[] {
  const at = process.argv.indexOf(flag);
  if (at < 0) return [...choices];
  const value = process.argv[at + 1];
  if (value === 'both' || value === 'all') return [...choices];
  const chosen = choices.find((choice) => choice === value);
  if (chosen === undefined) throw new Error(`${flag} must be ${choices.join(', ')} or ${choices.length === 2 ? 'both' : 'all'}`);
  return [chosen];
}

/** `--api responses` includes the stored-conversation point (a Responses point); `conversation` is it alone. */
const apisWanted = (): Api[] => {
  const apis = choiceFlag<Api>('--api', ['chat', 'responses', 'conversation', 'lists']);
  return apis.includes('responses') && !apis.includes('conversation') ? [...apis, 'conversation'] : apis;
};
const upstreamsWanted = (): UpstreamKind[] => choiceFlag<UpstreamKind>('--upstream', ['plain', 'tls']);
const storesWanted = (): StoreKind[] => choiceFlag<StoreKind>('--store', ['embedded', 'postgres']);

/**
 * The postgres schema's planner statistics, refreshed before a measured run (at most every 5 s; see
 * postgresSchema). Null without a postgres store.
 */
let refreshStatistics: (() => Promise<void>) | null = null;
let statisticsAt = 0;

async function freshStatistics(): Promise<void> {
  if (!refreshStatistics || Date.now() - statisticsAt < 5000) return;
  await refreshStatistics();
  statisticsAt = Date.now();
}

/**
 * A fresh schema in DATABASE_URL's database for the postgres store; drop() removes it after the run.
 * analyze() runs ANALYZE on its tables: they are created empty seconds before they are measured and grow
 * by thousands of rows a second, so autovacuum's first ANALYZE (its naptime is a minute) would come
 * after most of the run, and the gateway's prepared statements would keep the plans chosen for
 * near-empty tables (a sequential scan is the cheapest read of a table of a few pages). A deployment's
 * tables are older than a minute: the bench gives its own the statistics autovacuum would.
 */
async function postgresSchema(): Promise<{ url: string; drop(): Promise<void>; analyze(): Promise<void> }> {
  const base = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `agw_bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
    async analyze() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      let backend = 0;
      try {
        backend = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        const { rows } = await client.query<{ name: string }>('SELECT tablename AS name FROM pg_tables WHERE schemaname = $1', [schema]);
        if (rows.length > 0) await client.query(`ANALYZE ${rows.map((r) => `${schema}."${r.name}"`).join(', ')}`);
      } finally {
        await client.end();
      }
      // Its server process gone before the run: one that exited during a run would take its CPU time
      // out of the run's PostgreSQL CPU (the sum over the server's processes, read before and after).
      for (let waited = 0; backend > 0 && existsSync(`/proc/${backend}`) && waited < 5000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    },
  };
}

const hasTaskset = (() => {
  try {
    return readFileSync('/proc/cpuinfo', 'utf8').split('\nprocessor').length >= 2;
  } catch {
    return false;
  }
})();

/** Pids of the PostgreSQL server processes running on this machine (postmaster and backends). */
function localPostgresPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** Pids of `pid`'s descendants (the embedded store's database process), children before theirs. */
function descendantPids(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited meanwhile
    }
  }
  const found: number[] = [];
  for (let i = -1; i < found.length; i++) {
    const parent = i < 0 ? pid : found[i]!;
    for (const [child, ppid] of parents) if (ppid === parent) found.push(child);
  }
  return found;
}

/** CPU time (user + system, seconds) the local PostgreSQL processes have used so far. */
function postgresCpuSeconds(): number {
  // With the time of exited backends, which the postmaster takes over when it reaps them: without it a
  // backend that ended during a run took its CPU out of the sum (a negative figure per request).
  return cpuSecondsOf(localPostgresPids(), true);
}

/** CPU time (user + system, seconds) the processes have used so far; `reaped`: with their exited children's. */
function cpuSecondsOf(pids: readonly number[], reaped = false): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
      if (reaped) ticks += Number(fields[13]) + Number(fields[14]); // cutime, cstime
    } catch {
      // exited meanwhile
    }
  }
  return ticks / 100; // USER_HZ
}

/**
 * The proxy under test gets core 1 alone, so a PostgreSQL server on this machine (the postgres store's,
 * DATABASE_URL on loopback) is moved to core 0 with the upstream and the load generator for the
 * bench's duration (backends forked later inherit the postmaster's affinity), and given its own
 * affinity back afterwards. Its CPU per request is printed, so the audit trail's cost is reported
 * rather than hidden. Does nothing when the server is remote or the processes are not ours to move.
 */
function pinLocalPostgres(databaseUrl: string): { pinned: boolean; restore(): void } {
  const host = new URL(databaseUrl).hostname;
  if (!hasTaskset || !['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host)) return { pinned: false, restore() {} };
  const saved = new Map<number, string>();
  for (const pid of localPostgresPids()) {
    const shown = spawnSync('taskset', ['-p', String(pid)], { encoding: 'utf8' });
    const mask = /affinity mask: ([0-9a-f]+)/.exec(shown.stdout)?.[1];
    if (!mask) continue;
    if (spawnSync('taskset', ['-a', '-p', '-c', '0', String(pid)], { stdio: 'ignore' }).status === 0) saved.set(pid, mask);
  }
  return {
    pinned: saved.size > 0,
    restore() {
      for (const [pid, mask] of saved) spawnSync('taskset', ['-a', '-p', mask, String(pid)], { stdio: 'ignore' });
      // Backends started during the bench inherited core 0: they get the postmaster's original mask too.
      const original = [...saved.values()][0];
      if (original) for (const pid of localPostgresPids()) if (!saved.has(pid)) spawnSync('taskset', ['-a', '-p', original, String(pid)], { stdio: 'ignore' });
    },
  };
}

/** Spawns `node script args` pinned to `core` and resolves with the first JSON line it prints. */
function startPinned(core: number, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ child: ChildProcess; info: Record<string, unknown> }> {
  const command = hasTaskset ? 'taskset' : process.execPath;
  const argv = hasTaskset ? ['-c', String(core), process.execPath, ...args] : args;
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const onLine = (text: string): boolean => {
      for (const line of text.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const info = JSON.parse(line) as Record<string, unknown>;
          if (typeof info['port'] === 'number' && info['port'] > 0) {
            resolve({ child, info });
            return true;
          }
        } catch {
          // not a complete JSON line yet
        }
      }
      return false;
    };
    // BENCH_CHILD_LOG_DIR: every pinned child's output also goes to <dir>/<pid>.log (e.g. with --trace-gc).
    const logDir = process.env['BENCH_CHILD_LOG_DIR'];
    if (logDir) {
      const file = createWriteStream(path.join(logDir, `${child.pid}.log`));
      child.stdout!.pipe(file);
      child.stderr!.pipe(file);
    }
    child.stdout!.on('data', (d: Buffer) => {
      if (out.length < 100_000) out += d.toString();
      onLine(out);
    });
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.length > 100_000) err = err.slice(-50_000);
      onLine(err);
    });
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}: ${err.slice(-2000)}`)));
  });
}

/** What the load generator sends where (LoadOptions less the run's shape). */
type Target = Pick<LoadOptions, 'url' | 'key' | 'body' | 'expectText' | 'captureResponseId'>;

function runLoad(target: Target, concurrency: number, durationMs: number, caFile: string): Promise<CellResult> {
  return new Promise((resolve, reject) => {
    const command = hasTaskset ? 'taskset' : process.execPath;
    const options: LoadOptions = { ...target, concurrency, durationMs, warmupMs: WARMUP_MS };
    const args = [path.join(DIST, 'loadgen.js'), JSON.stringify(options)];
    const child = spawn(command, hasTaskset ? ['-c', '0', process.execPath, ...args] : args, {
      env: { ...process.env, BENCH_CA: caFile },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`load generator exited with ${code}`));
      // A figure with no samples (no request finished in time) is null in JSON: NaN here, never a pass.
      const parsed = JSON.parse(out.trim()) as Record<string, number | string | null>;
      const { responseId, ...figures } = parsed;
      resolve({
        ...(Object.fromEntries(Object.entries(figures).map(([name, value]) => [name, value ?? NaN])) as unknown as CellResult),
        ...(responseId !== undefined ? { responseId: typeof responseId === 'string' ? responseId : null } : {}),
      });
    });
  });
}

/** Runs the stored-conversation driver (conversation-load.ts) on core 0, like the load generator. */
function runConversations(options: ConversationLoadOptions): Promise<ConversationLoadResult> {
  return new Promise((resolve, reject) => {
    const command = hasTaskset ? 'taskset' : process.execPath;
    const args = [path.join(DIST, 'conversation-load.js'), JSON.stringify(options)];
    const child = spawn(command, hasTaskset ? ['-c', '0', process.execPath, ...args] : args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim()) as ConversationLoadResult) : reject(new Error(`conversation driver exited with ${code}`)),
    );
  });
}

/** A cell's runs per target, and the PostgreSQL CPU per request of the targets that use it. */
interface Measured {
  runs: Map<string, CellResult[]>;
  postgresCpu: Map<string, number[]>;
  /** CPU seconds per request of the gateway process, and of its child (the embedded database), per run. */
  gatewayCpu: Map<string, number[]>;
  childCpu: Map<string, number[]>;
}

/** The processes of a gateway target whose CPU is measured: the gateway and its descendants. */
interface TargetProcesses {
  gateway: number;
  children: readonly number[];
}

/**
 * Each target is measured `repeat` times, interleaved (first, second, ..., first, ...): on a shared
 * machine one run can land on a busy moment, so every figure is taken as the median of its runs.
 * For the targets named in `postgresTargets`, the local PostgreSQL server's CPU per request is recorded
 * (the postgres store's writes); for those in `processes`, the gateway's and its child's. CPU time,
 * unlike latency, does not stretch when other work shares the core.
 */
async function measureCell(
  targets: ReadonlyMap<string, Target>,
  concurrency: number,
  repeat: number,
  durationMs: number,
  caFile: string,
  postgresTargets: ReadonlySet<string>,
  processes: ReadonlyMap<string, TargetProcesses> = new Map(),
): Promise<Measured> {
  const measured: Measured = { runs: new Map(), postgresCpu: new Map(), gatewayCpu: new Map(), childCpu: new Map() };
  const add = (map: Map<string, number[]>, name: string, value: number): void => void map.set(name, [...(map.get(name) ?? []), value]);
  for (let i = 0; i < repeat; i++) {
    for (const [name, target] of targets) {
      const onPostgres = postgresTargets.has(name);
      const own = processes.get(name);
      if (onPostgres) await freshStatistics();
      const cpuBefore = onPostgres ? postgresCpuSeconds() : 0;
      const gatewayBefore = own ? cpuSecondsOf([own.gateway]) : 0;
      const childBefore = own ? cpuSecondsOf(own.children) : 0;
      const result = await runLoad(target, concurrency, durationMs, caFile);
      // Requests during the warm-up are not counted: estimated at the measured rate.
      const requests = result.rps * ((durationMs + WARMUP_MS) / 1000);
      if (onPostgres) add(measured.postgresCpu, name, (postgresCpuSeconds() - cpuBefore) / requests);
      if (own) {
        add(measured.gatewayCpu, name, (cpuSecondsOf([own.gateway]) - gatewayBefore) / requests);
        if (own.children.length > 0) add(measured.childCpu, name, (cpuSecondsOf(own.children) - childBefore) / requests);
      }
      measured.runs.set(name, [...(measured.runs.get(name) ?? []), result]);
    }
  }
  return measured;
}

/** Seconds of load per request kind and target before the first measured run (`--warm-up S`, 0: none). */
function warmUpSeconds(): number {
  const at = process.argv.indexOf('--warm-up');
  if (at < 0) return 10;
  const value = Number(process.argv[at + 1]);
  if (!Number.isFinite(value) || value < 0) throw new Error('--warm-up must be a number of seconds (0: none)');
  return value;
}

/**
 * Load on every proxy under test, of every request kind it is measured on, before the first measured run.
 * A freshly started gateway spends its first ~20 s compiling its hot paths (V8's optimising compiler
 * runs on the same pinned core): in 2 s windows from its start at json c64, 537, 262, 241 ... 156-219 µs
 * of CPU per request. Without this, the first cell of each request kind (json c1, the Responses json
 * point) measured that start against a floor proxy whose few lines are compiled in a second. The
 * `store: true` stream is left out: it would leave rows in the store the later points then measure.
 */
async function warmUp(floorPort: number, gateways: readonly GatewayUnderTest[], apis: readonly Api[], model: string): Promise<void> {
  const seconds = warmUpSeconds();
  if (seconds === 0) return;
  const kinds: { path: string; body: string; expectText?: string }[] = [];
  if (apis.includes('chat')) {
    kinds.push({ path: '/v1/chat/completions', body: chatRequest(model, false) }, { path: '/v1/chat/completions', body: chatRequest(model, true) });
  }
  if (apis.includes('responses') || apis.includes('conversation')) {
    kinds.push(
      { path: '/v1/responses', body: responsesRequest(model, { stream: false, store: false }), expectText: RESPONSES_DONE.json },
      { path: '/v1/responses', body: responsesRequest(model, { stream: true, store: false }), expectText: RESPONSES_DONE.stream },
    );
  }
  if (kinds.length === 0) return;
  const targets = [
    { name: 'the floor proxy', port: floorPort, key: '' },
    ...gateways.map((g) => ({ name: `the gateway (${g.store})`, port: g.port, key: KEY })),
  ];
  console.log(`warm-up: ${targets.map((t) => t.name).join(', ')}: ${kinds.length} request kinds at c=64 for ${seconds} s each, not measured (--warm-up S)`);
  for (const target of targets) {
    for (const kind of kinds) {
      const result = await runLoad(
        { url: `http://127.0.0.1:${target.port}${kind.path}`, key: target.key, body: kind.body, ...(kind.expectText ? { expectText: kind.expectText } : {}) },
        64,
        seconds * 1000,
        '',
      );
      if (result.errors > 0 && result.requests === 0) throw new Error(`warm-up: ${target.name} answered no ${kind.path} request`);
    }
  }
  // The warm-up's calls leave an audit backlog the stores write for seconds after (the embedded store's
  // database process on the gateways' core, PostgreSQL on the load generator's): the first cell would
  // measure it. Measured runs start once both cores are quiet (under 10% busy over a second; at most 60 s).
  const started = Date.now();
  let busy: number[] = [];
  while (Date.now() - started < 60_000) {
    const before = await readCoreTimes();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = await readCoreTimes();
    if (!before || !after) break;
    busy = busyPercent(before, after);
    if (busy.every((each) => !(each >= 10))) break;
  }
  console.log(
    `warm-up done; ${((Date.now() - started) / 1000).toFixed(0)} s for its writes to settle${busy.length > 0 ? ` (cores busy ${busy.map((b) => `${fmt(b, 0)}%`).join(' / ')})` : ''}\n`,
  );
}

function gatewayConfig(dir: string, upstreams: Upstreams, store: StoreKind, postgresUrl: string | null): string {
  const file = path.join(dir, `gateway-${store}.yaml`);
  writeFileSync(file, stringify(gatewayConfigDocument(dir, upstreams, store, postgresUrl)));
  return file;
}

const fmt = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

async function main(): Promise<void> {
  const apis = apisWanted();
  const soaking = process.argv.includes('--soak');
  const throughput = apis.filter((api) => api !== 'lists');
  if (throughput.length > 0 || soaking) await throughputMain(throughput);
  if (!apis.includes('lists') || soaking) return;
  if (!storesWanted().includes('postgres')) console.log('the list point runs on PostgreSQL: skipped (--store embedded)\n');
  else await runListsPoint();
}

/** The list point (bench/lists.ts): its gateway on core 1 like the others, PostgreSQL where it runs. */
async function runListsPoint(): Promise<void> {
  const at = process.argv.indexOf('--lists-database-url');
  const fraction = process.argv.includes('--lists-scale') ? flag('lists-scale', 1) : 1;
  if (fraction > 1) throw new Error('--lists-scale must be at most 1');
  await listsPoint({
    serverUrl: process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test',
    databaseUrl: at >= 0 ? (process.argv[at + 1] ?? null) : null,
    scale: listsScale(fraction),
    requests: Math.round(flag('requests', 200)),
    async startGateway(configFile) {
      const started = await startPinned(1, [...SERVE_NODE_FLAGS, MAIN, 'serve', '--config', configFile], { PATH: process.env['PATH'] ?? '' });
      return {
        port: started.info['port'] as number,
        async stop() {
          if (started.child.exitCode !== null || started.child.signalCode !== null) return;
          const exited = new Promise((resolve) => started.child.once('exit', resolve));
          started.child.kill('SIGTERM');
          await exited;
        },
      };
    },
  });
}

async function throughputMain(apis: readonly Api[]): Promise<void> {
  const durationMs = flag('duration', 5) * 1000;
  const repeat = Math.round(flag('repeat', 3));
  const soakSeconds = process.argv.includes('--soak') ? flag('soak', 600) : 0;
  const stores = storesWanted();
  const kinds = soakSeconds > 0 ? (['plain'] as UpstreamKind[]) : upstreamsWanted();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agw-bench-'));
  const children: ChildProcess[] = [];
  let schema: Awaited<ReturnType<typeof postgresSchema>> | null = null;
  let postgresPin: { pinned: boolean; restore(): void } | null = null;
  const cleanup = async (): Promise<void> => {
    postgresPin?.restore();
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(
      children.map((child) => (child.exitCode === null && child.signalCode === null ? new Promise((r) => child.once('exit', r)) : Promise.resolve())),
    );
    rmSync(dir, { recursive: true, force: true });
    await schema?.drop().catch((err: unknown) => console.error(`bench: could not drop the postgres schema: ${String(err)}`));
  };
  process.once('SIGINT', () => {
    void cleanup().finally(() => process.exit(130));
  });
  try {
    const certificate = kinds.includes('tls') ? makeCertificate(dir) : null;
    // One upstream and one floor per kind: the floor proxies to the upstream of its own kind.
    const upstreams: Upstreams = { plain: null, tls: null };
    const floors = new Map<UpstreamKind, number>();
    for (const kind of kinds) {
      const env = kind === 'tls' && certificate ? { ...process.env, BENCH_TLS_CERT: certificate.cert, BENCH_TLS_KEY: certificate.key } : process.env;
      const upstream = await startPinned(0, [path.join(DIST, 'upstream.js')], env);
      children.push(upstream.child);
      const port = upstream.info['port'] as number;
      if (kind === 'tls' && certificate) upstreams.tls = { port, caFile: certificate.cert };
      else upstreams.plain = port;
      const floor = await startPinned(1, [path.join(DIST, 'floor-proxy.js'), String(port), ...(kind === 'tls' && certificate ? [certificate.cert] : [])]);
      children.push(floor.child);
      floors.set(kind, floor.info['port'] as number);
    }
    if (stores.includes('postgres')) {
      schema = await postgresSchema();
      refreshStatistics = schema.analyze;
      postgresPin = pinLocalPostgres(schema.url);
    }
    // Every gateway under test runs at once on core 1 (an idle one costs next to nothing) and is
    // measured in turn, so each cell compares them with the same direct and floor figures.
    const gateways: GatewayUnderTest[] = [];
    for (const store of stores) {
      const config = gatewayConfig(dir, upstreams, store, schema?.url ?? null);
      // The gateway runs with a clean environment, except NODE_OPTIONS when the operator sets one (e.g. a
      // V8 heap limit): the header line then says so, since it changes the memory figures.
      const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '' };
      if (process.env['NODE_OPTIONS']) env['NODE_OPTIONS'] = process.env['NODE_OPTIONS'];
      // BENCH_GATEWAY_NODE_ARGS: extra node flags for the gateway only (e.g. --cpu-prof for a profile).
      const nodeArgs = (process.env['BENCH_GATEWAY_NODE_ARGS'] ?? '').split(/\s+/).filter(Boolean);
      // Its child processes (the embedded store's database) inherit its core, as they would under an
      // operator's taskset or cgroup: the database's work competes with the gateway's, as in production.
      const gateway = await startPinned(1, [...SERVE_NODE_FLAGS, ...nodeArgs, MAIN, 'serve', '--config', config], env);
      children.push(gateway.child);
      gateways.push({ store, port: gateway.info['port'] as number, pid: gateway.child.pid! });
    }
    const caFile = certificate?.cert ?? '';
    const scheme = (kind: UpstreamKind): string => (kind === 'tls' ? 'https' : 'http');
    const model = (kind: UpstreamKind): string => (kind === 'tls' ? 'bench-model-tls' : 'bench-model');

    if (soakSeconds > 0) {
      const concurrency = Math.max(1, Math.round(flag('soak-concurrency', 64)));
      for (const gateway of gateways) await soak(gateway.store, soakTarget(gateway.port, apis), gateway.pid, soakSeconds, concurrency);
      return;
    }

    console.log(
      `agent-gateway benchmark: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), Node ${process.version}, ${durationMs / 1000} s per run, median of ${repeat} interleaved runs per cell`,
    );
    console.log(
      `proxy under test pinned to core 1 (the gateway with its process tree${stores.includes('embedded') ? ": the embedded store's database process too" : ''}); upstreams and load generator on core 0${postgresPin?.pinned ? ', with the local PostgreSQL server' : ''}; gateway plugins: auth, rateLimit, audit, stripFields; stores: ${stores.join(', ')}; upstreams: ${kinds.join(', ')}; APIs: ${apis.join(', ')}`,
    );
    console.log(
      `gateway NODE_OPTIONS: ${process.env['NODE_OPTIONS'] || '(none)'}; node flags: ${[...SERVE_NODE_FLAGS, process.env['BENCH_GATEWAY_NODE_ARGS'] ?? ''].join(' ').trim() || '(none)'} (npm start's, then BENCH_GATEWAY_NODE_ARGS)\n`,
    );
    // The warm-up runs on the plain upstream (the TLS provider shares every hot path but the socket's);
    // on the TLS one when only it is measured (chat: the Responses points run on plain HTTP only).
    if (upstreams.plain !== null) await warmUp(floors.get('plain')!, gateways, apis, model('plain'));
    else await warmUp(floors.get('tls')!, gateways, apis.includes('chat') ? ['chat'] : [], model('tls'));
    const rows: string[][] = [];
    const checks = new Map<StoreKind, string[]>(stores.map((store) => [store, []]));
    const tlsFigures = new Map<StoreKind, string[]>(stores.map((store) => [store, []]));
    const responsesChecks = new Map<StoreKind, string[]>(stores.map((store) => [store, []]));
    /** Per store, the memory figures of the chat matrix (printed with the store's heading). */
    const chatMemory = new Map<StoreKind, string>();
    // Over TLS the matrix is c = 1 and 64 (c = 16 lies between them): its figures are reported, not targets.
    for (const kind of apis.includes('chat') ? kinds : []) {
      for (const stream of [false, true]) {
        for (const concurrency of kind === 'tls' ? [1, 64] : [1, 16, 64]) {
          const body = chatRequest('bench-model', stream);
          const targets = new Map<string, Target>([
            [
              'direct',
              {
                url: `${scheme(kind)}://127.0.0.1:${kind === 'tls' ? upstreams.tls!.port : upstreams.plain!}/v1/chat/completions`,
                key: '',
                body,
              },
            ],
            ['floor', { url: `http://127.0.0.1:${floors.get(kind)!}/v1/chat/completions`, key: '', body }],
            ...gateways.map((g): [string, Target] => [
              g.store,
              { url: `http://127.0.0.1:${g.port}/v1/chat/completions`, key: KEY, body: chatRequest(model(kind), stream) },
            ]),
          ]);
          // PostgreSQL CPU spent per request while the postgres-store gateway runs (the audit trail's writes).
          // And each gateway's own CPU per request (its database process's on the embedded store): comparable where latency is not.
          const processes = new Map(gateways.map((g): [string, TargetProcesses] => [g.store, { gateway: g.pid, children: descendantPids(g.pid) }]));
          const { runs, postgresCpu, gatewayCpu, childCpu } = await measureCell(
            targets,
            concurrency,
            repeat,
            durationMs,
            caFile,
            new Set(['postgres']),
            processes,
          );
          const d = medianOf(runs.get('direct')!);
          const f = medianOf(runs.get('floor')!);
          const row = (name: string, r: CellResult, ratio: string): string[] => tableRow(kind, stream ? 'stream' : 'json', concurrency, name, r, ratio);
          rows.push(row('direct', d, ''), row('floor', f, ''));
          for (const gateway of gateways) {
            const g = medianOf(runs.get(gateway.store)!);
            rows.push(
              row(
                `gateway (${gateway.store})`,
                g,
                `${fmt((g.rps / f.rps) * 100, 0)}% of floor, ${fmt((g.rps / d.rps) * 100, 0)}% of direct${cpuNote(gatewayCpu.get(gateway.store), childCpu.get(gateway.store))}${postgresNote(postgresCpu.get(gateway.store))}`,
              ),
            );
            const list = kind === 'plain' ? checks.get(gateway.store)! : tlsFigures.get(gateway.store)!;
            const judge = kind === 'plain' ? check : reported;
            if (concurrency === 64) {
              const mode = stream ? 'stream' : 'json';
              list.push(judge(`${mode} c64 p99 <= 2x floor's`, g.p99 <= 2 * f.p99, `${fmt(g.p99)} ms vs ${fmt(f.p99)} ms (${fmt(g.p99 / f.p99)}x)`));
            }
            if (!stream && concurrency === 64)
              list.push(judge(`json c64 throughput >= 50% of floor`, g.rps / f.rps >= 0.5, `${fmt((g.rps / f.rps) * 100, 1)}%`));
            if (!stream && concurrency === 1) list.push(judge('json c1 added p50 over direct < 0.5 ms', g.p50 - d.p50 < 0.5, `+${fmt(g.p50 - d.p50, 3)} ms`));
            if (stream && (concurrency === 1 || concurrency === 64)) {
              list.push(judge(`stream c${concurrency} added TTFB p50 over direct < 1 ms`, g.ttfbP50 - d.ttfbP50 < 1, `+${fmt(g.ttfbP50 - d.ttfbP50, 3)} ms`));
            }
            if (stream && concurrency === 64)
              list.push(judge('stream c64 streams/s equal to direct (>= 95%)', g.rps / d.rps >= 0.95, `${fmt((g.rps / d.rps) * 100, 1)}%`));
          }
        }
      }
    }
    if (apis.includes('chat')) {
      // Taken now: the Responses points below measure their own peak (peakRssReset).
      for (const gateway of gateways) {
        const peak = rssOf(gateway.pid, 'VmHWM');
        const tree = descendantPids(gateway.pid);
        // Each process's own peak, summed: at least the tree's peak at any one moment.
        const treePeak = tree.reduce((sum, pid) => sum + rssOf(pid, 'VmHWM'), peak);
        const list = checks.get(gateway.store)!;
        list.push(check('gateway process peak RSS < 150 MB', peak < 150, `${fmt(peak, 1)} MB`));
        if (gateway.store === 'embedded') list.push(check('process tree peak RSS < 250 MB', treePeak < 250, `${fmt(treePeak, 1)} MB`));
        const treeNote =
          tree.length > 0
            ? `, its process tree ${fmt(treePeak, 1)} MB (${tree.map((pid) => `${fmt(rssOf(pid, 'VmHWM'), 1)} MB`).join(' + ')} for its child)`
            : '';
        chatMemory.set(gateway.store, `: peak RSS ${fmt(peak, 1)} MB${treeNote}`);
      }
    }
    if (apis.includes('responses')) {
      if (upstreams.plain === null) console.log('the Responses points need the plain upstream: skipped (--upstream tls)\n');
      else
        await responsesPoints({
          gateways,
          upstreamPort: upstreams.plain,
          floorPort: floors.get('plain')!,
          repeat,
          durationMs,
          postgresUrl: schema?.url ?? null,
          rows,
          checks: responsesChecks,
        });
    }
    if (apis.includes('conversation')) {
      if (upstreams.plain === null) console.log('the stored-conversation point needs the plain upstream: skipped (--upstream tls)\n');
      else await conversationPoint(gateways, Math.round(flag('conversations', 60)), responsesChecks);
    }
    const header = ['upstream', 'mode', 'c', 'target', 'req/s', 'p50 ms', 'p99 ms', 'ttfb p50', 'ttfb p99', 'errors', 'gateway ratio'];
    if (rows.length > 0) printTable([header, ...rows]);
    for (const gateway of gateways) {
      console.log(`\ngateway with the ${gateway.store} store${chatMemory.get(gateway.store) ?? ''}`);
      for (const line of checks.get(gateway.store)!) console.log(`  ${line}`);
      const overTls = tlsFigures.get(gateway.store)!;
      if (overTls.length > 0) console.log(`  over TLS (reported; the targets are for plain HTTP):`);
      for (const line of overTls) console.log(`    ${line}`);
      const responses = responsesChecks.get(gateway.store)!;
      if (responses.length > 0) console.log(`  Responses (POST /v1/responses to a native Responses upstream, plain HTTP):`);
      for (const line of responses) console.log(`    ${line}`);
    }
  } finally {
    await cleanup();
  }
}

/** A gateway's CPU per request (median of the runs), and its database process's when it has one. */
function cpuNote(own: readonly number[] | undefined, child: readonly number[] | undefined): string {
  return (
    (own ? `; gateway ${fmt(medianOfNumbers(own) * 1e6, 0)} µs CPU/req` : '') +
    (child ? `, its database process ${fmt(medianOfNumbers(child) * 1e6, 0)} µs` : '')
  );
}

function tableRow(kind: UpstreamKind, mode: string, concurrency: number, name: string, r: CellResult, ratio: string): string[] {
  return [kind, mode, String(concurrency), name, fmt(r.rps, 0), fmt(r.p50), fmt(r.p99), fmt(r.ttfbP50), fmt(r.ttfbP99), String(r.errors), ratio];
}

/** The PostgreSQL server's CPU per request of a postgres-store target (none for other targets). */
function postgresNote(perRequest: readonly number[] | undefined): string {
  return perRequest ? `; PostgreSQL ${fmt(medianOfNumbers(perRequest) * 1e6, 0)} µs CPU/req` : '';
}

interface GatewayUnderTest {
  store: StoreKind;
  port: number;
  pid: number;
}

interface ResponsesPointsInput {
  gateways: readonly GatewayUnderTest[];
  upstreamPort: number;
  floorPort: number;
  repeat: number;
  durationMs: number;
  /** The postgres store's database (its schema in the search path), to count the event log's rows. */
  postgresUrl: string | null;
  rows: string[][];
  checks: Map<StoreKind, string[]>;
}

/**
 * The Responses points: POST /v1/responses relayed by each gateway to the plain upstream (a native
 * Responses upstream), with the same request sent to the floor and to the upstream directly.
 * - stateless, non-streamed, c = 64: req/s against the floor's (target >= 50%);
 * - stateless, streamed, c = 1: TTFB p50 over the floor's (target < 1 ms added);
 * - streamed at c = 64 with `store: true` against `store: false` (target >= 80% of its streams/s), the
 *   event log then read back for one response the load generator saw (and, on PostgreSQL, counted);
 * - the gateway process's peak RSS over these points alone (target < 150 MB).
 */
async function responsesPoints(input: ResponsesPointsInput): Promise<void> {
  const { gateways, repeat, durationMs, rows, checks } = input;
  const direct = `http://127.0.0.1:${input.upstreamPort}/v1/responses`;
  const floor = `http://127.0.0.1:${input.floorPort}/v1/responses`;
  const via = (gateway: GatewayUnderTest): string => `http://127.0.0.1:${gateway.port}/v1/responses`;
  const json = responsesRequest('bench-model', { stream: false, store: false });
  const stream = responsesRequest('bench-model', { stream: true, store: false });
  const storedStream = responsesRequest('bench-model', { stream: true, store: true });
  const postgres = new Set(gateways.filter((g) => g.store === 'postgres').flatMap((g) => [g.store, `${g.store} store`]));

  // Peak RSS over these points: each process's high-water mark reset now; where the kernel refuses,
  // RSS sampled every 100 ms instead (a lower bound of the peak).
  const pidsOf = new Map(gateways.map((gateway) => [gateway.store, [gateway.pid, ...descendantPids(gateway.pid)]]));
  const allPids = [...pidsOf.values()].flat();
  const exactPeak = allPids.map(resetPeakRss).every(Boolean);
  const sampled = new Map<number, number>();
  const sampler = exactPeak
    ? null
    : setInterval(() => {
        for (const pid of allPids) sampled.set(pid, Math.max(sampled.get(pid) ?? 0, rssOf(pid, 'VmRSS')));
      }, 100);
  const peakOf = (pid: number): number => (exactPeak ? rssOf(pid, 'VmHWM') : (sampled.get(pid) ?? NaN));
  /** Per store, one response id the last `store: true` run saw. */
  const storedIds = new Map<StoreKind, string | null>();
  // Every gateway target's CPU per request (the gateway's, its database process's): comparable where
  // latency is not, as CPU time does not stretch when other work shares the core.
  const processes = new Map<string, TargetProcesses>(
    gateways.flatMap((g): [string, TargetProcesses][] => {
      const own = { gateway: g.pid, children: pidsOf.get(g.store)!.slice(1) };
      return [
        [g.store, own],
        [`${g.store} store`, own],
      ];
    }),
  );
  /** CPU per request of a gateway target, as a note after its ratio. */
  const cpu = (cell: Measured, name: string): string => cpuNote(cell.gatewayCpu.get(name), cell.childCpu.get(name)) + postgresNote(cell.postgresCpu.get(name));

  try {
    // Stateless, non-streamed, c = 64: throughput against the floor's on the same request.
    const jsonCell = await measureCell(
      new Map<string, Target>([
        ['floor', { url: floor, key: '', body: json, expectText: RESPONSES_DONE.json }],
        ...gateways.map((g): [string, Target] => [g.store, { url: via(g), key: KEY, body: json, expectText: RESPONSES_DONE.json }]),
      ]),
      64,
      repeat,
      durationMs,
      '',
      postgres,
      processes,
    );
    const jsonFloor = medianOf(jsonCell.runs.get('floor')!);
    rows.push(tableRow('plain', 'responses json', 64, 'floor', jsonFloor, ''));
    for (const gateway of gateways) {
      const g = medianOf(jsonCell.runs.get(gateway.store)!);
      const share = g.rps / jsonFloor.rps;
      rows.push(tableRow('plain', 'responses json', 64, `gateway (${gateway.store})`, g, `${fmt(share * 100, 0)}% of floor${cpu(jsonCell, gateway.store)}`));
      checks.get(gateway.store)!.push(check('responses json c64 throughput >= 50% of floor', share >= 0.5, `${fmt(share * 100, 1)}%`));
    }

    // Stateless, streamed, c = 1: the time to the first event added over the floor's.
    const ttfbCell = await measureCell(
      new Map<string, Target>([
        ['direct', { url: direct, key: '', body: stream, expectText: RESPONSES_DONE.stream }],
        ['floor', { url: floor, key: '', body: stream, expectText: RESPONSES_DONE.stream }],
        ...gateways.map((g): [string, Target] => [g.store, { url: via(g), key: KEY, body: stream, expectText: RESPONSES_DONE.stream }]),
      ]),
      1,
      repeat,
      durationMs,
      '',
      postgres,
      processes,
    );
    const ttfbDirect = medianOf(ttfbCell.runs.get('direct')!);
    const ttfbFloor = medianOf(ttfbCell.runs.get('floor')!);
    rows.push(
      tableRow('plain', 'responses stream', 1, 'direct', ttfbDirect, ''),
      tableRow('plain', 'responses stream', 1, 'floor', ttfbFloor, `TTFB +${fmt(ttfbFloor.ttfbP50 - ttfbDirect.ttfbP50, 3)} ms over direct`),
    );
    for (const gateway of gateways) {
      const g = medianOf(ttfbCell.runs.get(gateway.store)!);
      const added = g.ttfbP50 - ttfbFloor.ttfbP50;
      rows.push(
        tableRow(
          'plain',
          'responses stream',
          1,
          `gateway (${gateway.store})`,
          g,
          `TTFB +${fmt(added, 3)} ms over floor, +${fmt(g.ttfbP50 - ttfbDirect.ttfbP50, 3)} ms over direct${cpu(ttfbCell, gateway.store)}`,
        ),
      );
      checks.get(gateway.store)!.push(check('responses stream c1 added TTFB p50 over floor < 1 ms', added < 1, `+${fmt(added, 3)} ms`));
    }

    // Streamed, c = 64, `store: true` (the response and its event log written) against `store: false`.
    const storeCell = await measureCell(
      new Map<string, Target>(
        gateways.flatMap((g): [string, Target][] => [
          [g.store, { url: via(g), key: KEY, body: stream, expectText: RESPONSES_DONE.stream }],
          [`${g.store} store`, { url: via(g), key: KEY, body: storedStream, expectText: RESPONSES_DONE.stream, captureResponseId: true }],
        ]),
      ),
      64,
      repeat,
      durationMs,
      '',
      postgres,
      processes,
    );
    for (const gateway of gateways) {
      const plain = medianOf(storeCell.runs.get(gateway.store)!);
      const storedRuns = storeCell.runs.get(`${gateway.store} store`)!;
      storedIds.set(gateway.store, storedRuns[storedRuns.length - 1]?.responseId ?? null);
      const stored = medianOf(storedRuns);
      const share = stored.rps / plain.rps;
      rows.push(
        tableRow('plain', 'responses stream', 64, `gateway (${gateway.store}), store: false`, plain, cpu(storeCell, gateway.store).slice(2)),
        tableRow(
          'plain',
          'responses stream',
          64,
          `gateway (${gateway.store}), store: true`,
          stored,
          `${fmt(share * 100, 0)}% of store: false${cpu(storeCell, `${gateway.store} store`)}`,
        ),
      );
      checks
        .get(gateway.store)!
        .push(
          check(
            'responses stream c64 store: true >= 80% of store: false streams/s',
            share >= 0.8,
            `${fmt(share * 100, 1)}% (${fmt(stored.rps, 0)} vs ${fmt(plain.rps, 0)} streams/s)`,
          ),
        );
    }
  } finally {
    if (sampler) clearInterval(sampler);
  }

  for (const gateway of gateways) {
    const pids = pidsOf.get(gateway.store)!;
    const peak = peakOf(gateway.pid);
    const how = exactPeak ? '' : ' (sampled every 100 ms)';
    const tree =
      pids.length > 1
        ? `; its process tree ${fmt(
            pids.reduce((sum, pid) => sum + peakOf(pid), 0),
            1,
          )} MB (reported)`
        : '';
    checks.get(gateway.store)!.push(check('gateway process peak RSS during the Responses points < 150 MB', peak < 150, `${fmt(peak, 1)} MB${how}${tree}`));
  }

  // The event log of one response from the last `store: true` run, read back from the store.
  const expected = responsesStreamEventCount(CHUNKS);
  for (const gateway of gateways) {
    const responseId = storedIds.get(gateway.store) ?? null;
    const name = 'responses store: true event log in the store';
    if (!responseId) {
      checks.get(gateway.store)!.push(check(name, false, 'no response id seen in the last run (no stream finished?)'));
      continue;
    }
    try {
      const log = await readStoredEventLog(`http://127.0.0.1:${gateway.port}`, KEY, responseId);
      const counted = gateway.store === 'postgres' && input.postgresUrl ? await countPostgresEvents(input.postgresUrl, responseId) : null;
      // On PostgreSQL, every stored response too: all completed, each with its whole log.
      const wholeLog =
        counted === null || (counted.rows === expected && counted.completed === counted.responses && counted.events === expected * counted.completed);
      const ok = log.status === 'completed' && log.events === expected && log.deltas === CHUNKS && wholeLog;
      const waited = log.waitedMs >= 100 ? ` (final state stored ${fmt(log.waitedMs / 1000, 1)} s after the check began)` : '';
      const inPostgres = counted
        ? `; in PostgreSQL ${counted.rows} events for it, ${counted.events} events in ${counted.chunks} rows for ${counted.responses} stored responses (${counted.completed} completed, ${counted.inProgress} in progress, ${fmt(counted.events / counted.completed, 2)} events and ${fmt(counted.chunks / counted.completed, 2)} rows per completed one)`
        : '';
      checks
        .get(gateway.store)!
        .push(
          check(
            name,
            ok,
            `${responseId} ${log.status}${waited}: ${log.events} of ${expected} events replayed from the store (${log.deltas} deltas, last ${log.last})${inPostgres}`,
          ),
        );
    } catch (err) {
      checks.get(gateway.store)!.push(check(name, false, `${responseId}: ${err instanceof Error ? err.message : String(err)}`));
    }
  }
}

/** Turns per conversation in the stored-conversation point, and conversations in flight at once. */
const CONVERSATION_TURNS = 20;
const CONVERSATION_CONCURRENCY = 4;

/**
 * The stored-conversation point: per gateway, `conversations` conversations (after 5 not counted)
 * driven to CONVERSATION_TURNS turns, CONVERSATION_CONCURRENCY at a time, non-streamed. Turn 20's p50
 * latency over turn 1's is what the history (39 items loaded, and sent upstream) and the append add
 * once a conversation is long; the target (< 2 ms p50) is judged on PostgreSQL, the embedded store's
 * figure is reported.
 */
async function conversationPoint(gateways: readonly GatewayUnderTest[], conversations: number, checks: Map<StoreKind, string[]>): Promise<void> {
  console.log(
    `stored conversations: ${conversations} per store driven to ${CONVERSATION_TURNS} turns, ${CONVERSATION_CONCURRENCY} at a time (turn 1 store: true, then previous_response_id), non-streamed`,
  );
  for (const gateway of gateways) {
    const result = await runConversations({
      url: `http://127.0.0.1:${gateway.port}/v1/responses`,
      key: KEY,
      model: 'bench-model',
      conversations,
      turns: CONVERSATION_TURNS,
      concurrency: CONVERSATION_CONCURRENCY,
      warmup: 5,
    });
    const first = result.turn1P50 ?? NaN;
    const last = result.lastTurnP50 ?? NaN;
    const added = last - first;
    const name = `stored conversation turn ${CONVERSATION_TURNS} - turn 1 p50 < 2 ms`;
    const figure = `+${fmt(added, 3)} ms (turn 1 ${fmt(first, 3)} ms, turn ${CONVERSATION_TURNS} ${fmt(last, 3)} ms; ${result.completed} of ${conversations} conversations completed, ${result.errors} errors)`;
    // A failed turn ends its conversation: any error fails the point rather than thinning its samples.
    const ok = added < 2 && result.errors === 0;
    checks.get(gateway.store)!.push(gateway.store === 'postgres' ? check(name, ok, figure) : reported(`${name} (target on postgres)`, ok, figure));
    console.log(`  ${gateway.store}: p50 by turn (ms) ${result.p50ByTurn.map((p) => fmt(p ?? NaN, 2)).join(' ')}`);
  }
  console.log('');
}

/**
 * Rows of the postgres store's event log: one response's, and all of them with the responses they
 * belong to, once no response is in progress any more (final states are written after the stream's
 * last byte; waits up to settleMs).
 */
async function countPostgresEvents(
  url: string,
  responseId: string,
  settleMs = 10_000,
): Promise<{ rows: number; events: number; chunks: number; responses: number; completed: number; inProgress: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const started = Date.now();
    for (;;) {
      const all = await client.query<{ events: number; chunks: number; responses: number; completed: number; in_progress: number }>(
        `SELECT (SELECT coalesce(sum(json_array_length(events)), 0) FROM response_events)::int AS events,
                (SELECT count(*) FROM response_events)::int AS chunks, (SELECT count(*) FROM responses)::int AS responses,
                (SELECT count(*) FROM responses WHERE status = 'completed')::int AS completed,
                (SELECT count(*) FROM responses WHERE status = 'in_progress')::int AS in_progress`,
      );
      const totals = all.rows[0]!;
      if (totals.in_progress === 0 || Date.now() - started >= settleMs) {
        const one = await client.query<{ n: number }>(
          'SELECT coalesce(sum(json_array_length(events)), 0)::int AS n FROM response_events WHERE response_id = $1',
          [responseId],
        );
        return {
          rows: one.rows[0]!.n,
          events: totals.events,
          chunks: totals.chunks,
          responses: totals.responses,
          completed: totals.completed,
          inProgress: totals.in_progress,
        };
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await client.end();
  }
}

function medianOfNumbers(list: readonly number[]): number {
  const values = [...list].sort((a, b) => a - b);
  const mid = values.length >> 1;
  if (values.length === 0) return NaN;
  return values.length % 2 === 1 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
}

/** Each figure's median over the runs of one cell (errors: their sum). */
function medianOf(results: CellResult[]): CellResult {
  const median = (pick: (r: CellResult) => number): number => medianOfNumbers(results.map(pick));
  return {
    requests: median((r) => r.requests),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    rps: median((r) => r.rps),
    p50: median((r) => r.p50),
    p99: median((r) => r.p99),
    ttfbP50: median((r) => r.ttfbP50),
    ttfbP99: median((r) => r.ttfbP99),
  };
}

function check(name: string, ok: boolean, figure: string): string {
  return `${ok ? 'MET    ' : 'NOT MET'}  ${name}: ${figure}`;
}

/** A figure measured against a target's bound without being one (the TLS upstream's). */
function reported(name: string, ok: boolean, figure: string): string {
  return `${ok ? 'within ' : 'beyond '}  ${name}: ${figure}`;
}

/**
 * What the soak sends: the non-streamed chat request; with `--api responses` the non-streamed Responses
 * request, or with `--soak-request` one of `chat-stream` (the stream c64 point's request),
 * `responses-stream` / `responses-stored-stream` (streamed, `store: false` / `store: true`: a profile of
 * the stored stream's own work).
 */
function soakTarget(port: number, apis: readonly string[]): Target {
  const kinds = ['chat', 'chat-stream', 'responses', 'responses-stream', 'responses-stored-stream'];
  const wanted = process.argv.includes('--soak-request')
    ? String(process.argv[process.argv.indexOf('--soak-request') + 1])
    : apis.includes('responses') && !apis.includes('chat')
      ? 'responses'
      : 'chat';
  if (!kinds.includes(wanted)) throw new Error(`--soak-request: one of ${kinds.join(', ')}`);
  const base = `http://127.0.0.1:${port}`;
  if (wanted === 'chat' || wanted === 'chat-stream')
    return { url: `${base}/v1/chat/completions`, key: KEY, body: chatRequest('bench-model', wanted === 'chat-stream') };
  if (wanted === 'responses') {
    return { url: `${base}/v1/responses`, key: KEY, body: responsesRequest('bench-model', { stream: false, store: false }), expectText: RESPONSES_DONE.json };
  }
  const store = wanted === 'responses-stored-stream';
  return { url: `${base}/v1/responses`, key: KEY, body: responsesRequest('bench-model', { stream: true, store }), expectText: RESPONSES_DONE.stream };
}

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  '));
}

async function soak(store: StoreKind, target: Target, pid: number, seconds: number, concurrency: number): Promise<void> {
  const windowSeconds = Math.min(30, seconds);
  const windows = Math.max(1, Math.round(seconds / windowSeconds));
  console.log(
    `soak (${store} store): ${windowSeconds} s of warm-up, then ${windows} x ${windowSeconds} s at c=${concurrency} through the gateway; RSS of its process tree sampled every second, each core's busy time per window (core 1: the gateway)`,
  );
  // RSS saws up and down with V8's major collections, so one sample per window says little: the
  // lowest sample of a window (the floor after a collection) is what grows if something leaks.
  // Windows shorter than 10 s give no floor to compare. The warm-up window is printed but is not the
  // baseline: in it the heap grows from the idle process's size to the load's working size, which is
  // not growth across the soak (a leak keeps growing after it).
  const floors: number[] = [];
  for (let i = -1; i < windows; i++) {
    let low = Infinity;
    let high = 0;
    const started = Date.now();
    const sampler = setInterval(() => {
      // The first seconds of a window are the load ramping up (in the first one, from idle): skipped.
      if (Date.now() - started < 5000) return;
      const rss = [pid, ...descendantPids(pid)].reduce((sum, each) => sum + rssOf(each, 'VmRSS'), 0);
      low = Math.min(low, rss);
      high = Math.max(high, rss);
    }, 1000);
    if (store === 'postgres') await freshStatistics();
    const coresBefore = await readCoreTimes();
    const r = await runLoad(target, concurrency, windowSeconds * 1000, '');
    const coresAfter = await readCoreTimes();
    clearInterval(sampler);
    if (i >= 0) floors.push(low);
    const cores =
      coresBefore && coresAfter
        ? `, cores busy ${busyPercent(coresBefore, coresAfter)
            .map((busy) => `${fmt(busy, 0)}%`)
            .join(' / ')}`
        : '';
    console.log(
      `  ${i < 0 ? 'warm-up' : `window ${i + 1}/${windows}`}: ${fmt(r.rps, 0)} req/s, p99 ${fmt(r.p99)} ms, errors ${r.errors}, RSS low ${fmt(low, 1)} MB, high ${fmt(high, 1)} MB${cores}`,
    );
  }
  const baseline = floors[0]!;
  const last = floors[floors.length - 1]!;
  const growth = ((last - baseline) / baseline) * 100;
  console.log(`\nlowest RSS of the first window ${fmt(baseline, 1)} MB, of the last ${fmt(last, 1)} MB: growth ${fmt(growth, 1)}%`);
  console.log(check('RSS growth across the soak <= 10%', growth <= 10, `${fmt(growth, 1)}%`));
  console.log(
    `peak RSS ${fmt(rssOf(pid, 'VmHWM'), 1)} MB, of the process tree ${fmt(
      [pid, ...descendantPids(pid)].reduce((sum, each) => sum + rssOf(each, 'VmHWM'), 0),
      1,
    )} MB\n`,
  );
}

main().catch((err: unknown) => {
  console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
