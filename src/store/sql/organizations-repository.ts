import type { OrganizationRepository } from '../port';
import type { OrganizationRecord } from '../types';
import type { SqlExecutor } from './database';
import { iso, json, nowIso, type Timestamp } from './rows';

interface OrganizationRow {
  id: string;
  name: string;
  models: string[];
  rate_limit: OrganizationRecord['rateLimit'];
  dlp: OrganizationRecord['dlp'];
  updated_at: Timestamp;
}

function toOrganization(row: OrganizationRow): OrganizationRecord {
  return { id: row.id, name: row.name, models: row.models, rateLimit: row.rate_limit, dlp: row.dlp, updatedAt: iso(row.updated_at) };
}

export function sqlOrganizations(db: SqlExecutor): OrganizationRepository {
  return {
    async upsert(org) {
      await db.query(
        `INSERT INTO organizations (id, name, models, rate_limit, dlp, updated_at)
         VALUES ($1, $2, $3::jsonb, $4::jsonb, $5::jsonb, $6)
         ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, models = EXCLUDED.models,
           rate_limit = EXCLUDED.rate_limit, dlp = EXCLUDED.dlp, updated_at = EXCLUDED.updated_at`,
        [org.id, org.name, json(org.models), json(org.rateLimit), json(org.dlp), nowIso()],
      );
    },
    async get(id) {
      const [row] = await db.query<OrganizationRow>('SELECT * FROM organizations WHERE id = $1', [id]);
      return row ? toOrganization(row) : null;
    },
    async list() {
      return (await db.query<OrganizationRow>('SELECT * FROM organizations ORDER BY id')).map(toOrganization);
    },
  };
}
