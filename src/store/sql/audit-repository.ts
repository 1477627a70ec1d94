import type { AuditRepository } from '../port';
import type { AuditRecord } from '../types';
import { JsonBytes, type JsonCopyColumn, type SqlExecutor } from './database';
import { insertUsage, insertUsageStatement, INSERT_USAGE, USAGE_BATCH, USAGE_COPY_COLUMNS } from './usage-repository';
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
  };
}

/**
 * One fixed statement whatever the batch size: the records travel as one JSON text parameter and are
 * expanded server-side by json_to_recordset (keys are the record's own property names), so the server
 * parses and plans the same text every time instead of a new VALUES list with 12 parameters per row.
 */
const INSERT_AUDIT = `INSERT INTO audit_records (id, at, org_id, user_id, key_id, method, route, operation_id, resource_ids, status, latency_ms, request_id)
  SELECT x.id, x.at, x."orgId", x."userId", x."keyId", x.method, x.route, x."operationId", COALESCE(x."resourceIds", '{}'::jsonb), x.status, x."latencyMs", x."requestId"
  FROM json_to_recordset($1::json) AS x(id text, at timestamptz, "orgId" text, "userId" text, "keyId" text, method text, route text,
    "operationId" text, "resourceIds" jsonb, status int, "latencyMs" float8, "requestId" text)
  ON CONFLICT (id) DO NOTHING`;

const UNIQUE_VIOLATION = '23505';

/** The same mapping as INSERT_AUDIT's, for a driver's bulk load. */
const AUDIT_COPY_COLUMNS: readonly JsonCopyColumn[] = [
  { column: 'id', key: 'id' },
  { column: 'at', key: 'at' },
  { column: 'org_id', key: 'orgId' },
  { column: 'user_id', key: 'userId' },
  { column: 'key_id', key: 'keyId' },
  { column: 'method', key: 'method' },
  { column: 'route', key: 'route' },
  { column: 'operation_id', key: 'operationId' },
  { column: 'resource_ids', key: 'resourceIds', json: true, fallback: '{}' },
  { column: 'status', key: 'status' },
  { column: 'latency_ms', key: 'latencyMs' },
  { column: 'request_id', key: 'requestId' },
];

/** Audit and usage records of one batch in one statement (a data-modifying WITH): one round trip, one commit. */
const INSERT_AUDIT_AND_USAGE = `WITH usage AS (${insertUsageStatement(2)}) ${INSERT_AUDIT}`;

/** Rows per statement: bounds the size of one JSON parameter. */
const BATCH = 1000;

/** `[]`: an empty JSON array text. */
const isEmptyArray = (json: Buffer): boolean => json.length <= 2;

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
          await db.copyJsonRows([
            { table: 'audit_records', columns: AUDIT_COPY_COLUMNS, json: audit },
            { table: 'usage_records', columns: USAGE_COPY_COLUMNS, json: usage },
          ]);
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
      const rows = await db.query<AuditRow>(
        `SELECT * FROM audit_records WHERE org_id = $1
           AND ($2::timestamptz IS NULL OR at >= $2::timestamptz)
           AND ($3::timestamptz IS NULL OR (at, id) > ($3::timestamptz, $4::text))
         ORDER BY at, id LIMIT $5`,
        [query.orgId, query.since, query.after?.at ?? null, query.after?.id ?? '', query.limit],
      );
      return rows.map(toAudit);
    },
  };
}
