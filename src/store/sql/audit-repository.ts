import type { AuditRepository } from '../port';
import type { AuditQuery, AuditRecord } from '../types';
import { insertFromJson, JsonBytes, type JsonCopyColumn, type SqlExecutor, type SqlParam } from './database';
import {
  addDayTotals,
  ADD_DAY_TOTALS_JSON,
  CALL_COLUMNS,
  insertUsage,
  insertUsageStatement,
  INSERT_USAGE,
  USAGE_BATCH,
  USAGE_COLUMNS,
} from './usage-repository';
import { iso, type Timestamp } from './rows';

interface AuditRow {
  id: string;
  at: Timestamp;
  org_id: string | null;
  user_id: string | null;
  key_id: string | null;
  method: string;
  route: string;
  operation_id: string | null;
  resource_ids: Record<string, string>;
  status: number;
  latency_ms: number;
  request_id: string;
  redactions: Record<string, number> | null;
  model: string | null;
  provider: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_prompt_tokens: number | null;
  cost: number | null;
  error_code: string | null;
  truncated: boolean | null;
}

function toAudit(row: AuditRow): AuditRecord {
  return {
    id: row.id,
    at: iso(row.at),
    orgId: row.org_id,
    userId: row.user_id,
    keyId: row.key_id,
    method: row.method,
    route: row.route,
    operationId: row.operation_id,
    resourceIds: row.resource_ids,
    status: row.status,
    latencyMs: row.latency_ms,
    requestId: row.request_id,
    ...(row.redactions ? { redactions: row.redactions } : {}),
    ...optionalAuditFields(row),
  };
}

/** The model call's fields and the truncation mark, present only when set. */
function optionalAuditFields(row: AuditRow): Partial<AuditRecord> {
  const out: Partial<AuditRecord> = {};
  if (row.model !== null) out.model = row.model;
  if (row.provider !== null) out.provider = row.provider;
  if (row.prompt_tokens !== null) out.promptTokens = row.prompt_tokens;
  if (row.completion_tokens !== null) out.completionTokens = row.completion_tokens;
  if (row.cached_prompt_tokens !== null) out.cachedPromptTokens = row.cached_prompt_tokens;
  if (row.cost !== null) out.cost = row.cost;
  if (row.error_code !== null) out.errorCode = row.error_code;
  if (row.truncated === true) out.truncated = true;
  return out;
}

/** audit_records' columns and the AuditRecord properties they come from. */
const AUDIT_COLUMNS: readonly JsonCopyColumn[] = [
  { column: 'id', key: 'id', type: 'text' },
  { column: 'at', key: 'at', type: 'timestamptz' },
  { column: 'org_id', key: 'orgId', type: 'text' },
  { column: 'user_id', key: 'userId', type: 'text' },
  { column: 'key_id', key: 'keyId', type: 'text' },
  { column: 'method', key: 'method', type: 'text' },
  { column: 'route', key: 'route', type: 'text' },
  { column: 'operation_id', key: 'operationId', type: 'text' },
  { column: 'resource_ids', key: 'resourceIds', type: 'jsonb', fallback: '{}' },
  { column: 'status', key: 'status', type: 'int' },
  { column: 'latency_ms', key: 'latencyMs', type: 'float8' },
  { column: 'request_id', key: 'requestId', type: 'text' },
  { column: 'redactions', key: 'redactions', type: 'jsonb' },
  // The model call: what it called, and its own usage (NULL tokens when it made no upstream call or several).
  { column: 'model', key: 'model', type: 'text' },
  { column: 'prompt_tokens', key: 'promptTokens', type: 'int' },
  { column: 'completion_tokens', key: 'completionTokens', type: 'int' },
  { column: 'provider', key: 'provider', type: 'text' },
  { column: 'error_code', key: 'errorCode', type: 'text' },
  { column: 'truncated', key: 'truncated', type: 'boolean' },
  { column: 'cached_prompt_tokens', key: 'cachedPromptTokens', type: 'int' },
  { column: 'cost', key: 'cost', type: 'float8' },
];

/**
 * A batch written twice (a retried flush) adds no audit record twice: a record's (org_id, at, id) is
 * unique, with or without an organization (schema.ts, migration 3). Only the records inserted count in
 * the day totals (RETURNING leaves out those skipped), and only those carrying a call's own usage.
 */
const INSERT_AUDIT_RETURNING = insertFromJson('audit_records', AUDIT_COLUMNS, 1, `ON CONFLICT (org_id, at, id) DO NOTHING RETURNING ${CALL_COLUMNS}`);
const AUDIT_CALLS = `SELECT *, 1 AS requests FROM audit WHERE prompt_tokens IS NOT NULL`;

/** A batch of audit records ($1) and its day totals, in one statement. */
const INSERT_AUDIT = `WITH audit AS (${INSERT_AUDIT_RETURNING})
${addDayTotals(AUDIT_CALLS)}`;

const UNIQUE_VIOLATION = '23505';

/**
 * Audit ($1) and usage ($2) records of one batch and their day totals in one statement (a
 * data-modifying WITH): one round trip, one commit, and the totals never apart from the records.
 */
const INSERT_AUDIT_AND_USAGE = `WITH usage AS (${insertUsageStatement(2, `RETURNING ${CALL_COLUMNS}`)}),
  audit AS (${INSERT_AUDIT_RETURNING})
${addDayTotals(`${AUDIT_CALLS} UNION ALL SELECT *, 1 AS requests FROM usage`)}`;

/** Rows per statement: bounds the size of one JSON parameter. */
const BATCH = 1000;

/** `[]`: an empty JSON array text. */
const isEmptyArray = (json: Buffer): boolean => json.length <= 2;

/**
 * The audit page, read in its order from the listing index (schema.ts, migration 19). Unfiltered, the
 * index gives the rows in order. Filtered, the page's keys come first from the index alone (it carries
 * user, key, operation, model and status: an index-only walk that skips other calls without reading
 * the table), then its rows by those keys. A status class is a literal (a validated integer) matching
 * the expression index `(status / 100)`; an error class or status also states `status >= 400`, the
 * partial index's predicate, which error pages read instead.
 */
function auditListSql(query: AuditQuery): { text: string; params: SqlParam[] } {
  const params: SqlParam[] = [query.orgId];
  const add = (value: SqlParam): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = ['org_id = $1'];
  if (query.since) where.push(`at >= ${add(query.since)}::timestamptz`);
  if (query.until) where.push(`at <= ${add(query.until)}::timestamptz`);
  if (query.userId) where.push(`user_id = ${add(query.userId)}`);
  if (query.keyId) where.push(`key_id = ${add(query.keyId)}`);
  if (query.operationId) where.push(`operation_id = ${add(query.operationId)}`);
  if (query.model) where.push(`model = ${add(query.model)}`);
  const status = query.status;
  if (status) {
    const from = Math.trunc(status.from);
    const to = Math.trunc(status.to);
    const cls = Math.floor(from / 100);
    if (Number.isInteger(cls) && cls === Math.floor(to / 100) && cls >= 1 && cls <= 5) {
      where.push(`(status / 100) = ${cls}`);
      if (cls >= 4) where.push('status >= 400');
    }
    where.push(from === to ? `status = ${add(from)}` : `status BETWEEN ${add(from)} AND ${add(to)}`);
  }
  const desc = query.order === 'desc';
  if (query.after) where.push(`(at, id) ${desc ? '<' : '>'} (${add(query.after.at)}::timestamptz, ${add(query.after.id)}::text)`);
  const direction = desc ? 'DESC' : 'ASC';
  const order = `ORDER BY at ${direction}, id ${direction}`;
  const page = `FROM audit_records WHERE ${where.join(' AND ')} ${order} LIMIT ${add(query.limit)}`;
  const filtered = Boolean(query.userId || query.keyId || query.operationId || query.model || status);
  if (!filtered) return { text: `SELECT * ${page}`, params };
  const text = `SELECT a.* FROM (SELECT at, id ${page}) p
    JOIN audit_records a ON a.org_id = $1 AND a.at = p.at AND a.id = p.id
    ORDER BY a.at ${direction}, a.id ${direction}`;
  return { text, params };
}

export function sqlAudit(db: SqlExecutor): AuditRepository {
  return {
    async insertMany(records, usage = []) {
      if (usage.length > 0 && usage.length <= USAGE_BATCH && records.length <= BATCH) {
        await db.query(INSERT_AUDIT_AND_USAGE, [JSON.stringify(records), JSON.stringify(usage)]);
        return;
      }
      // Ids are unique: a batch retried after a failed flush does not duplicate records.
      for (let start = 0; start < records.length; start += BATCH) {
        const batch = start === 0 && records.length <= BATCH ? records : records.slice(start, start + BATCH);
        await db.query(INSERT_AUDIT, [JSON.stringify(batch)]);
      }
      await insertUsage(db, usage);
    },
    async insertJson({ audit, usage }) {
      if (db.copyJsonRows) {
        try {
          // The day totals in the same transaction: the database's process sums the loaded rows per day.
          await db.copyJsonRows(
            [
              { table: 'audit_records', columns: AUDIT_COLUMNS, json: audit, usage: true },
              { table: 'usage_records', columns: USAGE_COLUMNS, json: usage, usage: true },
            ],
            ADD_DAY_TOTALS_JSON,
          );
          return;
        } catch (err) {
          // A batch retried after its first write did land after all: COPY has no ON CONFLICT, the
          // statements below skip the records already there.
          if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
        }
      }
      // The texts go to the server as they are: one statement for both kinds, or one for the kind present.
      if (isEmptyArray(usage)) {
        if (!isEmptyArray(audit)) await db.query(INSERT_AUDIT, [new JsonBytes(audit)]);
      } else if (isEmptyArray(audit)) await db.query(INSERT_USAGE, [new JsonBytes(usage)]);
      else await db.query(INSERT_AUDIT_AND_USAGE, [new JsonBytes(audit), new JsonBytes(usage)]);
    },
    async list(query) {
      const { text, params } = auditListSql(query);
      const rows = await db.query<AuditRow>(text, params);
      return rows.map(toAudit);
    },
  };
}
