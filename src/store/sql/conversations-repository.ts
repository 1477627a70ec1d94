import type { ConversationRepository } from '../port';
import {
  LeaseLostError,
  type ConversationItemRecord,
  type ConversationRecord,
  type ConversationSummary,
  type LeaseFence,
  type NewConversationItem,
} from '../types';
import { insertFromJson, preparedStatement, type SqlDatabase, type SqlExecutor, type SqlParam } from './database';
import { jsonbText } from './responses-repository';
import { RESPONSE_COLUMNS, responseRows } from './turns-repository';
import { agentModelsSql, agentPermissionsSql, iso, json, nowIso, principalParams, sqlParams, type Timestamp } from './rows';

interface ConversationRow {
  id: string;
  org_id: string;
  user_id: string;
  run_id: string | null;
  metadata: Record<string, unknown>;
  created_at: Timestamp;
  summary: ConversationSummary | null;
  context_tokens: number | null;
}

interface ItemRow {
  conversation_id: string;
  position: number;
  id: string;
  type: string;
  role: string | null;
  data: Record<string, unknown>;
  status: string;
  idempotency_key: string | null;
  response_id: string | null;
  created_at: Timestamp;
}

function toConversation(row: ConversationRow): ConversationRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    userId: row.user_id,
    runId: row.run_id,
    metadata: row.metadata,
    createdAt: iso(row.created_at),
    summary: row.summary,
    contextTokens: row.context_tokens,
  };
}

function toItem(row: ItemRow): ConversationItemRecord {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    position: row.position,
    type: row.type,
    role: row.role,
    data: row.data,
    status: row.status,
    idempotencyKey: row.idempotency_key,
    responseId: row.response_id,
    createdAt: iso(row.created_at),
  };
}

const CONVERSATION_COLUMNS = 'c.id, c.org_id, c.user_id, c.run_id, c.metadata, c.created_at, c.summary, c.context_tokens';
const AGENT_PERMISSIONS = agentPermissionsSql('a', { user: '$3', role: '$4', groups: '$5' });

export async function insertConversation(db: SqlExecutor, conversation: ConversationRecord): Promise<void> {
  await db.query(
    'INSERT INTO conversations (id, org_id, user_id, run_id, metadata, created_at, summary, context_tokens) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7::jsonb, $8)',
    [
      conversation.id,
      conversation.orgId,
      conversation.userId,
      conversation.runId,
      json(conversation.metadata),
      conversation.createdAt,
      conversation.summary ? json(conversation.summary) : null,
      conversation.contextTokens ?? null,
    ],
  );
}

/**
 * The fence of a run's writer, inside the writer's transaction: the run row is share-locked while still
 * in progress under the fence's generation, so a takeover (acquireLease updates that row) waits for this
 * transaction to commit, and a takeover committed before makes the row not match (PostgreSQL re-checks
 * a locked row's condition against its newest version).
 */
export async function holdFence(tx: SqlExecutor, fence: LeaseFence): Promise<void> {
  const held = await tx.query<{ id: string }>(`SELECT id FROM runs WHERE id = $1 AND status = 'in_progress' AND lease_generation = $2 FOR SHARE`, [
    fence.runId,
    fence.generation,
  ]);
  if (held.length === 0) throw new LeaseLostError(fence.runId);
}

/**
 * Appends items inside a transaction, taking the conversation row's lock. Appenders to one conversation
 * queue on that lock, so positions are assigned gap-free and an idempotency key checked here cannot be
 * inserted meanwhile by another.
 */
async function appendLocked(tx: SqlExecutor, conversationId: string, items: readonly NewConversationItem[]): Promise<ConversationItemRecord[]> {
  const [locked] = await tx.query<{ next_position: number }>('SELECT next_position FROM conversations WHERE id = $1 FOR UPDATE', [conversationId]);
  if (!locked) throw new Error(`conversation ${conversationId} does not exist`);
  const keys = items.map((i) => i.idempotencyKey).filter((k): k is string => k !== null);
  const existing = new Map<string, ConversationItemRecord>();
  if (keys.length > 0) {
    const rows = await tx.query<ItemRow>('SELECT * FROM conversation_items WHERE conversation_id = $1 AND idempotency_key = ANY($2::text[])', [
      conversationId,
      keys,
    ]);
    for (const row of rows) if (row.idempotency_key !== null) existing.set(row.idempotency_key, toItem(row));
  }
  const now = nowIso();
  let position = locked.next_position;
  const result: ConversationItemRecord[] = [];
  const params: SqlParam[] = [conversationId, now];
  const values: string[] = [];
  for (const item of items) {
    const known = item.idempotencyKey === null ? undefined : existing.get(item.idempotencyKey);
    if (known) {
      result.push(known);
      continue;
    }
    const record: ConversationItemRecord = {
      id: item.id,
      conversationId,
      position: position++,
      type: item.type,
      role: item.role,
      data: item.data,
      status: item.status,
      idempotencyKey: item.idempotencyKey,
      responseId: item.responseId,
      createdAt: now,
    };
    if (record.idempotencyKey !== null) existing.set(record.idempotencyKey, record);
    const base = params.length;
    params.push(record.position, record.id, record.type, record.role, json(record.data), record.status, record.idempotencyKey, record.responseId);
    values.push(
      `($1, $${base + 1}::int, $${base + 2}::text, $${base + 3}::text, $${base + 4}::text, $${base + 5}::jsonb, $${base + 6}::text, $${base + 7}::text, $${base + 8}::text, $2)`,
    );
    result.push(record);
  }
  if (values.length > 0) {
    await tx.query(
      `INSERT INTO conversation_items (conversation_id, position, id, type, role, data, status, idempotency_key, response_id, created_at)
       VALUES ${values.join(', ')}`,
      params,
    );
    await tx.query('UPDATE conversations SET next_position = $2 WHERE id = $1', [conversationId, position]);
  }
  return result;
}

/**
 * SQL condition: conversation `c`'s turn may be taken by response `responseId` at `now` (see the
 * port's claimTurn): no holder, the same response, a holder past its deadline, or a holder whose
 * response exists and is no longer in progress.
 */
function turnFree(responseId: string, now: string): string {
  return `(c.turn_response_id IS NULL OR c.turn_response_id = ${responseId} OR c.turn_until < ${now}
    OR EXISTS (SELECT 1 FROM responses r WHERE r.id = c.turn_response_id AND r.status <> 'in_progress'))`;
}

/**
 * openTurn's statement (ConversationRepository.openTurn): the visible conversation, its turn claimed,
 * and its items after the summary read with the claim. `target`: $2 as the conversation id, or the
 * conversation of the previous response $2 (same organization, stored, unexpired at $7).
 */
function openTurnStatement(target: string): string {
  return preparedStatement(
    `WITH target AS (
           SELECT c.id, c.run_id FROM conversations c
           WHERE c.id = ${target} AND c.org_id = $1
             AND ($4::text = 'admin' OR c.user_id = $3::text OR EXISTS (
               SELECT 1 FROM runs r LEFT JOIN agents a ON a.id = r.agent_id
               WHERE r.id = c.run_id AND r.org_id = $1
                 AND (r.user_id = $3::text OR (a.org_id = $1 AND cardinality(${AGENT_PERMISSIONS}) > 0))
             ))
         ),
         claimed AS (
           UPDATE conversations c SET turn_response_id = $6, turn_until = $8
           FROM target t
           WHERE c.id = t.id AND t.run_id IS NULL
             AND ${turnFree('$6', '$7')}
           RETURNING ${CONVERSATION_COLUMNS}, c.next_position
         )
         ,
         placed AS (
           ${insertFromJson('responses', RESPONSE_COLUMNS, 9)
             .replace('x."conversationId"', '(SELECT id FROM claimed)')
             .replace('x."body"', `jsonb_set(x."body", '{conversation}', jsonb_build_object('id', (SELECT id FROM claimed)))`)}
           WHERE EXISTS (SELECT 1 FROM claimed)
         )
         SELECT t.id AS target_id, t.run_id AS target_run_id, (c.id IS NOT NULL) AS claimed, ${CONVERSATION_COLUMNS}, c.next_position,
           CASE WHEN c.id IS NOT NULL THEN (
             SELECT coalesce(json_agg(i ORDER BY i.position), '[]'::json) FROM conversation_items i
             WHERE i.conversation_id = c.id AND i.position > coalesce((c.summary->>'through')::int, 0)
           ) END AS items
         FROM target t LEFT JOIN claimed c ON c.id = t.id`,
  );
}

const OPEN_TURN_BY_CONVERSATION = openTurnStatement('$2::text');
const OPEN_TURN_BY_PREVIOUS_RESPONSE = openTurnStatement(
  '(SELECT r.conversation_id FROM responses r WHERE r.id = $2 AND r.org_id = $1 AND r.stored AND (r.expires_at IS NULL OR r.expires_at > $7::timestamptz))',
);

export function sqlConversations(db: SqlDatabase): ConversationRepository {
  return {
    async create(conversation) {
      await insertConversation(db, conversation);
    },
    async get(id) {
      const [row] = await db.query<ConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM conversations c WHERE c.id = $1`, [id]);
      return row ? toConversation(row) : null;
    },
    async getVisible(principal, id) {
      const [org, ...rest] = principalParams(principal);
      const { params, bind } = sqlParams([org, id, ...rest]);
      // A run's conversation, for a key with a model allow-list: only when its run's agent is within it.
      const models = agentModelsSql('a', principal, bind);
      const runAgent = models
        ? ` AND (c.run_id IS NULL OR EXISTS (SELECT 1 FROM runs r JOIN agents a ON a.id = r.agent_id WHERE r.id = c.run_id AND ${models}))`
        : '';
      const [row] = await db.query<ConversationRow>(
        `SELECT ${CONVERSATION_COLUMNS} FROM conversations c
         WHERE c.id = $2 AND c.org_id = $1
           AND ($4::text = 'admin' OR c.user_id = $3::text OR EXISTS (
             SELECT 1 FROM runs r LEFT JOIN agents a ON a.id = r.agent_id
             WHERE r.id = c.run_id AND r.org_id = $1
               AND (r.user_id = $3::text OR (a.org_id = $1 AND cardinality(${AGENT_PERMISSIONS}) > 0))
           ))${runAgent}`,
        params,
      );
      return row ? toConversation(row) : null;
    },
    async append(conversationId, items, fence) {
      if (items.length === 0) return [];
      return db.transaction(async (tx) => {
        // Lock order: the run row, then the conversation row (no path takes them the other way round).
        if (fence) await holdFence(tx, fence);
        return appendLocked(tx, conversationId, items);
      });
    },
    async claimTurn(conversationId, responseId, now, until) {
      // A holder whose response row exists and is no longer in progress has ended (or was failed by
      // the sweeper after a crash); one that has no row yet (between its claim and its first byte) is
      // still starting, until its turn's own deadline.
      const rows = await db.query<{ id: string }>(
        `UPDATE conversations c SET turn_response_id = $2, turn_until = $4
         WHERE c.id = $1 AND ${turnFree('$2', '$3')}
         RETURNING c.id`,
        [conversationId, responseId, now, until],
      );
      return rows.length > 0;
    },
    async openTurn(principal, ref, response, now, until) {
      const [org, ...rest] = principalParams(principal);
      const [row] = await db.query<
        ConversationRow & { claimed: boolean; target_id: string; target_run_id: string | null; next_position: number; items: ItemRow[] | null }
      >('conversationId' in ref ? OPEN_TURN_BY_CONVERSATION : OPEN_TURN_BY_PREVIOUS_RESPONSE, [
        org,
        'conversationId' in ref ? ref.conversationId : ref.previousResponseId,
        ...rest,
        response.id,
        now,
        until,
        jsonbText(responseRows([response])),
      ]);
      if (!row) return { kind: 'not_found' };
      if (row.target_run_id !== null) return { kind: 'run', conversationId: row.target_id };
      if (!row.claimed) return { kind: 'locked', conversationId: row.target_id };
      // The items were read in the statement's snapshot; the claim may have waited for the previous
      // holder's end to commit after it. Complete only when they reach the conversation's last position.
      const items = (row.items ?? []).map(toItem);
      const last = items.length > 0 ? items[items.length - 1]!.position : (row.summary?.through ?? 0);
      const complete = last === row.next_position - 1 || (items.length === 0 && row.next_position - 1 <= last);
      return { kind: 'claimed', conversation: toConversation(row), ...(complete ? { items } : {}) };
    },
    async abandonTurn(conversationId, responseId) {
      await db.query(
        `WITH gone AS (DELETE FROM responses WHERE id = $2 AND status = 'in_progress')
         UPDATE conversations SET turn_response_id = NULL, turn_until = NULL WHERE id = $1 AND turn_response_id = $2`,
        [conversationId, responseId],
      );
    },
    async endTurn(conversationId, responseId, items, contextTokens) {
      return db.transaction(async (tx) => {
        const [held] = await tx.query<{ id: string }>('SELECT id FROM conversations WHERE id = $1 AND turn_response_id = $2 FOR UPDATE', [
          conversationId,
          responseId,
        ]);
        if (!held) return false;
        if (items.length > 0) await appendLocked(tx, conversationId, items);
        await tx.query(
          `UPDATE conversations SET turn_response_id = NULL, turn_until = NULL, context_tokens = COALESCE($2::int, context_tokens) WHERE id = $1`,
          [conversationId, contextTokens],
        );
        return true;
      });
    },
    async setSummary(conversationId, summary, item) {
      await db.transaction(async (tx) => {
        await appendLocked(tx, conversationId, [item]);
        await tx.query('UPDATE conversations SET summary = $2::jsonb WHERE id = $1', [conversationId, json(summary)]);
      });
    },
    async listItems(conversationId, options) {
      const desc = options.order === 'desc';
      const rows = await db.query<ItemRow>(
        `SELECT * FROM conversation_items WHERE conversation_id = $1
           AND ($2::int IS NULL OR position ${desc ? '<' : '>'} $2::int)
         ORDER BY position ${desc ? 'DESC' : 'ASC'} LIMIT $3`,
        [conversationId, options.afterPosition ?? null, options.limit],
      );
      return rows.map(toItem);
    },
    async getItem(conversationId, itemId) {
      const [row] = await db.query<ItemRow>('SELECT * FROM conversation_items WHERE conversation_id = $1 AND id = $2', [conversationId, itemId]);
      return row ? toItem(row) : null;
    },
  };
}
