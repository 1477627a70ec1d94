// Group commit of stored Responses turns (TurnRepository): the beginnings and ends of every response
// that reached that point while the previous commit was in flight, in one statement whatever their
// number: the rows travel as JSON parameters (one statement text, planned once). A write per response
// would cost a transaction (round trips and a WAL flush) each; under load the turns of a whole window
// share one.
import type { TurnRepository } from '../port';
import type { ResponseRecord } from '../types';
import { insertFromJson, isSqlRefusal, preparedStatement, type JsonCopyColumn, type SqlDatabase } from './database';
import { nowIso } from './rows';
import type { SqlParam } from './params';
import {
  chunkParams,
  chunksAsRows,
  chunksOf,
  chunkValuesSql,
  CHUNKS_PER_STATEMENT,
  eventChunksJson,
  insertEventChunks,
  jsonbText,
} from './responses-repository';

const CONVERSATION_COLUMNS: readonly JsonCopyColumn[] = [
  { column: 'id', key: 'id', type: 'text' },
  { column: 'org_id', key: 'orgId', type: 'text' },
  { column: 'user_id', key: 'userId', type: 'text' },
  { column: 'run_id', key: 'runId', type: 'text' },
  { column: 'metadata', key: 'metadata', type: 'jsonb' },
  { column: 'created_at', key: 'createdAt', type: 'timestamptz' },
  { column: 'turn_response_id', key: 'turnResponseId', type: 'text' },
  { column: 'turn_until', key: 'turnUntil', type: 'timestamptz' },
];

export const RESPONSE_COLUMNS: readonly JsonCopyColumn[] = [
  { column: 'id', key: 'id', type: 'text' },
  { column: 'org_id', key: 'orgId', type: 'text' },
  { column: 'user_id', key: 'userId', type: 'text' },
  { column: 'status', key: 'status', type: 'text' },
  { column: 'model', key: 'model', type: 'text' },
  { column: 'conversation_id', key: 'conversationId', type: 'text' },
  { column: 'previous_response_id', key: 'previousResponseId', type: 'text' },
  { column: 'stored', key: 'stored', type: 'boolean' },
  { column: 'body', key: 'body', type: 'jsonb' },
  { column: 'input_items', key: 'inputItems', type: 'jsonb' },
  { column: 'created_at', key: 'createdAt', type: 'timestamptz' },
  { column: 'updated_at', key: 'updatedAt', type: 'timestamptz' },
  { column: 'expires_at', key: 'expiresAt', type: 'timestamptz' },
  { column: 'lease_owner', key: 'leaseOwner', type: 'text' },
  { column: 'lease_until', key: 'leaseUntil', type: 'timestamptz' },
];

const ITEM_COLUMNS: readonly JsonCopyColumn[] = [
  { column: 'conversation_id', key: 'conversationId', type: 'text' },
  { column: 'position', key: 'position', type: 'int' },
  { column: 'id', key: 'id', type: 'text' },
  { column: 'type', key: 'type', type: 'text' },
  { column: 'role', key: 'role', type: 'text' },
  { column: 'data', key: 'data', type: 'jsonb' },
  { column: 'status', key: 'status', type: 'text' },
  { column: 'idempotency_key', key: 'idempotencyKey', type: 'text' },
  { column: 'response_id', key: 'responseId', type: 'text' },
  { column: 'created_at', key: 'createdAt', type: 'timestamptz' },
];

/** The commit's statement texts by chunk count (commitTurnsSql). */
const commitTexts: string[] = [];

/** How a commit carries the ends' last events: that many chunks as rows (0: none), or one JSON parameter. */
type CommitEvents = number | 'json';

/**
 * The whole commit as one statement (its data-modifying CTEs run exactly once and commit together, so
 * one round trip and no BEGIN/COMMIT): new conversations ($1) and response records ($2); then the
 * turns ended ($3): each conversation's turn released where its response still holds it, with its
 * item positions reserved, the items ($4, numbered from 0 per conversation) appended at them, and the
 * terminal writes ($5) applied to responses still in progress, whose ids the statement returns; the
 * ends' last events (from $9) stored in the same commit, whichever terminal writes apply (as a log
 * write would: the readers of a response's log keep the first copy of each number): on the embedded
 * database one VALUES row per chunk with its events a json parameter of its own (chunksAsRows: one text
 * per chunk count, up to CHUNKS_PER_STATEMENT), otherwise one JSON parameter of them all.
 *
 * The two UPDATEs also match their rows by id against an array ($7, $8). The planner takes
 * json_to_recordset for 100 rows whatever it holds, and joined on that estimate alone it hashed the
 * rows and scanned the whole table: conversations until ~20,000 rows, responses for as long as the
 * plan cached while the table was small lived (a bench schema's 30,000 stored turns made 4,500 full
 * scans in 40 s, each commit slower than the last). `id = ANY(array)` is estimated at ten rows: the
 * primary key's index, at any table size.
 */
function commitTurnsSql(events: CommitEvents): string {
  // 0: no events; 1..CHUNKS_PER_STATEMENT: as many rows; CHUNKS_PER_STATEMENT + 1: one JSON parameter.
  const key = events === 'json' ? CHUNKS_PER_STATEMENT + 1 : events;
  const cached = commitTexts[key];
  if (cached !== undefined) return cached;
  const text = `WITH
  new_conversations AS (${insertFromJson('conversations', CONVERSATION_COLUMNS, 1)}),
  new_responses AS (${insertFromJson('responses', RESPONSE_COLUMNS, 2)}),
  ended AS (
    UPDATE conversations c
    SET next_position = c.next_position + x.n, turn_response_id = NULL, turn_until = NULL, context_tokens = COALESCE(x.tokens, c.context_tokens)
    FROM json_to_recordset($3::json) AS x(id text, response_id text, n int, tokens int)
    WHERE c.id = x.id AND c.turn_response_id = x.response_id AND c.id = ANY($7::text[])
    RETURNING c.id, c.next_position - x.n AS first
  ),
  appended AS (
    INSERT INTO conversation_items (${ITEM_COLUMNS.map((c) => c.column).join(', ')})
    SELECT i."conversationId", e.first + i."index", i."id", i."type", i."role", i."data", i."status", i."idempotencyKey", i."responseId", i."createdAt"
    FROM json_to_recordset($4::json) AS i("conversationId" text, "index" int, "id" text, "type" text, "role" text, "data" jsonb, "status" text,
      "idempotencyKey" text, "responseId" text, "createdAt" timestamptz)
    JOIN ended e ON e.id = i."conversationId"
  ),
  finished AS (
    UPDATE responses r
    SET status = x.status, body = x.body, input_items = COALESCE(x.input_items, r.input_items), updated_at = $6::timestamptz,
      lease_owner = NULL, lease_until = NULL
    FROM json_to_recordset($5::json) AS x(id text, status text, body jsonb, input_items jsonb)
    WHERE r.id = x.id AND r.status = 'in_progress' AND r.id = ANY($8::text[])
    RETURNING r.id
  )${
    key === 0
      ? ''
      : `,
  new_events AS (${key > CHUNKS_PER_STATEMENT ? insertEventChunks(9) : chunkValuesSql(key, 9)})`
  }
SELECT id FROM finished`;
  // Prepared on PostgreSQL, which takes the texts without rows (the embedded database prepares nothing).
  commitTexts[key] = key > 0 && key <= CHUNKS_PER_STATEMENT ? text : preparedStatement(text);
  return commitTexts[key];
}

/** Response records as RESPONSE_COLUMNS reads them from JSON (the lease as its two columns). */
export function responseRows(records: readonly ResponseRecord[]): Record<string, unknown>[] {
  return records.map((r) => ({ ...r, leaseOwner: r.lease?.owner ?? null, leaseUntil: r.lease?.until ?? null, lease: undefined }));
}

export function sqlTurns(db: SqlDatabase): TurnRepository {
  const asRows = chunksAsRows(db);
  return {
    async commit(begins, ends) {
      if (begins.length === 0 && ends.length === 0) return { finished: [] };
      const conversations = begins.flatMap((b) => (b.conversation ? [{ ...b.conversation, turnResponseId: b.response.id, turnUntil: b.turnUntil }] : []));
      const responses = responseRows(begins.map((b) => b.response));
      const now = nowIso();
      const chunks = chunksOf(ends.flatMap((e) => e.events ?? []));
      const params: SqlParam[] = [
        jsonbText(conversations),
        jsonbText(responses),
        JSON.stringify(ends.map((e) => ({ id: e.conversationId, response_id: e.responseId, n: e.items.length, tokens: e.contextTokens }))),
        jsonbText(ends.flatMap((e) => e.items.map((item, index) => ({ ...item, conversationId: e.conversationId, index, createdAt: now })))),
        jsonbText(ends.map((e) => ({ id: e.responseId, status: e.outcome.status, body: e.outcome.body, input_items: e.inputItems ?? null }))),
        now,
        ends.map((e) => e.conversationId),
        ends.map((e) => e.responseId),
      ];
      const events: CommitEvents = chunks.length > 0 && (!asRows || chunks.length > CHUNKS_PER_STATEMENT) ? 'json' : chunks.length;
      if (events === 'json') params.push(eventChunksJson(chunks));
      else params.push(...chunkParams(chunks));
      const rows = await db.query<{ id: string }>(commitTurnsSql(events), params);
      return { finished: rows.map((row) => row.id) };
    },
    refused: isSqlRefusal,
  };
}
