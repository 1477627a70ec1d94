// `npm run bench`: the gateway's overhead against a direct call to the same upstream and against the
// floor (a minimal node:http pass-through proxy), as ratios measured in one run.
//
// Processes: the fake upstream and the load generator share core 0, with the database (a local
// PostgreSQL server, the embedded store's database process); the proxy under test (floor or gateway)
// gets core 1 alone (taskset), so the floor and the gateway are measured on the same footing.
// The gateway runs as `npm start` would, with the auth, rateLimit, audit and stripFields plugins on.
//
//   npm run bench                      the full matrix (non-streaming and streaming, c = 1, 16, 64)
//   npm run bench -- --duration 5      seconds measured per run (default 5, after 1 s of warm-up)
//   npm run bench -- --repeat 3        runs per cell, interleaved across targets; figures are medians
//   npm run bench -- --soak 600        c = 64 non-streaming through the gateway for 600 s (after 30 s of
//                                      warm-up), RSS sampled
//   BENCH_GATEWAY_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' npm run bench -- ...
//                                      extra node flags for the gateway process only (profiling)
//   npm run bench -- --store postgres  one store only: embedded (PGlite, the single-process default) or
//                                      postgres (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test,
//                                      in a fresh schema created and dropped by the bench); default: both
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { stringify } from 'yaml';

const DIST = path.resolve(__dirname);
const MAIN = path.resolve(__dirname, '../src/main.js');
/** Load before each measured run (connections opened, code warm), not counted. */
const WARMUP_MS = 1000;
const KEY = 'agw_bench_0123456789abcdefghijklmnopqrstuvwxyz';

interface CellResult {
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
  ttfbP50: number;
  ttfbP99: number;
}

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(process.argv[at + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

type StoreKind = 'embedded' | 'postgres';

function storesWanted(): StoreKind[] {
  const at = process.argv.indexOf('--store');
  if (at < 0) return ['embedded', 'postgres'];
  const value = process.argv[at + 1];
  if (value === 'embedded' || value === 'postgres') return [value];
  if (value === 'both') return ['embedded', 'postgres'];
  throw new Error('--store must be embedded, postgres or both');
}

/** A fresh schema in DATABASE_URL's database for the postgres store; drop() removes it after the run. */
async function postgresSchema(): Promise<{ url: string; drop(): Promise<void> }> {
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

/** Pids of the processes whose parent is `pid` (the embedded store's database process). */
function childPids(pid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** CPU time (user + system, seconds) the local PostgreSQL processes have used so far. */
function postgresCpuSeconds(): number {
  let ticks = 0;
  for (const pid of localPostgresPids()) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
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
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
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

function runLoad(url: string, concurrency: number, durationMs: number, stream: boolean, key: string): Promise<CellResult> {
  return new Promise((resolve, reject) => {
    const command = hasTaskset ? 'taskset' : process.execPath;
    const args = [path.join(DIST, 'loadgen.js'), url, String(concurrency), String(durationMs), String(WARMUP_MS), stream ? 'stream' : 'json', key];
    const child = spawn(command, hasTaskset ? ['-c', '0', process.execPath, ...args] : args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`load generator exited with ${code}`));
      resolve(JSON.parse(out.trim()) as CellResult);
    });
  });
}

function rssOf(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}

function gatewayConfig(dir: string, upstreamPort: number, store: StoreKind, postgresUrl: string | null): string {
  const file = path.join(dir, `gateway-${store}.yaml`);
  const doc = {
    server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 2000 },
    store:
      store === 'postgres'
        ? { driver: 'postgres', url: postgresUrl, path: path.join(dir, 'data-unused'), retentionDays: 0 }
        : { driver: 'embedded', path: path.join(dir, 'data'), retentionDays: 0 },
    queue: { driver: 'inline' },
    providers: {
      bench: { type: 'openai', baseUrl: `http://127.0.0.1:${upstreamPort}/v1`, apiKey: 'upstream-key', allowPrivateNetwork: true, retries: { max: 0 } },
    },
    models: [{ id: 'bench-model', provider: 'bench' }],
    organizations: [
      {
        id: 'bench',
        name: 'Bench',
        models: ['*'],
        // Generous, but on: every request pays for the rate-limit check.
        rateLimit: { requestsPerMinute: 100_000_000, perUserRequestsPerMinute: 100_000_000 },
        users: [{ id: 'bench-user', name: 'Bench', role: 'admin', keys: [KEY] }],
      },
    ],
    plugins: {
      auth: { enabled: true },
      rateLimit: { enabled: true },
      audit: { enabled: true },
      stripFields: { enabled: true },
      dlp: { enabled: false },
    },
    // The access log line costs a write per request; the audit plugin records every call regardless.
    logging: { level: 'info', accessLog: false },
  };
  writeFileSync(file, stringify(doc));
  return file;
}

const fmt = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

async function main(): Promise<void> {
  const durationMs = flag('duration', 5) * 1000;
  const repeat = Math.round(flag('repeat', 3));
  const soakSeconds = process.argv.includes('--soak') ? flag('soak', 600) : 0;
  const stores = storesWanted();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agw-bench-'));
  const children: ChildProcess[] = [];
  let schema: { url: string; drop(): Promise<void> } | null = null;
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
    const upstream = await startPinned(0, [path.join(DIST, 'upstream.js')]);
    children.push(upstream.child);
    const upstreamPort = upstream.info['port'] as number;
    const floor = await startPinned(1, [path.join(DIST, 'floor-proxy.js'), String(upstreamPort)]);
    children.push(floor.child);
    if (stores.includes('postgres')) {
      schema = await postgresSchema();
      postgresPin = pinLocalPostgres(schema.url);
    }
    // Every gateway under test runs at once on core 1 (an idle one costs next to nothing) and is
    // measured in turn, so each cell compares them with the same direct and floor figures.
    const gateways: { store: StoreKind; url: string; pid: number; databasePids: number[] }[] = [];
    for (const store of stores) {
      const config = gatewayConfig(dir, upstreamPort, store, schema?.url ?? null);
      // The gateway runs with a clean environment, except NODE_OPTIONS when the operator sets one (e.g. a
      // V8 heap limit): the header line then says so, since it changes the memory figures.
      const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '' };
      if (process.env['NODE_OPTIONS']) env['NODE_OPTIONS'] = process.env['NODE_OPTIONS'];
      // BENCH_GATEWAY_NODE_ARGS: extra node flags for the gateway only (e.g. --cpu-prof for a profile).
      const nodeArgs = (process.env['BENCH_GATEWAY_NODE_ARGS'] ?? '').split(/\s+/).filter(Boolean);
      const gateway = await startPinned(1, [...nodeArgs, MAIN, 'serve', '--config', config], env);
      children.push(gateway.child);
      // The embedded store's database runs in a child process of the gateway: like the PostgreSQL
      // server, it leaves core 1 to the gateway and joins the upstream and load generator on core 0.
      const databasePids = store === 'embedded' ? childPids(gateway.child.pid!) : [];
      if (hasTaskset) for (const pid of databasePids) spawnSync('taskset', ['-a', '-p', '-c', '0', String(pid)], { stdio: 'ignore' });
      gateways.push({ store, url: `http://127.0.0.1:${String(gateway.info['port'])}/v1/chat/completions`, pid: gateway.child.pid!, databasePids });
    }
    const direct = `http://127.0.0.1:${upstreamPort}/v1/chat/completions`;
    const floorUrl = `http://127.0.0.1:${String(floor.info['port'])}/v1/chat/completions`;

    if (soakSeconds > 0) {
      for (const gateway of gateways) await soak(gateway.store, gateway.url, gateway.pid, soakSeconds);
      return;
    }

    console.log(
      `agent-gateway benchmark: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), Node ${process.version}, ${durationMs / 1000} s per run, median of ${repeat} interleaved runs per cell`,
    );
    console.log(
      `proxy under test pinned to core 1; upstream and load generator on core 0${postgresPin?.pinned ? ', with the local PostgreSQL server' : ''}${stores.includes('embedded') ? " and the embedded store's database process" : ''}; gateway plugins: auth, rateLimit, audit, stripFields; stores: ${stores.join(', ')}`,
    );
    console.log(`gateway NODE_OPTIONS: ${process.env['NODE_OPTIONS'] || '(none)'}; node flags: ${process.env['BENCH_GATEWAY_NODE_ARGS'] || '(none)'}\n`);
    const rows: string[][] = [];
    const checks = new Map<StoreKind, string[]>(stores.map((store) => [store, []]));
    for (const stream of [false, true]) {
      for (const concurrency of [1, 16, 64]) {
        // Each target is measured `repeat` times, interleaved (direct, floor, gateways, direct, ...), and
        // every figure is the median of its runs: on a shared machine one run can land on a busy moment.
        const runs = new Map<string, CellResult[]>();
        // PostgreSQL CPU spent per request while the postgres-store gateway runs (the audit trail's writes).
        const postgresCpu: number[] = [];
        const measure = async (name: string, url: string, key: string): Promise<void> => {
          const list = runs.get(name) ?? [];
          const cpuBefore = name === 'postgres' ? postgresCpuSeconds() : 0;
          const result = await runLoad(url, concurrency, durationMs, stream, key);
          if (name === 'postgres') postgresCpu.push((postgresCpuSeconds() - cpuBefore) / (result.rps * ((durationMs + WARMUP_MS) / 1000)));
          list.push(result);
          runs.set(name, list);
        };
        for (let i = 0; i < repeat; i++) {
          await measure('direct', direct, '');
          await measure('floor', floorUrl, '');
          for (const gateway of gateways) await measure(gateway.store, gateway.url, KEY);
        }
        const d = medianOf(runs.get('direct')!);
        const f = medianOf(runs.get('floor')!);
        const row = (name: string, r: CellResult, ratio: string): string[] => [
          stream ? 'stream' : 'json',
          String(concurrency),
          name,
          fmt(r.rps, 0),
          fmt(r.p50),
          fmt(r.p99),
          fmt(r.ttfbP50),
          fmt(r.ttfbP99),
          String(r.errors),
          ratio,
        ];
        rows.push(row('direct', d, ''), row('floor', f, ''));
        for (const gateway of gateways) {
          const g = medianOf(runs.get(gateway.store)!);
          const postgresNote = gateway.store === 'postgres' ? `; PostgreSQL ${fmt(medianOfNumbers(postgresCpu) * 1e6, 0)} µs CPU/req` : '';
          rows.push(
            row(`gateway (${gateway.store})`, g, `${fmt((g.rps / f.rps) * 100, 0)}% of floor, ${fmt((g.rps / d.rps) * 100, 0)}% of direct${postgresNote}`),
          );
          const list = checks.get(gateway.store)!;
          if (!stream && concurrency === 64) {
            list.push(check(`json c64 throughput >= 50% of floor`, g.rps / f.rps >= 0.5, `${fmt((g.rps / f.rps) * 100, 1)}%`));
            list.push(check(`json c64 p99 <= 2x floor's`, g.p99 <= 2 * f.p99, `${fmt(g.p99)} ms vs ${fmt(f.p99)} ms`));
          }
          if (!stream && concurrency === 1) list.push(check('json c1 added p50 over direct < 0.5 ms', g.p50 - d.p50 < 0.5, `+${fmt(g.p50 - d.p50, 3)} ms`));
          if (stream && (concurrency === 1 || concurrency === 64)) {
            list.push(check(`stream c${concurrency} added TTFB p50 over direct < 1 ms`, g.ttfbP50 - d.ttfbP50 < 1, `+${fmt(g.ttfbP50 - d.ttfbP50, 3)} ms`));
          }
          if (stream && concurrency === 64)
            list.push(check('stream c64 streams/s equal to direct (>= 95%)', g.rps / d.rps >= 0.95, `${fmt((g.rps / d.rps) * 100, 1)}%`));
        }
      }
    }
    const header = ['mode', 'c', 'target', 'req/s', 'p50 ms', 'p99 ms', 'ttfb p50', 'ttfb p99', 'errors', 'gateway ratio'];
    printTable([header, ...rows]);
    for (const gateway of gateways) {
      const peak = rssOf(gateway.pid, 'VmHWM');
      const list = checks.get(gateway.store)!;
      list.push(check('gateway peak RSS < 150 MB', peak < 150, `${fmt(peak, 1)} MB`));
      const databasePeak = gateway.databasePids.reduce((sum, pid) => sum + rssOf(pid, 'VmHWM'), 0);
      const databaseNote = gateway.databasePids.length > 0 ? ` (its embedded database process, on core 0: ${fmt(databasePeak, 1)} MB)` : '';
      console.log(`\ngateway with the ${gateway.store} store: peak RSS ${fmt(peak, 1)} MB${databaseNote}`);
      for (const line of list) console.log(`  ${line}`);
    }
  } finally {
    await cleanup();
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

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  '));
}

async function soak(store: StoreKind, url: string, pid: number, seconds: number): Promise<void> {
  const windowSeconds = Math.min(30, seconds);
  const windows = Math.max(1, Math.round(seconds / windowSeconds));
  console.log(
    `soak (${store} store): ${windowSeconds} s of warm-up, then ${windows} x ${windowSeconds} s at c=64 through the gateway; RSS sampled every second`,
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
      const rss = rssOf(pid, 'VmRSS');
      low = Math.min(low, rss);
      high = Math.max(high, rss);
    }, 1000);
    const r = await runLoad(url, 64, windowSeconds * 1000, false, KEY);
    clearInterval(sampler);
    if (i >= 0) floors.push(low);
    console.log(
      `  ${i < 0 ? 'warm-up' : `window ${i + 1}/${windows}`}: ${fmt(r.rps, 0)} req/s, p99 ${fmt(r.p99)} ms, errors ${r.errors}, RSS low ${fmt(low, 1)} MB, high ${fmt(high, 1)} MB`,
    );
  }
  const baseline = floors[0]!;
  const last = floors[floors.length - 1]!;
  const growth = ((last - baseline) / baseline) * 100;
  console.log(`\nlowest RSS of the first window ${fmt(baseline, 1)} MB, of the last ${fmt(last, 1)} MB: growth ${fmt(growth, 1)}%`);
  console.log(check('RSS growth across the soak <= 10%', growth <= 10, `${fmt(growth, 1)}%`));
  console.log(`peak RSS ${fmt(rssOf(pid, 'VmHWM'), 1)} MB\n`);
}

main().catch((err: unknown) => {
  console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
