import type { ResponseRepository } from '../port';
import type { ResponseEventRecord, ResponseRecord, ResponseStatus } from '../types';
import type { SqlExecutor, SqlParam } from './database';
import { iso, isoOrNull, json, nowIso, type Timestamp } from './rows';

interface ResponseRow {
  id: string;
  org_id: string;
  user_id: string;
  status: ResponseStatus;
  model: string;
  conversation_id: string | null;
  previous_response_id: string | null;
  stored: boolean;
  body: Record<string, unknown>;
  input_items: Record<string, unknown>[];
  created_at: Timestamp;
  updated_at: Timestamp;
  expires_at: Timestamp | null;
}

interface EventRow {
  response_id: string;
  sequence_number: number;
  event: string;
  data: Record<string, unknown>;
  created_at: Timestamp;
}

function toResponse(row: ResponseRow): ResponseRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    userId: row.user_id,
    status: row.status,
    model: row.model,
    conversationId: row.conversation_id,
    previousResponseId: row.previous_response_id,
    stored: row.stored,
    body: row.body,
    inputItems: row.input_items,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    expiresAt: isoOrNull(row.expires_at),
  };
}

function toEvent(row: EventRow): ResponseEventRecord {
  return { responseId: row.response_id, sequenceNumber: row.sequence_number, event: row.event, data: row.data, createdAt: iso(row.created_at) };
}

export function sqlResponses(db: SqlExecutor): ResponseRepository {
  return {
    async create(r) {
      await db.query(
        `INSERT INTO responses (id, org_id, user_id, status, model, conversation_id, previous_response_id, stored, body, input_items,
           created_at, updated_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11, $12, $13)`,
        [
          r.id,
          r.orgId,
          r.userId,
          r.status,
          r.model,
          r.conversationId,
          r.previousResponseId,
          r.stored,
          json(r.body),
          json(r.inputItems),
          r.createdAt,
          r.updatedAt,
          r.expiresAt,
        ],
      );
    },
    async get(id) {
      const [row] = await db.query<ResponseRow>('SELECT * FROM responses WHERE id = $1', [id]);
      return row ? toResponse(row) : null;
    },
    async getVisible(principal, id, now) {
      const [row] = await db.query<ResponseRow>(
        `SELECT * FROM responses WHERE id = $1 AND org_id = $2 AND stored AND (expires_at IS NULL OR expires_at > $3::timestamptz)`,
        [id, principal.orgId, now],
      );
      return row ? toResponse(row) : null;
    },
    async update(id, patch) {
      const params: SqlParam[] = [id, nowIso()];
      const sets = ['updated_at = $2'];
      if (patch.status !== undefined) {
        params.push(patch.status);
        sets.push(`status = $${params.length}`);
      }
      if (patch.body !== undefined) {
        params.push(json(patch.body));
        sets.push(`body = $${params.length}::jsonb`);
      }
      if (patch.conversationId !== undefined) {
        params.push(patch.conversationId);
        sets.push(`conversation_id = $${params.length}`);
      }
      if (patch.expiresAt !== undefined) {
        params.push(patch.expiresAt);
        sets.push(`expires_at = $${params.length}::timestamptz`);
      }
      await db.query(`UPDATE responses SET ${sets.join(', ')} WHERE id = $1`, params);
    },
    async appendEvents(events) {
      if (events.length === 0) return;
      const params: SqlParam[] = [];
      const values = events.map((e) => {
        params.push(e.responseId, e.sequenceNumber, e.event, json(e.data), e.createdAt);
        const b = params.length - 5;
        return `($${b + 1}::text, $${b + 2}::int, $${b + 3}::text, $${b + 4}::jsonb, $${b + 5}::timestamptz)`;
      });
      // A re-sent event (same response and sequence number) is kept once.
      await db.query(
        `INSERT INTO response_events (response_id, sequence_number, event, data, created_at) VALUES ${values.join(', ')}
         ON CONFLICT (response_id, sequence_number) DO NOTHING`,
        params,
      );
    },
    async listEvents(responseId, after) {
      const rows = await db.query<EventRow>('SELECT * FROM response_events WHERE response_id = $1 AND sequence_number > $2 ORDER BY sequence_number', [
        responseId,
        after,
      ]);
      return rows.map(toEvent);
    },
  };
}
