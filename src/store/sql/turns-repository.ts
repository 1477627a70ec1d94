// Group commit of stored Responses turns (TurnRepository): the beginnings and ends of every response
// that reached that point while the previous commit was in flight, in one transaction of at most five
// statements whatever their number. Each statement's rows travel as one JSON parameter (one statement
// text, planned once). A write per response costs a transaction (and a WAL flush) each; under load the
// turns of a whole window share one.
import type { TurnRepository } from '../port';
import { insertFromJson, preparedStatement, type JsonCopyColumn, type SqlDatabase } from './database';
import { nowIso } from './rows';
import { jsonbText } from './responses-repository';

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

const RESPONSE_COLUMNS: readonly JsonCopyColumn[] = [
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

const INSERT_CONVERSATIONS = preparedStatement(insertFromJson('conversations', CONVERSATION_COLUMNS, 1));
const INSERT_RESPONSES = preparedStatement(insertFromJson('responses', RESPONSE_COLUMNS, 1));
const INSERT_ITEMS = preparedStatement(insertFromJson('conversation_items', ITEM_COLUMNS, 1));

/**
 * Releases the turns still held by their responses and reserves each one's item positions (the turn's
 * holder is the only appender of a response conversation, so the reservation is the row's update).
 */
const END_TURNS = preparedStatement(`UPDATE conversations c
  SET next_position = c.next_position + x.n, turn_response_id = NULL, turn_until = NULL, context_tokens = COALESCE(x.tokens, c.context_tokens)
  FROM json_to_recordset($1::json) AS x(id text, response_id text, n int, tokens int)
  WHERE c.id = x.id AND c.turn_response_id = x.response_id
  RETURNING c.id, c.next_position - x.n AS first`);

const FINISH_RESPONSES = preparedStatement(`UPDATE responses r
  SET status = x.status, body = x.body, updated_at = $2::timestamptz, lease_owner = NULL, lease_until = NULL
  FROM json_to_recordset($1::json) AS x(id text, status text, body jsonb)
  WHERE r.id = x.id AND r.status = 'in_progress'
  RETURNING r.id`);

export function sqlTurns(db: SqlDatabase): TurnRepository {
  return {
    async commit(begins, ends) {
      if (begins.length === 0 && ends.length === 0) return { finished: [] };
      return db.transaction(async (tx) => {
        const conversations = begins.flatMap((b) => (b.conversation ? [{ ...b.conversation, turnResponseId: b.response.id, turnUntil: b.turnUntil }] : []));
        if (conversations.length > 0) await tx.query(INSERT_CONVERSATIONS, [jsonbText(conversations)]);
        if (begins.length > 0) {
          const responses = begins.map(({ response: r }) => ({
            ...r,
            leaseOwner: r.lease?.owner ?? null,
            leaseUntil: r.lease?.until ?? null,
            lease: undefined,
          }));
          await tx.query(INSERT_RESPONSES, [jsonbText(responses)]);
        }
        if (ends.length === 0) return { finished: [] };
        const held = await tx.query<{ id: string; first: number }>(END_TURNS, [
          JSON.stringify(ends.map((e) => ({ id: e.conversationId, response_id: e.responseId, n: e.items.length, tokens: e.contextTokens }))),
        ]);
        const firstPosition = new Map(held.map((row) => [row.id, row.first]));
        const now = nowIso();
        const items = ends.flatMap((end) => {
          const first = firstPosition.get(end.conversationId);
          if (first === undefined) return [];
          return end.items.map((item, i) => ({ ...item, conversationId: end.conversationId, position: first + i, createdAt: now }));
        });
        if (items.length > 0) await tx.query(INSERT_ITEMS, [jsonbText(items)]);
        const finished = await tx.query<{ id: string }>(FINISH_RESPONSES, [
          jsonbText(ends.map((e) => ({ id: e.responseId, status: e.outcome.status, body: e.outcome.body }))),
          now,
        ]);
        return { finished: finished.map((row) => row.id) };
      });
    },
  };
}
