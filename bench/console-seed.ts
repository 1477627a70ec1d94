// Fills a PostgreSQL database with what a busy organization's console lists: runs of several agents by
// several users over the last `days` days (each with its conversation and step verdict), audit records,
// usage records, API keys and stored responses. The schema is the store's own: the store opens the
// database (running its migrations) and loads the configured organization, users and agents as a
// gateway does at start-up (syncConfiguredState); the bulk rows are then written by a few INSERT ...
// SELECT FROM generate_series statements, time-ordered as a live system writes them, and ANALYZEd (what
// autovacuum does after a bulk load). Used by `npm run seed:console` and the bench's list point.
import pg from 'pg';
import { stringify } from 'yaml';
import { parseConfig } from '../src/config/load';
import { createLogger } from '../src/log/logger';
import { syncConfiguredState } from '../src/startup';
import { createStore } from '../src/store/index';
import { BACKFILL_USAGE_DAY_TOTALS } from '../src/store/sql/usage-repository';

export interface SeedScale {
  runs: number;
  audit: number;
  keys: number;
  /** Users besides the two configured ones (the admin and the member whose keys the bench uses). */
  users: number;
  agents: number;
  responses: number;
  /** The rows span the last `days` days. */
  days: number;
}

/** The scale issue 20 measures at: 100,000 runs and 1,000,000 audit records. */
export const FULL_SCALE: SeedScale = { runs: 100_000, audit: 1_000_000, keys: 300, users: 48, agents: 20, responses: 20_000, days: 90 };

export const SEED_ORG = 'acme';
export const SEED_ADMIN = 'u-admin';
export const SEED_MEMBER = 'u-member';
/** The configured keys of the seeded admin and member (the seeded keys are unusable: random hashes). */
export const SEED_ADMIN_KEY = 'agw_seedadmin_0123456789abcdefghijklmnopqrstuv';
export const SEED_MEMBER_KEY = 'agw_seedmember_0123456789abcdefghijklmnopqrstu';
/** The models the seeded records name (all served by the offline demo provider). */
export const SEED_MODELS = ['gpt-4o-mini', 'gpt-4o', 'claude-sonnet-4-5', 'demo'] as const;
/** Usage records per run (a run's model calls: one per step). */
export const USAGE_PER_RUN = 2;
const SETTINGS_KEY = 'console-seed';

/** Agent `n` (0-based): a fixed UUID, so a seeded database and a configuration written later agree. */
export const seedAgentId = (n: number): string => `00000000-0000-4000-8000-${String(n + 1).padStart(12, '0')}`;

/**
 * Who sees agent `n`: the member created the first two, the next three are shared with the member, the
 * next two with the member's group; the admin created the rest (a member sees their runs only if the
 * member triggered them).
 */
function agentShape(n: number): { createdBy: string; sharedWith: Record<string, unknown>[] } {
  if (n < 2) return { createdBy: SEED_MEMBER, sharedWith: [] };
  if (n < 5) return { createdBy: SEED_ADMIN, sharedWith: [{ user: SEED_MEMBER, permissions: ['view'] }] };
  if (n < 7) return { createdBy: SEED_ADMIN, sharedWith: [{ group: 'analysts', permissions: ['view'] }] };
  return { createdBy: SEED_ADMIN, sharedWith: [] };
}

/**
 * The configuration the seeded database belongs to: the organization, its two configured users (with
 * the keys above), the member's group and the agents. A gateway serving the database must be started with
 * these (its start-up soft-deletes agents its configuration does not name).
 */
export function seedConfigDocument(scale: SeedScale): Record<string, unknown> {
  return {
    providers: { demo: { type: 'demo' } },
    models: SEED_MODELS.map((id) => ({ id, provider: 'demo' })),
    organizations: [
      {
        id: SEED_ORG,
        name: 'Acme',
        models: ['*'],
        rateLimit: { requestsPerMinute: 100_000_000, perUserRequestsPerMinute: 100_000_000 },
        users: [
          { id: SEED_ADMIN, name: 'Ada Admin', role: 'admin', keys: [SEED_ADMIN_KEY] },
          { id: SEED_MEMBER, name: 'Max Member', role: 'member', keys: [SEED_MEMBER_KEY] },
        ],
        groups: [{ id: 'analysts', name: 'Analysts', members: [SEED_MEMBER] }],
      },
    ],
    agents: Array.from({ length: scale.agents }, (_, n) => ({
      id: seedAgentId(n),
      organization: SEED_ORG,
      name: `Agent ${String(n + 1).padStart(2, '0')}`,
      description: `Seeded agent ${n + 1}.`,
      ...agentShape(n),
      model: SEED_MODELS[n % SEED_MODELS.length],
      instructions: 'You are a concise assistant.',
      inputs: [{ label: 'Topic', required: true }],
      steps: [
        { name: 'Outline', prompt: 'Write a three-point outline about {{Topic}}.', objective: 'The outline has three points.' },
        { name: 'Summary', prompt: 'Summarise the outline in one sentence.' },
      ],
      timeoutSeconds: 120,
    })),
  };
}

export interface SeedResult {
  /** False when the database already held a seed of this scale (nothing written). */
  seeded: boolean;
  seconds: number;
  counts: { runs: number; audit: number; usage: number; keys: number; responses: number; conversations: number };
}

export interface SeedOptions {
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /** A database seeded before at the same scale is left as it is (default: refuse any earlier seed). */
  reuse?: boolean;
}

/** Seeds `databaseUrl` (PostgreSQL, empty or seeded before) at `scale`. */
export async function seedConsole(databaseUrl: string, scale: SeedScale, options: SeedOptions = {}): Promise<SeedResult> {
  const log = options.log ?? ((): void => undefined);
  const started = Date.now();
  const logger = createLogger({ level: 'error', silent: true });
  // The store runs its migrations and loads the configured state as a gateway would.
  const store = await createStore({ driver: 'postgres', url: databaseUrl, path: '', retentionDays: 0, queryTimeoutMs: 0 }, { logger });
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
    const wanted = JSON.stringify(scale);
    const earlier = (await client.query<{ value: string }>('SELECT value FROM settings WHERE key = $1', [SETTINGS_KEY])).rows[0]?.value;
    if (earlier !== undefined) {
      if (options.reuse && earlier === wanted) return { seeded: false, seconds: (Date.now() - started) / 1000, counts: await countRows(client) };
      throw new Error(`the database was seeded before (${earlier}); seed a fresh database`);
    }
    const [runs] = (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM runs')).rows;
    if ((runs?.n ?? 0) > 0) throw new Error('the database holds runs already; seed a fresh database');
    const config = parseConfig(stringify(seedConfigDocument(scale)), {}, 'seed configuration');
    await syncConfiguredState(config, store, logger, new Date(), { bootstrap: false });
    // One clock for every statement, and repeatable random choices.
    const now = (await client.query<{ now: Date }>('SELECT now() AS now')).rows[0]!.now.toISOString();
    await client.query('SELECT setseed(0.2026)');
    for (const [name, sql, params] of statements(scale, now)) {
      const at = Date.now();
      await client.query(sql, params);
      log(`  ${name}: ${((Date.now() - at) / 1000).toFixed(1)} s`);
    }
    const at = Date.now();
    await client.query('ANALYZE');
    log(`  analyze: ${((Date.now() - at) / 1000).toFixed(1)} s`);
    await client.query('INSERT INTO settings (key, value) VALUES ($1, $2)', [SETTINGS_KEY, wanted]);
    return { seeded: true, seconds: (Date.now() - started) / 1000, counts: await countRows(client) };
  } finally {
    await client.end().catch(() => undefined);
    await store.close();
  }
}

async function countRows(client: pg.Client): Promise<SeedResult['counts']> {
  const { rows } = await client.query<SeedResult['counts']>(
    `SELECT (SELECT count(*) FROM runs)::int AS runs, (SELECT count(*) FROM audit_records)::int AS audit,
            (SELECT count(*) FROM usage_records)::int AS usage, (SELECT count(*) FROM api_keys)::int AS keys,
            (SELECT count(*) FROM responses)::int AS responses, (SELECT count(*) FROM conversations)::int AS conversations`,
  );
  return rows[0]!;
}

type Statement = [name: string, sql: string, params: unknown[]];

/**
 * The bulk statements. $1 is the seed's clock (now); rows are spread over [now - days, now). Users are
 * the two configured ones and `users` seeded members `u-0001`...; key `k` belongs to user `k % users`.
 */
function statements(scale: SeedScale, now: string): Statement[] {
  const span = `make_interval(days => ${Math.round(scale.days)})`;
  const userCount = scale.users + 2;
  // User number u (0-based): 0 the admin, 1 the member, then the seeded ones.
  const userOf = (u: string): string => `(CASE ${u} WHEN 0 THEN '${SEED_ADMIN}' WHEN 1 THEN '${SEED_MEMBER}' ELSE 'u-' || lpad((${u} - 1)::text, 4, '0') END)`;
  // Key number k: a seeded key (belonging to user k % userCount).
  const keyOf = (k: string): string => `('key_' || md5('key' || ${k}))`;
  const models = `(ARRAY[${SEED_MODELS.map((m) => `'${m}'`).join(', ')}])`;
  const agents = `(ARRAY[${Array.from({ length: scale.agents }, (_, n) => `'${seedAgentId(n)}'`).join(', ')}])`;
  const keysPerUser = Math.max(1, Math.floor(scale.keys / userCount));
  return [
    [
      'users',
      `INSERT INTO users (id, org_id, name, role)
       SELECT ${userOf('u')}, '${SEED_ORG}', 'Seeded user ' || u, CASE WHEN u % 10 = 0 THEN 'admin' ELSE 'member' END
       FROM generate_series(2, ${userCount - 1}) AS u`,
      [],
    ],
    [
      `${scale.keys} keys`,
      `INSERT INTO api_keys (id, org_id, user_id, name, hash, prefix, source, created_at, last_used_at, revoked_at)
       SELECT ${keyOf('k')}, '${SEED_ORG}', ${userOf(`k % ${userCount}`)}, 'key ' || k, encode(sha256(('seeded key ' || k)::bytea), 'hex'),
              'agw_' || substr(md5('prefix' || k), 1, 4), 'cli', created, created + (random() * (now_ - created)),
              CASE WHEN k % 10 = 9 THEN created + (random() * (now_ - created)) END
       FROM (SELECT k, $1::timestamptz AS now_, $1::timestamptz - ${span} * random() AS created FROM generate_series(0, ${scale.keys - 1}) AS k) s`,
      [now],
    ],
    [
      `${scale.runs} runs`,
      // Time-ordered (run i is the i-th oldest), statuses 80% success, 12% failure, 5% cancelled, the
      // rest in progress (the newest ones, leased by a live worker so that no sweeper picks them up).
      `INSERT INTO runs (id, org_id, agent_id, agent_version, user_id, conversation_id, inputs, status, result, error, trigger,
         source_run_id, steps_completed, created_at, updated_at, ended_at, deadline_at, lease_owner, lease_expires_at, attempts, revision,
         lease_generation, key_id, error_code)
       SELECT md5('run' || i)::uuid::text, '${SEED_ORG}', ${agents}[1 + a], 1, ${userOf('u')}, 'conv_' || md5('conv' || i) || substr(md5('c' || i), 1, 16),
              jsonb_build_array(jsonb_build_object('name', 'Topic', 'value', 'topic ' || i)), status,
              CASE WHEN status = 'success' THEN 'A one-sentence summary of topic ' || i || '.' END,
              CASE WHEN status = 'failure' THEN 'The model call failed: upstream timeout.' END,
              (ARRAY['api', 'api', 'api', 'schedule', 'webhook'])[1 + i % 5], NULL,
              CASE WHEN status = 'success' THEN 2 WHEN status = 'in_progress' THEN 0 ELSE 1 END,
              created, created + interval '20 seconds', CASE WHEN status <> 'in_progress' THEN created + interval '20 seconds' END,
              CASE WHEN status = 'in_progress' THEN $1::timestamptz + interval '1 year' ELSE created + interval '120 seconds' END,
              CASE WHEN status = 'in_progress' THEN 'seed-worker' END,
              CASE WHEN status = 'in_progress' THEN $1::timestamptz + interval '1 year' END, 1, 3, 1,
              ${keyOf(`(u + ${userCount} * (i % ${keysPerUser}))`)}, CASE WHEN status = 'failure' THEN 'upstream_timeout' END
       FROM (
         SELECT i, floor(random() * ${scale.agents})::int AS a, floor(random() * ${userCount})::int AS u,
                CASE WHEN i > ${scale.runs} - greatest(1, ${scale.runs} / 500) THEN 'in_progress'
                     ELSE (ARRAY['success', 'failure', 'cancelled'])[CASE WHEN r < 0.842 THEN 1 WHEN r < 0.968 THEN 2 ELSE 3 END] END AS status,
                $1::timestamptz - ${span} * (1 - (i - 1 + random() * 0.9)::float8 / ${scale.runs}) AS created
         FROM (SELECT i, random() AS r FROM generate_series(1, ${scale.runs}) AS i) n
       ) s
       ORDER BY created`,
      [now],
    ],
    [
      'conversations of the runs',
      `INSERT INTO conversations (id, org_id, user_id, run_id, metadata, created_at, next_position)
       SELECT conversation_id, org_id, user_id, id, '{}'::jsonb, created_at, 1 FROM runs ORDER BY created_at`,
      [],
    ],
    [
      'step verdicts of the finished runs',
      `INSERT INTO step_verdicts (run_id, step_number, name, result, explanation, completed, updated_at)
       SELECT id, 1, 'Outline', CASE WHEN status = 'success' THEN 'pass' ELSE 'fail' END, 'The outline has three points.', true, ended_at
       FROM runs WHERE status <> 'in_progress'`,
      [],
    ],
    [
      `${scale.audit} audit records`,
      // Time-ordered as the audit trail writes them. 70% chat completions, 15% Responses (both with a
      // model and, when they succeeded, its usage), 10% model lists, 5% agent runs; 95% 200.
      `INSERT INTO audit_records (id, at, org_id, user_id, key_id, method, route, operation_id, resource_ids, status, latency_ms, request_id,
         model, prompt_tokens, completion_tokens, provider, error_code, truncated, redactions)
       SELECT md5('audit' || i)::uuid::text, at, '${SEED_ORG}', ${userOf('u')}, ${keyOf(`(u + ${userCount} * (i % ${keysPerUser}))`)},
              CASE WHEN op = 2 THEN 'GET' ELSE 'POST' END,
              (ARRAY['/v1/chat/completions', '/v1/responses', '/v1/models', '/v1/agents/{agentId}/runs'])[1 + op],
              (ARRAY['createChatCompletion', 'createResponse', 'listModels', 'createRun'])[1 + op],
              CASE WHEN op = 3 THEN jsonb_build_object('agentId', ${agents}[1 + i % ${scale.agents}]) ELSE '{}'::jsonb END,
              status, round((20 + random() * 900)::numeric, 1)::float8, 'req_' || md5('req' || i),
              CASE WHEN op < 2 THEN ${models}[1 + i % ${SEED_MODELS.length}] END,
              CASE WHEN op < 2 AND status = 200 THEN 50 + (i % 2000) END,
              CASE WHEN op < 2 AND status = 200 THEN 10 + (i % 500) END,
              CASE WHEN op < 2 THEN 'demo' END,
              CASE status WHEN 502 THEN 'upstream_error' WHEN 429 THEN 'rate_limited' WHEN 400 THEN 'invalid_request' END, NULL, NULL
       FROM (
         SELECT i, floor(random() * ${userCount})::int AS u,
                CASE WHEN r < 0.70 THEN 0 WHEN r < 0.85 THEN 1 WHEN r < 0.95 THEN 2 ELSE 3 END AS op,
                CASE WHEN s < 0.95 THEN 200 WHEN s < 0.97 THEN 400 WHEN s < 0.98 THEN 401 WHEN s < 0.99 THEN 429 ELSE 502 END AS status,
                $1::timestamptz - ${span} * (1 - (i - 1 + random() * 0.9)::float8 / ${scale.audit}) AS at
         FROM (SELECT i, random() AS r, random() AS s FROM generate_series(1, ${scale.audit}) AS i) n
       ) s
       ORDER BY at`,
      [now],
    ],
    [
      'usage records of the runs',
      // A run's model calls are usage records (the audit record of the call that triggered it carries none).
      `INSERT INTO usage_records (at, org_id, user_id, key_id, model, prompt_tokens, completion_tokens, request_id)
       SELECT r.created_at + make_interval(secs => 5 * c), r.org_id, r.user_id, r.key_id, (a.definition->>'model'),
              200 + (c * 37 + length(r.id)) % 900, 40 + (c * 11) % 300, 'run_' || r.id || '_' || c
       FROM runs r JOIN agents a ON a.id = r.agent_id CROSS JOIN generate_series(1, ${USAGE_PER_RUN}) AS c
       WHERE r.status <> 'in_progress'
       ORDER BY 1`,
      [],
    ],
    [
      'usage totals per UTC day',
      // The store's migration filled the day totals of an empty database; the rows above were written
      // around the store's write path, so they are summed here as the migration sums earlier records.
      BACKFILL_USAGE_DAY_TOTALS,
      [],
    ],
    [
      `${scale.responses} stored responses`,
      `INSERT INTO responses (id, org_id, user_id, status, model, conversation_id, previous_response_id, stored, body, input_items,
         created_at, updated_at, expires_at, lease_owner, lease_until)
       SELECT 'resp_' || md5('resp' || i), '${SEED_ORG}', ${userOf('u')}, 'completed', ${models}[1 + i % ${SEED_MODELS.length}], NULL, NULL, true,
              jsonb_build_object('id', 'resp_' || md5('resp' || i), 'object', 'response', 'status', 'completed',
                'model', ${models}[1 + i % ${SEED_MODELS.length}], 'output', '[]'::jsonb),
              '[]'::jsonb, created, created + interval '3 seconds', created + interval '365 days', NULL, NULL
       FROM (
         SELECT i, floor(random() * ${userCount})::int AS u, $1::timestamptz - ${span} * (1 - (i - 1 + random() * 0.9)::float8 / ${scale.responses}) AS created
         FROM generate_series(1, ${scale.responses}) AS i
       ) s
       ORDER BY created`,
      [now],
    ],
  ];
}
