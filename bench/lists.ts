// The bench's list point (`npm run bench -- --api lists`): the console's list operations against a
// PostgreSQL database holding a busy organization (bench/console-seed.ts: 100,000 runs, 1,000,000 audit
// records, their usage, 300 keys, 20,000 stored responses over 90 days), through a gateway started on it.
// Each operation is asked `requests` times in a row (after a few not counted), as the admin and as a
// member; p50 and p95 of the latency the client saw are judged against p95 <= 100 ms (issue 20).
// An operation (or a query parameter) this build's API document does not name is skipped and said so:
// the point measures what exists.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { stringify } from 'yaml';
import { FULL_SCALE, SEED_ADMIN_KEY, SEED_MEMBER_KEY, seedAgentId, seedConfigDocument, seedConsole, type SeedScale } from './console-seed';

/** The bound every list operation's p95 is judged against. */
export const LIST_P95_TARGET_MS = 100;
const WARMUP_REQUESTS = 10;

export interface ListsPointOptions {
  /** The PostgreSQL server (a database of the bench's own is created there and dropped after). */
  serverUrl: string;
  /** A database to use instead (seeded at this scale already, or empty: seeded, and kept). */
  databaseUrl: string | null;
  scale: SeedScale;
  requests: number;
  /** Starts `agent-gateway serve --config file` and resolves with its port. */
  startGateway(configFile: string): Promise<{ port: number; stop(): Promise<void> }>;
}

export interface ListFigure {
  name: string;
  caller: 'admin' | 'member';
  /** Null when skipped (not in this build's API document). */
  p50: number | null;
  p95: number | null;
  max: number | null;
  items: number | null;
  note: string;
  ok: boolean;
}

type Caller = 'admin' | 'member';

interface ListOperation {
  name: string;
  caller: Caller;
  /** The document's path template and the query parameters this request uses. */
  documentPath: string;
  params: string[];
  /** The request's path and query (a page-2 operation gets the cursor of its page 1). */
  url: (cursor: string | null) => string;
  /** The operation whose page 1 gives this one its cursor (`url(null)` of this operation is page 1). */
  secondPage?: { cursorParam: string };
}

const DAY = 86_400_000;
const isoDaysAgo = (now: number, days: number): string => new Date(now - days * DAY).toISOString();

/** The operations measured: the console's lists (contract of issue 20) and the agent's run pages. */
export function listOperations(now: number): ListOperation[] {
  const memberAgent = seedAgentId(2); // shared with the member
  const adminAgent = seedAgentId(8); // the admin's, not shared
  const ops: ListOperation[] = [];
  const add = (op: ListOperation): void => void ops.push(op);
  const q = (params: Record<string, string>): string => new URLSearchParams(params).toString();
  for (const caller of ['admin', 'member'] as const) {
    const agent = caller === 'admin' ? adminAgent : memberAgent;
    add({ name: 'GET /v1/runs', caller, documentPath: '/v1/runs', params: ['limit'], url: () => `/v1/runs?${q({ limit: '20' })}` });
    add({ name: 'GET /v1/runs agentId', caller, documentPath: '/v1/runs', params: ['agentId'], url: () => `/v1/runs?${q({ agentId: agent })}` });
    add({ name: 'GET /v1/runs status=failure', caller, documentPath: '/v1/runs', params: ['status'], url: () => `/v1/runs?${q({ status: 'failure' })}` });
    add({
      name: 'GET /v1/runs status=in_progress',
      caller,
      documentPath: '/v1/runs',
      params: ['status'],
      url: () => `/v1/runs?${q({ status: 'in_progress' })}`,
    });
    add({
      name: 'GET /v1/runs 10-day range',
      caller,
      documentPath: '/v1/runs',
      params: ['createdAfter', 'createdBefore'],
      url: () => `/v1/runs?${q({ createdAfter: isoDaysAgo(now, 30), createdBefore: isoDaysAgo(now, 20) })}`,
    });
    add({
      name: 'GET /v1/runs page 2',
      caller,
      documentPath: '/v1/runs',
      params: ['limit', 'after'],
      url: (cursor) => `/v1/runs?${q({ limit: '20', ...(cursor ? { after: cursor } : {}) })}`,
      secondPage: { cursorParam: 'after' },
    });
    // The agent's run pages (GET /v1/agents/{agentId} paginated, RunRepository.page).
    const agentPath = `/v1/agents/${agent}`;
    add({ name: 'GET /v1/agents/{id} runs', caller, documentPath: '/v1/agents/{agentId}', params: ['limit'], url: () => `${agentPath}?limit=20` });
    add({
      name: 'GET /v1/agents/{id} runs page 2',
      caller,
      documentPath: '/v1/agents/{agentId}',
      params: ['limit', 'cursor'],
      url: (cursor) => `${agentPath}?${q({ limit: '20', ...(cursor ? { cursor } : {}) })}`,
      secondPage: { cursorParam: 'cursor' },
    });
    add({
      name: 'GET /v1/agents/{id} runs 10-day range',
      caller,
      documentPath: '/v1/agents/{agentId}',
      params: ['startDate', 'endDate'],
      url: () => `${agentPath}?${q({ startDate: isoDaysAgo(now, 30), endDate: isoDaysAgo(now, 20) })}`,
    });
    add({
      name: 'GET /v1/usage by day and model',
      caller,
      documentPath: '/v1/usage',
      params: ['groupBy'],
      url: () => `/v1/usage?${q({ groupBy: 'day,model' })}`,
    });
    add({ name: 'GET /v1/responses', caller, documentPath: '/v1/responses', params: ['limit'], url: () => `/v1/responses?limit=20` });
  }
  add({
    name: 'GET /v1/responses page 2',
    caller: 'admin',
    documentPath: '/v1/responses',
    params: ['limit', 'after'],
    url: (cursor) => `/v1/responses?${q({ limit: '20', ...(cursor ? { after: cursor } : {}) })}`,
    secondPage: { cursorParam: 'after' },
  });
  add({ name: 'GET /v1/usage by user', caller: 'admin', documentPath: '/v1/usage', params: ['groupBy'], url: () => `/v1/usage?groupBy=user` });
  add({ name: 'GET /v1/keys organization', caller: 'admin', documentPath: '/v1/keys', params: ['scope'], url: () => `/v1/keys?scope=organization` });
  add({ name: 'GET /v1/keys mine', caller: 'member', documentPath: '/v1/keys', params: [], url: () => `/v1/keys` });
  // The audit trail, as the console reads it (newest first) and as older clients do (oldest first).
  const audit = (name: string, params: Record<string, string>, secondPage = false): void =>
    add({
      name: `GET /v1/admin/audit ${name}`,
      caller: 'admin',
      documentPath: '/v1/admin/audit',
      params: [...Object.keys(params), ...(secondPage ? ['after'] : [])],
      url: (cursor) => `/v1/admin/audit?${q({ ...params, ...(cursor ? { after: cursor } : {}) })}`,
      ...(secondPage ? { secondPage: { cursorParam: 'after' } } : {}),
    });
  audit('oldest first', { limit: '50' });
  audit('since 1 day', { limit: '50', since: isoDaysAgo(now, 1) });
  audit('oldest first page 2', { limit: '50' }, true);
  audit('newest first', { limit: '50', order: 'desc' });
  audit('newest first page 2', { limit: '50', order: 'desc' }, true);
  audit('userId', { limit: '50', order: 'desc', userId: 'u-0007' });
  audit('keyId', { limit: '50', order: 'desc', keyId: seededKeyId(7) });
  audit('model', { limit: '50', order: 'desc', model: 'gpt-4o' });
  audit('operationId', { limit: '50', order: 'desc', operationId: 'createResponse' });
  audit('status=5xx', { limit: '50', order: 'desc', status: '5xx' });
  audit('7-day range', { limit: '50', order: 'desc', since: isoDaysAgo(now, 30), until: isoDaysAgo(now, 23) });
  return ops;
}

/** The id of seeded key `k` (bench/console-seed.ts: `'key_' || md5('key' || k)`). */
function seededKeyId(k: number): string {
  return `key_${createHash('md5').update(`key${k}`).digest('hex')}`;
}

type OpenApiDocument = { paths?: Record<string, Record<string, unknown>>; components?: { parameters?: Record<string, { name?: string; in?: string }> } };

/** The query parameters the document names for GET `documentPath`, or null when it has no such operation. */
export function documentedQueryParams(doc: OpenApiDocument, documentPath: string): Set<string> | null {
  const item = doc.paths?.[documentPath];
  const operation = item?.['get'] as { parameters?: unknown[] } | undefined;
  if (!item || !operation) return null;
  const names = new Set<string>();
  for (const raw of [...((item['parameters'] as unknown[] | undefined) ?? []), ...(operation.parameters ?? [])]) {
    let param = raw as { $ref?: string; name?: string; in?: string };
    if (param.$ref?.startsWith('#/components/parameters/')) param = doc.components?.parameters?.[param.$ref.slice('#/components/parameters/'.length)] ?? {};
    if (param.in === 'query' && param.name) names.add(param.name);
  }
  return names;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

async function timedGet(base: string, url: string, key: string): Promise<{ ms: number; status: number; body: Record<string, unknown> | null }> {
  const started = performance.now();
  const res = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${key}` } });
  const text = await res.text();
  const ms = performance.now() - started;
  let body: Record<string, unknown> | null = null;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = null;
  }
  return { ms, status: res.status, body };
}

/** Items of a list reply (a list's `items`, an agent's `recentRunIds`, usage rows). */
function itemCount(body: Record<string, unknown> | null): number | null {
  const list = body?.['items'] ?? body?.['recentRunIds'];
  return Array.isArray(list) ? list.length : null;
}

/** Measures every operation against a gateway at `base`; `doc` is its API document. */
export async function measureLists(
  base: string,
  doc: OpenApiDocument,
  ops: readonly ListOperation[],
  requests: number,
  progress: (figure: ListFigure) => void = () => undefined,
): Promise<ListFigure[]> {
  const figures: ListFigure[] = [];
  for (const op of ops) {
    const figure = await measureOne(base, doc, op, requests);
    figures.push(figure);
    progress(figure);
  }
  return figures;
}

async function measureOne(base: string, doc: OpenApiDocument, op: ListOperation, requests: number): Promise<ListFigure> {
  const key = op.caller === 'admin' ? SEED_ADMIN_KEY : SEED_MEMBER_KEY;
  const unmeasured = (note: string, ok: boolean): ListFigure => ({ name: op.name, caller: op.caller, p50: null, p95: null, max: null, items: null, note, ok });
  const documented = documentedQueryParams(doc, op.documentPath);
  if (!documented) return unmeasured(`skipped: GET ${op.documentPath} is not in this build's API document`, true);
  const missing = op.params.filter((p) => !documented.has(p));
  if (missing.length > 0) return unmeasured(`skipped: GET ${op.documentPath} has no ${missing.join(', ')} parameter in this build`, true);
  let cursor: string | null = null;
  if (op.secondPage) {
    const first = await timedGet(base, op.url(null), key);
    const next = first.body?.['nextCursor'];
    if (first.status !== 200 || typeof next !== 'string') return unmeasured(`page 1 gave no cursor (HTTP ${first.status})`, false);
    cursor = next;
  }
  const url = op.url(cursor);
  const probe = await timedGet(base, url, key);
  if (probe.status !== 200) return unmeasured(`HTTP ${probe.status}: ${JSON.stringify(probe.body).slice(0, 200)}`, false);
  for (let i = 0; i < WARMUP_REQUESTS; i++) await timedGet(base, url, key);
  const times: number[] = [];
  let errors = 0;
  for (let i = 0; i < requests; i++) {
    const r = await timedGet(base, url, key);
    if (r.status !== 200) errors++;
    times.push(r.ms);
  }
  times.sort((a, b) => a - b);
  const p95 = percentile(times, 0.95);
  return {
    name: op.name,
    caller: op.caller,
    p50: percentile(times, 0.5),
    p95,
    max: times[times.length - 1]!,
    items: itemCount(probe.body),
    note: errors > 0 ? `${errors} of ${requests} requests failed` : '',
    ok: errors === 0 && p95 <= LIST_P95_TARGET_MS,
  };
}

/** A database of the bench's own on the server of `serverUrl`, dropped by drop(). */
async function ownDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `agw_bench_lists_${process.pid}_${Date.now()}`;
  const run = async (sql: string): Promise<void> => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** The kept database `--lists-database-url` names, created on its server when it does not exist yet. */
async function ensureDatabase(databaseUrl: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`--lists-database-url: '${name}' is not a plain database name`);
  const server = new URL(databaseUrl);
  server.pathname = '/postgres';
  const client = new pg.Client({ connectionString: server.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE ${name}`);
      console.log(`  created database ${name}`);
    }
  } finally {
    await client.end();
  }
}

const fmt = (n: number | null): string => (n === null ? '-' : n.toFixed(1));

/** Runs the list point and prints its table and checks; resolves with the figures. */
export async function listsPoint(options: ListsPointOptions): Promise<ListFigure[]> {
  if (options.databaseUrl) await ensureDatabase(options.databaseUrl);
  const own = options.databaseUrl ? null : await ownDatabase(options.serverUrl);
  const databaseUrl = options.databaseUrl ?? own!.url;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agw-bench-lists-'));
  let gateway: { port: number; stop(): Promise<void> } | null = null;
  try {
    const { scale } = options;
    console.log(
      `list point: seeding ${scale.runs} runs, ${scale.audit} audit records, ${scale.keys} keys, ${scale.responses} responses over ${scale.days} days`,
    );
    const seed = await seedConsole(databaseUrl, scale, { reuse: options.databaseUrl !== null });
    console.log(`  ${seed.seeded ? `seeded in ${seed.seconds.toFixed(1)} s` : 'seeded before'}: ${JSON.stringify(seed.counts)}`);
    const file = path.join(dir, 'gateway-lists.yaml');
    writeFileSync(
      file,
      stringify({
        server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 2000 },
        store: { driver: 'postgres', url: databaseUrl, path: path.join(dir, 'data-unused'), retentionDays: 0 },
        queue: { driver: 'inline' },
        ...seedConfigDocument(scale),
        plugins: { auth: { enabled: true }, rateLimit: { enabled: true }, audit: { enabled: true }, dlp: { enabled: false } },
        logging: { level: 'info', accessLog: false },
      }),
    );
    gateway = await options.startGateway(file);
    const base = `http://127.0.0.1:${gateway.port}`;
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as OpenApiDocument;
    console.log(`  ${options.requests} requests per operation in a row (after ${WARMUP_REQUESTS}), latency as the client saw it, in ms`);
    const figures = await measureLists(base, doc, listOperations(Date.now()), options.requests, (f) =>
      console.log(`    ${f.name} (${f.caller}): ${f.p95 === null ? f.note : `p50 ${fmt(f.p50)}, p95 ${fmt(f.p95)}`}`),
    );
    console.log('');
    const rows = [
      ['operation', 'caller', 'p50', 'p95', 'max', 'items', 'p95 <= 100 ms'],
      ...figures.map((f) => [f.name, f.caller, fmt(f.p50), fmt(f.p95), fmt(f.max), f.items === null ? '-' : String(f.items), verdict(f)]),
    ];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const row of rows) console.log(`  ${row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')}`);
    const measured = figures.filter((f) => f.p95 !== null);
    const within = measured.filter((f) => f.ok);
    const broken = figures.filter((f) => f.p95 === null && !f.ok);
    const skipped = figures.filter((f) => f.p95 === null && f.ok);
    const failing = figures.filter((f) => !f.ok).map((f) => `${f.name} (${f.caller})`);
    console.log(
      `\n  ${failing.length === 0 ? 'MET    ' : 'NOT MET'}  list operations p95 <= ${LIST_P95_TARGET_MS} ms: ${within.length} of ${measured.length} measured within` +
        `${broken.length > 0 ? `, ${broken.length} failed to answer` : ''}${failing.length > 0 ? ` (${failing.join(', ')})` : ''}; ${skipped.length} skipped (not in this build)\n`,
    );
    return figures;
  } finally {
    await gateway?.stop();
    rmSync(dir, { recursive: true, force: true });
    await own?.drop().catch((err: unknown) => console.error(`bench: could not drop the list point's database: ${String(err)}`));
  }
}

function verdict(f: ListFigure): string {
  if (f.p95 === null) return f.note;
  const met = f.ok ? 'met' : 'NOT MET';
  return f.note ? `${met} (${f.note})` : met;
}

/** The seed scale for the list point: issue 20's, or a fraction of it (`--lists-scale 0.1`). */
export function listsScale(fraction: number): SeedScale {
  if (fraction === 1) return FULL_SCALE;
  const part = (n: number): number => Math.max(1, Math.round(n * fraction));
  return { ...FULL_SCALE, runs: part(FULL_SCALE.runs), audit: part(FULL_SCALE.audit), responses: part(FULL_SCALE.responses) };
}
