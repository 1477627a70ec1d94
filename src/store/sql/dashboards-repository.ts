import type { DashboardRepository } from '../port';
import type { DashboardRecord, DashboardSummary } from '../tool-records';
import type { SqlDatabase } from './database';
import { iso, json, type Timestamp } from './rows';

interface SummaryRow {
  id: string;
  org_id: string;
  title: string;
  version: number;
  created_by: string | null;
  conversation_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

interface DashboardRow extends SummaryRow {
  spec: Record<string, unknown>;
  data: Record<string, unknown>[];
}

const SUMMARY_COLUMNS = 'id, org_id, title, version, created_by, conversation_id, created_at, updated_at';
const COLUMNS = `${SUMMARY_COLUMNS}, spec, data`;

function toSummary(row: SummaryRow): DashboardSummary {
  return {
    id: row.id,
    orgId: row.org_id,
    title: row.title,
    version: row.version,
    createdBy: row.created_by,
    conversationId: row.conversation_id,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

function toDashboard(row: DashboardRow): DashboardRecord {
  return { ...toSummary(row), spec: row.spec, data: row.data };
}

export function sqlDashboards(db: SqlDatabase): DashboardRepository {
  return {
    async create(d) {
      await db.query(
        `INSERT INTO dashboards (id, org_id, title, spec, data, version, created_by, conversation_id, created_at, updated_at)
         VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8, $9::timestamptz, $10::timestamptz)`,
        [d.id, d.orgId, d.title, json(d.spec), json(d.data), d.version, d.createdBy, d.conversationId, d.createdAt, d.updatedAt],
      );
    },
    async get(id) {
      const [row] = await db.query<DashboardRow>(`SELECT ${COLUMNS} FROM dashboards WHERE id = $1`, [id]);
      return row ? toDashboard(row) : null;
    },
    async getInOrg(orgId, id) {
      const [row] = await db.query<DashboardRow>(`SELECT ${COLUMNS} FROM dashboards WHERE org_id = $1 AND id = $2`, [orgId, id]);
      return row ? toDashboard(row) : null;
    },
    async listByOrg(orgId, limit) {
      const rows = await db.query<SummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM dashboards WHERE org_id = $1 ORDER BY updated_at DESC, id LIMIT $2`, [
        orgId,
        limit,
      ]);
      return rows.map(toSummary);
    },
    async update(orgId, id, patch, whenVersion, at) {
      // COALESCE keeps what the patch leaves out; the version guard makes it compare-and-set.
      const [row] = await db.query<DashboardRow>(
        `UPDATE dashboards SET
           title = COALESCE($4, title),
           spec = COALESCE($5::jsonb, spec),
           data = COALESCE($6::jsonb, data),
           version = version + 1,
           updated_at = $7::timestamptz
         WHERE org_id = $1 AND id = $2 AND version = $3
         RETURNING ${COLUMNS}`,
        [
          orgId,
          id,
          whenVersion,
          patch.title ?? null,
          patch.spec === undefined ? null : json(patch.spec),
          patch.data === undefined ? null : json(patch.data),
          at,
        ],
      );
      return row ? toDashboard(row) : null;
    },
    async delete(orgId, id) {
      const rows = await db.query<{ id: string }>('DELETE FROM dashboards WHERE org_id = $1 AND id = $2 RETURNING id', [orgId, id]);
      return rows.length > 0;
    },
  };
}
