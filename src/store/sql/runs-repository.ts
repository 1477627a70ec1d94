import type { RunRepository } from '../port';
import type { Principal, RunInput, RunListItem, RunListQuery, RunPatch, RunRecord, RunStatus, RunTrigger, VisibleRun } from '../types';
import { insertConversation } from './conversations-repository';
import type { SqlDatabase, SqlExecutor, SqlParam } from './database';
import { insertSteps } from './steps-repository';
import { agentModelsSql, agentPermissionsSql, iso, isoOrNull, json, nowIso, principalParams, sqlParams, type Timestamp } from './rows';

export interface RunRow {
  id: string;
  org_id: string;
  agent_id: string;
  agent_version: number;
  user_id: string;
  key_id: string | null;
  conversation_id: string;
  inputs: RunInput[];
  status: RunStatus;
  result: string | null;
  error: string | null;
  error_code: string | null;
  trigger: RunTrigger;
  source_run_id: string | null;
  steps_completed: number;
  created_at: Timestamp;
  updated_at: Timestamp;
  ended_at: Timestamp | null;
  deadline_at: Timestamp;
  lease_owner: string | null;
  lease_expires_at: Timestamp | null;
  attempts: number;
  lease_generation: number;
  revision: number;
}

export function toRun(row: RunRow): RunRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    agentId: row.agent_id,
    agentVersion: row.agent_version,
    userId: row.user_id,
    keyId: row.key_id,
    conversationId: row.conversation_id,
    inputs: row.inputs,
    status: row.status,
    result: row.result,
    error: row.error,
    errorCode: row.error_code,
    trigger: row.trigger,
    sourceRunId: row.source_run_id,
    stepsCompleted: row.steps_completed,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    endedAt: isoOrNull(row.ended_at),
    deadlineAt: iso(row.deadline_at),
    leaseOwner: row.lease_owner,
    leaseExpiresAt: isoOrNull(row.lease_expires_at),
    attempts: row.attempts,
    leaseGeneration: row.lease_generation,
    revision: row.revision,
  };
}

/** Patchable fields and their columns; anything else in a patch object is ignored. */
const PATCH_COLUMNS: { [K in keyof Required<RunPatch>]: string } = {
  status: 'status',
  result: 'result',
  error: 'error',
  errorCode: 'error_code',
  stepsCompleted: 'steps_completed',
  endedAt: 'ended_at',
  leaseOwner: 'lease_owner',
  leaseExpiresAt: 'lease_expires_at',
  attempts: 'attempts',
  deadlineAt: 'deadline_at',
};

const RUN_STATUSES: readonly RunStatus[] = ['in_progress', 'success', 'failure', 'cancelled'];
const VISIBLE_PERMISSIONS = agentPermissionsSql('a', { user: '$3', role: '$4', groups: '$5' });

/**
 * GET /v1/runs in one statement: the ids of the page, then their rows with the agent's name. An admin
 * reads the organization's runs through runs_org_created (runs_org_status_created with a status,
 * runs_agent_created with an agent). A member sees their own runs (runs_org_user_created) and every
 * run of an agent granting them any permission, deleted or not (getVisible's rule): the union of one
 * ordered, limited read of their own runs and one per granted agent, so a page never scans more than
 * `limit` rows per source, however many runs the organization has. A key with a model allow-list sees
 * only runs of agents within it (agent-models.ts): an admin's read is then one per such agent, a
 * member's granted agents are narrowed to them and their own runs must be of one.
 */
function listVisibleSql(principal: Principal, query: RunListQuery): { text: string; params: SqlParam[] } {
  const { params, bind: add } = sqlParams([principal.orgId]);
  const filters: string[] = [];
  const agent = query.agentId !== null ? add(query.agentId) : null;
  if (agent !== null) filters.push(`r.agent_id = ${agent}`);
  if (query.status !== null) filters.push(`r.status = ${add(query.status)}`);
  if (query.createdAfter !== null) filters.push(`r.created_at >= ${add(query.createdAfter)}::timestamptz`);
  if (query.createdBefore !== null) filters.push(`r.created_at <= ${add(query.createdBefore)}::timestamptz`);
  if (query.after !== null) filters.push(`(r.created_at, r.id) < (${add(query.after.createdAt)}::timestamptz, ${add(query.after.id)}::text)`);
  const limit = add(query.limit);
  const where = ['r.org_id = $1', ...filters].join(' AND ');
  const order = 'ORDER BY r.created_at DESC, r.id DESC';
  const agentFilter = agent !== null ? ` AND a.id = ${agent}` : '';
  const models = agentModelsSql('a', principal, add);
  let ids: string;
  if (principal.role === 'admin' && models === null) {
    ids = `SELECT r.id, r.created_at FROM runs r WHERE ${where} ${order} LIMIT ${limit}`;
  } else if (principal.role === 'admin') {
    ids = `SELECT x.id, x.created_at FROM agents a CROSS JOIN LATERAL (
        SELECT r.id, r.created_at FROM runs r WHERE ${where} AND r.agent_id = a.id ${order} LIMIT ${limit}) x
      WHERE a.org_id = $1${agentFilter} AND ${models}
      ORDER BY x.created_at DESC, x.id DESC LIMIT ${limit}`;
  } else {
    const user = add(principal.userId);
    const permissions = agentPermissionsSql('a', { user, role: add(principal.role), groups: add([...principal.groups]) });
    const ownAgent = models === null ? '' : ` AND EXISTS (SELECT 1 FROM agents a WHERE a.id = r.agent_id AND ${models})`;
    ids = `WITH granted AS (SELECT a.id FROM agents a WHERE a.org_id = $1${agentFilter} AND cardinality(${permissions}) > 0${models ? ` AND ${models}` : ''})
      SELECT u.id, u.created_at FROM (
        (SELECT r.id, r.created_at FROM runs r WHERE ${where} AND r.user_id = ${user}::text${ownAgent} ${order} LIMIT ${limit})
        UNION
        (SELECT x.id, x.created_at FROM granted g CROSS JOIN LATERAL (
          SELECT r.id, r.created_at FROM runs r WHERE ${where} AND r.agent_id = g.id ${order} LIMIT ${limit}) x)
      ) u ORDER BY u.created_at DESC, u.id DESC LIMIT ${limit}`;
  }
  const text = `WITH page AS (${ids})
    SELECT r.*, (a.id IS NULL OR a.deleted_at IS NOT NULL) AS agent_deleted,
      CASE WHEN a.deleted_at IS NULL THEN a.definition->>'name' END AS agent_name
    FROM page p JOIN runs r ON r.id = p.id LEFT JOIN agents a ON a.id = r.agent_id
    ORDER BY r.created_at DESC, r.id DESC`;
  return { text, params };
}

async function insertRun(db: SqlExecutor, run: RunRecord): Promise<void> {
  await db.query(
    `INSERT INTO runs (id, org_id, agent_id, agent_version, user_id, conversation_id, inputs, status, result, error, trigger,
       source_run_id, steps_completed, created_at, updated_at, ended_at, deadline_at, lease_owner, lease_expires_at, attempts, revision,
       lease_generation, key_id, error_code)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)`,
    [
      run.id,
      run.orgId,
      run.agentId,
      run.agentVersion,
      run.userId,
      run.conversationId,
      json(run.inputs),
      run.status,
      run.result,
      run.error,
      run.trigger,
      run.sourceRunId,
      run.stepsCompleted,
      run.createdAt,
      run.updatedAt,
      run.endedAt,
      run.deadlineAt,
      run.leaseOwner,
      run.leaseExpiresAt,
      run.attempts,
      run.revision,
      run.leaseGeneration,
      run.keyId,
      run.errorCode,
    ],
  );
}

export function sqlRuns(db: SqlDatabase): RunRepository {
  return {
    async create(run, parts = {}) {
      const { conversation, steps } = parts;
      if (!conversation && !steps?.length) return insertRun(db, run);
      // One transaction: a trigger that fails half-way leaves no conversation, run or step row behind.
      await db.transaction(async (tx) => {
        if (conversation) await insertConversation(tx, conversation);
        await insertRun(tx, run);
        if (steps) await insertSteps(tx, run.id, steps);
      });
    },
    async get(runId) {
      const [row] = await db.query<RunRow>('SELECT * FROM runs WHERE id = $1', [runId]);
      return row ? toRun(row) : null;
    },
    async getVisible(principal, runId) {
      // The agent counts whether deleted or not: a run stays readable after its agent disappears.
      const [org, ...rest] = principalParams(principal);
      const { params, bind } = sqlParams([org, runId, ...rest]);
      const models = agentModelsSql('a', principal, bind);
      const [row] = await db.query<RunRow & { agent_deleted: boolean }>(
        `SELECT r.*, (a.id IS NULL OR a.deleted_at IS NOT NULL) AS agent_deleted
         FROM runs r LEFT JOIN agents a ON a.id = r.agent_id
         WHERE r.id = $2 AND r.org_id = $1
           AND ($4::text = 'admin' OR r.user_id = $3::text OR (a.org_id = $1 AND cardinality(${VISIBLE_PERMISSIONS}) > 0))${models ? ` AND ${models}` : ''}`,
        params,
      );
      return row ? ({ ...toRun(row), agentDeleted: row.agent_deleted } satisfies VisibleRun) : null;
    },
    async page(query) {
      const rows = await db.query<{ id: string; created_at: Timestamp }>(
        `SELECT id, created_at FROM runs
         WHERE agent_id = $1
           AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::text))
           AND ($4::timestamptz IS NULL OR created_at >= $4::timestamptz)
           AND ($5::timestamptz IS NULL OR created_at <= $5::timestamptz)
         ORDER BY created_at DESC, id DESC
         LIMIT $6`,
        [query.agentId, query.after?.createdAt ?? null, query.after?.id ?? '', query.startDate, query.endDate, query.limit + 1],
      );
      const more = rows.length > query.limit;
      const pageRows = more ? rows.slice(0, query.limit) : rows;
      const last = pageRows[pageRows.length - 1];
      return { ids: pageRows.map((r) => r.id), next: more && last ? { createdAt: iso(last.created_at), id: last.id } : null };
    },
    async listVisible(principal, query) {
      if (query.limit <= 0) return [];
      const { text, params } = listVisibleSql(principal, query);
      const rows = await db.query<RunRow & { agent_deleted: boolean; agent_name: string | null }>(text, params);
      return rows.map((row): RunListItem => ({ ...toRun(row), agentDeleted: row.agent_deleted, agentName: row.agent_name }));
    },
    async latestCreatedAt(agentId) {
      const [row] = await db.query<{ created_at: Timestamp }>('SELECT created_at FROM runs WHERE agent_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1', [
        agentId,
      ]);
      return row ? iso(row.created_at) : null;
    },
    async update(runId, patch, guard) {
      const sets: string[] = ['revision = revision + 1', 'updated_at = $2'];
      const params: SqlParam[] = [runId, nowIso()];
      for (const [field, column] of Object.entries(PATCH_COLUMNS) as [keyof RunPatch, string][]) {
        const value = patch[field];
        if (value === undefined) continue;
        params.push(value);
        sets.push(`${column} = $${params.length}`);
      }
      const where = ['id = $1'];
      if (guard?.whenStatus) {
        params.push(guard.whenStatus);
        where.push(`status = ANY($${params.length}::text[])`);
      }
      if (guard?.whenRevision !== undefined) {
        params.push(guard.whenRevision);
        where.push(`revision = $${params.length}`);
      }
      if (guard?.whenGeneration !== undefined) {
        params.push(guard.whenGeneration);
        where.push(`lease_generation = $${params.length}`);
      }
      // One statement: the row lock PostgreSQL takes re-checks the guard after a concurrent writer commits,
      // so of several updaters holding the same revision exactly one succeeds.
      const [row] = await db.query<RunRow>(`UPDATE runs SET ${sets.join(', ')} WHERE ${where.join(' AND ')} RETURNING *`, params);
      return row ? toRun(row) : null;
    },
    async acquireLease(runId, owner, until, now) {
      const [row] = await db.query<RunRow>(
        `UPDATE runs SET lease_owner = $2, lease_expires_at = $3, attempts = attempts + 1, lease_generation = lease_generation + 1,
           revision = revision + 1, updated_at = $4
         WHERE id = $1 AND status = 'in_progress'
           AND (lease_owner IS NULL OR lease_expires_at IS NULL OR lease_expires_at <= $4::timestamptz OR lease_owner = $2)
         RETURNING *`,
        [runId, owner, until, now],
      );
      return row ? toRun(row) : null;
    },
    async listOrphaned(now, limit) {
      const rows = await db.query<RunRow>(
        `SELECT * FROM runs WHERE status = 'in_progress'
           AND (lease_owner IS NULL OR lease_expires_at IS NULL OR lease_expires_at <= $1::timestamptz)
         ORDER BY created_at, id LIMIT $2`,
        [now, limit],
      );
      return rows.map(toRun);
    },
    async listOverdue(now, limit) {
      const rows = await db.query<RunRow>(
        `SELECT * FROM runs WHERE status = 'in_progress' AND deadline_at <= $1::timestamptz ORDER BY deadline_at, id LIMIT $2`,
        [now, limit],
      );
      return rows.map(toRun);
    },
    async countByStatus() {
      const rows = await db.query<{ status: RunStatus; n: number }>('SELECT status, count(*)::int AS n FROM runs GROUP BY status');
      const counts = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
      for (const row of rows) if (row.status in counts) counts[row.status] = row.n;
      return counts;
    },
  };
}
