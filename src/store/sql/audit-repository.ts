import type { AuditRepository } from '../port';
import type { AuditRecord } from '../types';
import type { SqlExecutor, SqlParam } from './database';
import { iso, json, type Timestamp } from './rows';

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

/** Rows per INSERT statement: keeps the parameter count far below PostgreSQL's 65535 limit. */
const BATCH = 500;

export function sqlAudit(db: SqlExecutor): AuditRepository {
  return {
    async insertMany(records) {
      for (let start = 0; start < records.length; start += BATCH) {
        const params: SqlParam[] = [];
        const values = records.slice(start, start + BATCH).map((r) => {
          params.push(r.id, r.at, r.orgId, r.userId, r.keyId, r.method, r.route, r.operationId, json(r.resourceIds), r.status, r.latencyMs, r.requestId);
          const b = params.length - 12;
          return `($${b + 1}::text, $${b + 2}::timestamptz, $${b + 3}::text, $${b + 4}::text, $${b + 5}::text, $${b + 6}::text, $${b + 7}::text,
            $${b + 8}::text, $${b + 9}::jsonb, $${b + 10}::int, $${b + 11}::float8, $${b + 12}::text)`;
        });
        // Ids are unique: a batch retried after a failed flush does not duplicate records.
        await db.query(
          `INSERT INTO audit_records (id, at, org_id, user_id, key_id, method, route, operation_id, resource_ids, status, latency_ms, request_id)
           VALUES ${values.join(', ')} ON CONFLICT (id) DO NOTHING`,
          params,
        );
      }
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
