// The console seed (bench/console-seed.ts, `npm run seed:console`, the bench's list point) at a small
// scale in a fresh PostgreSQL schema: the rows it promises, consistent with each other and with the
// configuration a gateway serving them starts with, readable through the store's list queries; and the
// plan of an agent's run page on such a table (schema migration 16). Not a timing test.
import assert from 'node:assert/strict';
import pg from 'pg';
import { stringify } from 'yaml';
import { SEED_ADMIN, SEED_MEMBER, SEED_ORG, seedAgentId, seedConfigDocument, seedConsole, USAGE_PER_RUN, type SeedScale } from '../../bench/console-seed';
import { parseConfig } from '../../src/config/load';
import { createLogger } from '../../src/log/logger';
import { syncConfiguredState } from '../../src/startup';
import { createStore } from '../../src/store/index';
import type { Store } from '../../src/store/port';
import { openPostgres, type SqlDatabase } from '../../src/store/sql/database';
import { sqlRuns } from '../../src/store/sql/runs-repository';
import { createTestSchema } from '../helpers/store';

const SCALE: SeedScale = { runs: 1000, audit: 10_000, keys: 60, users: 8, agents: 10, responses: 200, days: 90 };

describe('console seed (postgres)', function () {
  this.timeout(120_000);
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let client: pg.Client;
  let store: Store;
  const logger = createLogger({ level: 'error', silent: true });
  const one = async <R extends object>(sql: string, params: unknown[] = []): Promise<R> => (await client.query<R>(sql, params)).rows[0]!;

  before(async () => {
    schema = await createTestSchema('seed');
    const result = await seedConsole(schema.url, SCALE);
    assert.equal(result.seeded, true);
    client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    store = await createStore({ driver: 'postgres', url: schema.url, path: '', retentionDays: 0, queryTimeoutMs: 0 }, { logger });
  });

  after(async () => {
    await client?.end();
    await store?.close();
    await schema?.drop();
  });

  it('writes the rows of the scale asked for, each run with its conversation and step verdict', async () => {
    const counts = await one<Record<string, number>>(
      `SELECT (SELECT count(*) FROM runs)::int AS runs, (SELECT count(*) FROM audit_records)::int AS audit,
              (SELECT count(*) FROM api_keys WHERE source = 'cli')::int AS keys, (SELECT count(*) FROM responses)::int AS responses,
              (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM agents WHERE deleted_at IS NULL)::int AS agents,
              (SELECT count(*) FROM runs WHERE status <> 'in_progress')::int AS finished, (SELECT count(*) FROM usage_records)::int AS usage,
              (SELECT count(*) FROM runs r JOIN conversations c ON c.id = r.conversation_id AND c.run_id = r.id)::int AS conversations,
              (SELECT count(*) FROM runs r JOIN step_verdicts v ON v.run_id = r.id)::int AS verdicts`,
    );
    assert.deepEqual(
      { runs: counts['runs'], audit: counts['audit'], keys: counts['keys'], responses: counts['responses'], users: counts['users'], agents: counts['agents'] },
      { runs: 1000, audit: 10_000, keys: 60, responses: 200, users: 10, agents: 10 },
    );
    assert.equal(counts['conversations'], 1000);
    assert.equal(counts['verdicts'], counts['finished']);
    assert.equal(counts['usage'], counts['finished']! * USAGE_PER_RUN);
    // Several of each: statuses, agents, users; a few runs in progress, leased by a live worker.
    const spread = await one<Record<string, number>>(
      `SELECT count(DISTINCT status)::int AS statuses, count(DISTINCT agent_id)::int AS agents, count(DISTINCT user_id)::int AS users,
              count(*) FILTER (WHERE status = 'in_progress' AND lease_expires_at > now())::int AS leased,
              count(*) FILTER (WHERE status = 'in_progress')::int AS in_progress
       FROM runs`,
    );
    assert.deepEqual({ statuses: spread['statuses'], agents: spread['agents'], users: spread['users'] }, { statuses: 4, agents: 10, users: 10 });
    assert.ok(spread['in_progress']! >= 1 && spread['in_progress']! <= 10);
    assert.equal(spread['leased'], spread['in_progress']);
  });

  it('spreads the rows over the last `days` days, records naming keys of their own users', async () => {
    const span = await one<{ runs_days: number; audit_days: number; future: number }>(
      `SELECT (SELECT extract(epoch FROM max(created_at) - min(created_at)) / 86400 FROM runs)::float8 AS runs_days,
              (SELECT extract(epoch FROM max(at) - min(at)) / 86400 FROM audit_records)::float8 AS audit_days,
              (SELECT count(*) FROM runs WHERE created_at > now())::int + (SELECT count(*) FROM audit_records WHERE at > now())::int AS future`,
    );
    assert.ok(span.runs_days > 85 && span.runs_days <= 90, `runs span ${span.runs_days} days`);
    assert.ok(span.audit_days > 85 && span.audit_days <= 90, `audit span ${span.audit_days} days`);
    assert.equal(span.future, 0);
    const strays = await one<{ audit: number; runs: number; usage: number }>(
      `SELECT (SELECT count(*) FROM audit_records a LEFT JOIN api_keys k ON k.id = a.key_id WHERE k.user_id IS DISTINCT FROM a.user_id)::int AS audit,
              (SELECT count(*) FROM runs r LEFT JOIN api_keys k ON k.id = r.key_id WHERE k.user_id IS DISTINCT FROM r.user_id)::int AS runs,
              (SELECT count(*) FROM usage_records u LEFT JOIN users x ON x.id = u.user_id WHERE x.id IS NULL)::int AS usage`,
    );
    assert.deepEqual(strays, { audit: 0, runs: 0, usage: 0 });
  });

  it('agrees with the configuration a gateway serving it starts with (no agent deleted or re-versioned)', async () => {
    const config = parseConfig(stringify(seedConfigDocument(SCALE)), {}, 'seed configuration');
    await syncConfiguredState(config, store, logger, new Date(), { bootstrap: false });
    const agents = await one<{ live: number; versions: number }>(
      `SELECT count(*) FILTER (WHERE deleted_at IS NULL)::int AS live, max(version)::int AS versions FROM agents`,
    );
    assert.deepEqual(agents, { live: 10, versions: 1 });
  });

  it("is listed by the store: an agent's runs page by page, the audit trail, a run as the member sees it", async () => {
    const agentId = seedAgentId(3);
    const { n } = await one<{ n: number }>('SELECT count(*)::int AS n FROM runs WHERE agent_id = $1', [agentId]);
    assert.ok(n > 20);
    const seen: string[] = [];
    let after: { createdAt: string; id: string } | null = null;
    for (let pages = 0; pages < 100; pages++) {
      const page = await store.runs.page({ agentId, limit: 20, after, startDate: null, endDate: null });
      seen.push(...page.ids);
      if (!page.next) break;
      after = page.next;
    }
    assert.equal(seen.length, n);
    assert.equal(new Set(seen).size, n);
    const audit = await store.audit.list({ orgId: SEED_ORG, since: null, limit: 50, after: null });
    assert.equal(audit.length, 50);
    assert.ok(audit.every((r, i) => i === 0 || r.at >= audit[i - 1]!.at));
    // Agent 3 is shared with the member: its runs are visible to them, whoever triggered them.
    const member = { orgId: SEED_ORG, userId: SEED_MEMBER, keyId: null, role: 'member' as const, groups: ['analysts'] };
    assert.equal((await store.runs.getVisible(member, seen[0]!))?.agentId, agentId);
    // An unshared agent of the admin's: the member sees only the runs they triggered.
    const hidden = await one<{ id: string }>(`SELECT id FROM runs WHERE agent_id = $1 AND user_id <> $2 LIMIT 1`, [seedAgentId(8), SEED_MEMBER]);
    assert.equal(await store.runs.getVisible(member, hidden.id), null);
    assert.ok(await store.runs.getVisible({ ...member, userId: SEED_ADMIN, role: 'admin' }, hidden.id));
  });

  it('refuses to seed a database twice, and leaves one seeded at the same scale as it is when asked to reuse it', async () => {
    await assert.rejects(seedConsole(schema.url, SCALE), /seeded before/);
    await assert.rejects(seedConsole(schema.url, { ...SCALE, runs: 2000 }, { reuse: true }), /seeded before/);
    const again = await seedConsole(schema.url, SCALE, { reuse: true });
    assert.equal(again.seeded, false);
    assert.equal(again.counts.runs, 1000);
  });

  it("reads an agent's run page through runs_agent_created, with no sort (migration 16)", async () => {
    const db = openPostgres({ url: schema.url, onConnectionError: () => undefined });
    try {
      const plans: unknown[] = [];
      // The repository's own statement, explained instead of run.
      const explaining: SqlDatabase = Object.assign(Object.create(db) as SqlDatabase, {
        async query<R extends object>(text: string, params?: readonly unknown[]): Promise<R[]> {
          const rows = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${text}`, params as never);
          plans.push(rows[0]!['QUERY PLAN']);
          return [];
        },
      });
      const runs = sqlRuns(explaining);
      await runs.page({ agentId: seedAgentId(8), limit: 21, after: null, startDate: null, endDate: null });
      await runs.page({ agentId: seedAgentId(8), limit: 21, after: { createdAt: new Date().toISOString(), id: 'z' }, startDate: null, endDate: null });
      assert.equal(plans.length, 2);
      for (const plan of plans) {
        const nodes = JSON.stringify(plan);
        assert.match(nodes, /"Index Name":"runs_agent_created"/, nodes);
        assert.doesNotMatch(nodes, /Sort"/, nodes);
      }
    } finally {
      await db.close();
    }
  });
});
