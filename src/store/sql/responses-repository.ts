import type { ResponseRepository } from '../port';
import type { NewResponseEvent, ResponseEventRecord, ResponseRecord, ResponseStatus, ResponseSummary } from '../types';
import { insertFromJson, JsonBytes, preparedStatement, type JsonCopyColumn, type SqlDatabase, type SqlExecutor, type SqlParam } from './database';
import { iso, isoOrNull, json, nowIso, storableEscapes, type Timestamp } from './rows';

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
  lease_owner: string | null;
  lease_until: Timestamp | null;
}

/** A chunk of a response's event log: the events one write carried, in order (schema migration 18). */
interface EventChunkRow {
  response_id: string;
  first_seq: number;
  last_seq: number;
  events: ChunkedEvent[];
  created_at: Timestamp;
}

/** One event in a chunk: its name and payload, and its time when it differs from the chunk's. */
interface ChunkedEvent {
  e: string;
  d: Record<string, unknown>;
  c?: string;
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
    lease: row.lease_owner !== null && row.lease_until !== null ? { owner: row.lease_owner, until: iso(row.lease_until) } : null,
  };
}

/**
 * The events of `rows` (ordered by first_seq, last_seq) numbered after `after`, each number once: the
 * first copy read wins (a retried write may have stored an event again, in a later chunk), at most `limit`.
 */
function eventsOf(rows: readonly EventChunkRow[], after: number, limit: number, out: ResponseEventRecord[]): void {
  let last = out.length > 0 ? out[out.length - 1]!.sequenceNumber : after;
  for (const row of rows) {
    const createdAt = iso(row.created_at);
    let seq = row.first_seq;
    for (const { e, d, c } of row.events) {
      if (seq > last) {
        out.push({ responseId: row.response_id, sequenceNumber: seq, event: e, data: d, createdAt: c ?? createdAt });
        last = seq;
        if (out.length >= limit) return;
      }
      seq++;
    }
  }
}

/** JSON text for a jsonb column (rows.ts json: U+0000 and lone surrogates stored as U+FFFD). */
export function jsonbText(value: unknown): string {
  return json(value);
}

const CHUNK_COLUMNS: readonly JsonCopyColumn[] = [
  { column: 'response_id', key: 'r', type: 'text' },
  { column: 'first_seq', key: 'f', type: 'int' },
  { column: 'last_seq', key: 'l', type: 'int' },
  { column: 'events', key: 'v', type: 'json' },
  { column: 'created_at', key: 'c', type: 'timestamptz' },
];

/** The chunks' INSERT, their JSON (eventChunksJson) as parameter `param`: a CTE of the turn commit. */
export function insertEventChunks(param: number): string {
  return insertFromJson('response_events', CHUNK_COLUMNS, param, 'ON CONFLICT (response_id, first_seq, last_seq) DO NOTHING');
}

/** The event log's write as one statement text whatever the batch size: the chunks as one JSON parameter. */
const INSERT_EVENT_CHUNKS = preparedStatement(insertEventChunks(1));

/** The largest sequence number the integer columns first_seq and last_seq hold. */
const MAX_SEQ = 2 ** 31 - 1;

/** Events per statement of INSERT_EVENT_CHUNKS: bounds the size of one JSON parameter. */
const EVENT_BATCH = 1000;

/**
 * Whether statements carry event chunks as rows, each chunk's events a json parameter of its own
 * (chunkValuesSql), rather than as one JSON parameter of them all. Through the JSON parameter
 * PostgreSQL lexes every event three times (the parameter's input, json_to_recordset's parse, the
 * column's json input), as rows once. That matters where the database's CPU is the gateway's: the
 * embedded database runs in WebAssembly in a process on the gateway's core, where it was ~300 µs per
 * 6.5 KB of events (micro-benchmark) and ~8% of that process's CPU per stored stream (c64 soaks of
 * stored streams, three pairs). A PostgreSQL server lexes natively on a core of its own, and the
 * gateway paid for the extra parameters: there the stored streams' soaks read 3% fewer streams per
 * second, so it keeps the one parameter.
 */
export function chunksAsRows(db: SqlExecutor): boolean {
  return (db as Partial<SqlDatabase>).kind === 'embedded';
}

/** Chunks per statement as rows (five parameters each); past it, one JSON parameter (or more statements). */
export const CHUNKS_PER_STATEMENT = 64;

/**
 * The VALUES rows of `n` chunks, parameters numbered from `first` (chunkParams' order). The same chunk
 * written again (a retried write that had committed) is kept once.
 */
export function chunkValuesSql(n: number, first: number): string {
  const rows: string[] = [];
  for (let i = 0; i < n; i++) {
    const p = first + i * 5;
    rows.push(`($${p}, $${p + 1}::int, $${p + 2}::int, $${p + 3}::json, $${p + 4}::timestamptz)`);
  }
  return `INSERT INTO response_events (response_id, first_seq, last_seq, events, created_at) VALUES ${rows.join(', ')}
  ON CONFLICT (response_id, first_seq, last_seq) DO NOTHING`;
}

const insertChunkTexts: string[] = [];

/** The event log's INSERT of `n` chunks as rows: one text per chunk count. */
function insertChunksSql(n: number): string {
  return (insertChunkTexts[n] ??= chunkValuesSql(n, 1));
}

/** The parameters of chunkValuesSql(chunks.length, …). */
export function chunkParams(chunks: readonly EventChunk[]): SqlParam[] {
  const params: SqlParam[] = [];
  for (const c of chunks) params.push(c.r, c.f, c.l, eventsJson(c), c.c);
  return params;
}

/** One row of response_events: a run of consecutive events of one response. */
export interface EventChunk {
  r: string;
  f: number;
  l: number;
  c: string;
  /** The chunk's events, each as text parts: its ChunkedEvent's JSON is their concatenation. */
  v: string[][];
}

/**
 * The batch as chunks: each run of consecutive events of one response, numbered one after another, is
 * one row. The event log's writes group a response's events in order, so a response's part of a write
 * is usually one chunk; a gap or a repeat in the numbers (a re-sent event) starts another.
 */
export function chunksOf(events: readonly NewResponseEvent[]): EventChunk[] {
  const open = new Map<string, EventChunk>();
  const chunks: EventChunk[] = [];
  for (const e of events) {
    let chunk = open.get(e.responseId);
    if (!chunk || chunk.l + 1 !== e.sequenceNumber) {
      chunk = { r: e.responseId, f: e.sequenceNumber, l: e.sequenceNumber, c: e.createdAt, v: [] };
      open.set(e.responseId, chunk);
      chunks.push(chunk);
    } else chunk.l = e.sequenceNumber;
    // An event's JSON text as its writer sent it goes in as it is (it is what the caller received).
    const data = e.json ?? json(e.data);
    const tail = e.createdAt === chunk.c ? '}' : `,"c":${JSON.stringify(e.createdAt)}}`;
    chunk.v.push([`{"e":${JSON.stringify(e.event)},"d":`, data, tail]);
  }
  return chunks;
}

/**
 * The chunks (chunksOf) as the JSON parameter of insertEventChunks, written part by part into one
 * Buffer: the events' texts (most of the bytes) are never concatenated into a string of the whole
 * batch, which V8 would copy (flatten) on the heap once per join and again to scan it.
 */
export function eventChunksJson(chunks: readonly EventChunk[]): JsonBytes {
  const parts: string[] = ['['];
  chunks.forEach((c, i) => {
    parts.push(`${i === 0 ? '' : ','}{"r":${JSON.stringify(c.r)},"f":${c.f},"l":${c.l},"c":${JSON.stringify(c.c)},"v":`);
    pushEventsArray(parts, c);
    parts.push('}');
  });
  parts.push(']');
  return bytesOf(parts);
}

/** One chunk's events as a JSON array (the `v` of eventChunksJson), its parts pushed onto `parts`. */
function pushEventsArray(parts: string[], chunk: EventChunk): void {
  parts.push('[');
  chunk.v.forEach((event, k) => {
    if (k > 0) parts.push(',');
    // Each part is whole JSON tokens, so an escape never spans two parts.
    for (const part of event) parts.push(storableEscapes(part));
  });
  parts.push(']');
}

/** The concatenation of `parts` as UTF-8 bytes, never joined into one string first. */
function bytesOf(parts: readonly string[]): JsonBytes {
  let size = 0;
  for (const part of parts) size += Buffer.byteLength(part);
  const bytes = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const part of parts) at += bytes.write(part, at);
  return new JsonBytes(bytes);
}

/** One chunk's events as a JSON array in a Buffer of its own (a json parameter of chunkValuesSql). */
function eventsJson(chunk: EventChunk): JsonBytes {
  const parts: string[] = [];
  pushEventsArray(parts, chunk);
  return bytesOf(parts);
}

export function sqlResponses(db: SqlExecutor): ResponseRepository {
  const asRows = chunksAsRows(db);
  return {
    async create(r) {
      await db.query(
        `INSERT INTO responses (id, org_id, user_id, status, model, conversation_id, previous_response_id, stored, body, input_items,
           created_at, updated_at, expires_at, lease_owner, lease_until)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11, $12, $13, $14, $15)`,
        [
          r.id,
          r.orgId,
          r.userId,
          r.status,
          r.model,
          r.conversationId,
          r.previousResponseId,
          r.stored,
          jsonbText(r.body),
          jsonbText(r.inputItems),
          r.createdAt,
          r.updatedAt,
          r.expiresAt,
          r.lease?.owner ?? null,
          r.lease?.until ?? null,
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
    async listVisible(principal, query) {
      if (query.limit <= 0) return [];
      // responses_org_user_created (a member's own) or responses_org_created (an admin's organization).
      const params: SqlParam[] = [principal.orgId, query.now, query.limit];
      const where = ['org_id = $1', 'stored', '(expires_at IS NULL OR expires_at > $2::timestamptz)'];
      if (principal.role !== 'admin') {
        params.push(principal.userId);
        where.push(`user_id = $${params.length}`);
      }
      if (query.after) {
        params.push(query.after.createdAt, query.after.id);
        where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::text)`);
      }
      const rows = await db.query<Pick<ResponseRow, 'id' | 'user_id' | 'status' | 'model' | 'conversation_id' | 'previous_response_id' | 'created_at'>>(
        `SELECT id, user_id, status, model, conversation_id, previous_response_id, created_at FROM responses
         WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $3`,
        params,
      );
      return rows.map((row): ResponseSummary => ({
        id: row.id,
        userId: row.user_id,
        status: row.status,
        model: row.model,
        conversationId: row.conversation_id,
        previousResponseId: row.previous_response_id,
        createdAt: iso(row.created_at),
      }));
    },
    async update(id, patch) {
      const params: SqlParam[] = [id, nowIso()];
      const sets = ['updated_at = $2'];
      if (patch.status !== undefined) {
        params.push(patch.status);
        sets.push(`status = $${params.length}`);
      }
      if (patch.body !== undefined) {
        params.push(jsonbText(patch.body));
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
      if (patch.inputItems !== undefined) {
        params.push(jsonbText(patch.inputItems));
        sets.push(`input_items = $${params.length}::jsonb`);
      }
      await db.query(`UPDATE responses SET ${sets.join(', ')} WHERE id = $1`, params);
    },
    async finish(id, outcome, guard) {
      const params: SqlParam[] = [id, outcome.status, jsonbText(outcome.body), nowIso(), guard.whenStatus];
      let lapsed = '';
      if (guard.lapsedBefore !== undefined) {
        params.push(guard.lapsedBefore);
        lapsed = ` AND lease_until IS NOT NULL AND lease_until < $${params.length}::timestamptz`;
      }
      const [row] = await db.query<ResponseRow>(
        `UPDATE responses SET status = $2, body = $3::jsonb, updated_at = $4, lease_owner = NULL, lease_until = NULL
         WHERE id = $1 AND status = $5${lapsed} RETURNING *`,
        params,
      );
      return row ? toResponse(row) : null;
    },
    async renewLeases(ids, owner, until) {
      if (ids.length === 0) return [];
      const rows = await db.query<{ id: string }>(
        `UPDATE responses SET lease_until = $3::timestamptz WHERE id = ANY($1::text[]) AND lease_owner = $2 AND status = 'in_progress' RETURNING id`,
        [ids, owner, until],
      );
      return rows.map((r) => r.id);
    },
    async listLapsed(now, limit) {
      if (limit <= 0) return [];
      // The predicate repeats the partial index's (responses_lapsed) so the planner uses it.
      const rows = await db.query<ResponseRow>(
        `SELECT * FROM responses WHERE status = 'in_progress' AND lease_until IS NOT NULL AND lease_until < $1::timestamptz
         ORDER BY lease_until, id LIMIT $2`,
        [now, limit],
      );
      return rows.map(toResponse);
    },
    async appendEvents(events) {
      if (asRows) {
        const chunks = chunksOf(events);
        for (let start = 0; start < chunks.length; start += CHUNKS_PER_STATEMENT) {
          const part = start === 0 && chunks.length <= CHUNKS_PER_STATEMENT ? chunks : chunks.slice(start, start + CHUNKS_PER_STATEMENT);
          await db.query(insertChunksSql(part.length), chunkParams(part));
        }
        return;
      }
      for (let start = 0; start < events.length; start += EVENT_BATCH) {
        const batch = start === 0 && events.length <= EVENT_BATCH ? events : events.slice(start, start + EVENT_BATCH);
        await db.query(INSERT_EVENT_CHUNKS, [eventChunksJson(chunksOf(batch))]);
      }
    },
    async listEvents(responseId, after, limit) {
      const wanted = limit ?? Number.POSITIVE_INFINITY;
      if (wanted <= 0) return [];
      // Sequence numbers are integer columns: a reader's `after` at or past their largest value (a
      // starting_after of 2^31 - 1 or more) has none after it, and must not reach PostgreSQL as a
      // parameter of that type (22003, integer out of range).
      if (after >= MAX_SEQ) return [];
      const out: ResponseEventRecord[] = [];
      // Chunks in order; a chunk holds at least one event after the last one read unless a retried
      // write stored it again, so `limit` chunks usually suffice: read on while a full page fell short.
      let from = after;
      for (;;) {
        const params: SqlParam[] = [responseId, from];
        const bound = limit === undefined ? '' : ` LIMIT ${Math.min(wanted, 1000)}`;
        const rows = await db.query<EventChunkRow>(
          `SELECT * FROM response_events WHERE response_id = $1 AND last_seq > $2 ORDER BY first_seq, last_seq${bound}`,
          params,
        );
        eventsOf(rows, after, wanted, out);
        if (limit === undefined || out.length >= wanted || rows.length < Math.min(wanted, 1000)) return out;
        from = Math.max(from, ...rows.map((r) => r.last_seq));
      }
    },
    async lastSequenceNumber(responseId) {
      const [row] = await db.query<{ n: number | null }>('SELECT max(last_seq) AS n FROM response_events WHERE response_id = $1', [responseId]);
      return row?.n ?? -1;
    },
    async prune(now, limit) {
      if (limit <= 0) return 0;
      // One batch per statement: the victims come from the expiry index (responses_expiry), their
      // events from the primary key's prefix (= ANY(array) keeps both deletes on index lookups whatever
      // the table statistics say); the caller repeats while batches come back full.
      const [row] = await db.query<{ n: number }>(
        `WITH victims AS (
           SELECT id FROM responses WHERE expires_at IS NOT NULL AND expires_at <= $1::timestamptz ORDER BY expires_at LIMIT $2
         ),
         gone AS (DELETE FROM responses WHERE id = ANY(ARRAY(SELECT id FROM victims)) RETURNING id),
         events AS (DELETE FROM response_events WHERE response_id = ANY(ARRAY(SELECT id FROM gone)))
         SELECT count(*)::int AS n FROM gone`,
        [now, limit],
      );
      return row?.n ?? 0;
    },
  };
}
