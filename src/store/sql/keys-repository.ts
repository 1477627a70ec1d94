import type { KeyRepository } from '../port';
import type { ApiKeyRecord, BudgetSpec, KeySource } from '../types';
import type { SqlExecutor } from './database';
import { iso, isoOrNull, json, type Timestamp } from './rows';
import { PRINCIPAL_COLUMNS, toPrincipal, type PrincipalRow } from './users-repository';

interface KeyRow {
  id: string;
  org_id: string;
  user_id: string;
  name: string;
  hash: string;
  prefix: string;
  source: KeySource;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
  expires_at: Timestamp | null;
  models: string[] | null;
  budgets: BudgetSpec[];
}

function toKey(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    userId: row.user_id,
    name: row.name,
    hash: row.hash,
    prefix: row.prefix,
    source: row.source,
    createdAt: iso(row.created_at),
    lastUsedAt: isoOrNull(row.last_used_at),
    revokedAt: isoOrNull(row.revoked_at),
    expiresAt: isoOrNull(row.expires_at),
    models: row.models,
    budgets: row.budgets,
  };
}

const KEY_COLUMNS =
  'k.id, k.org_id, k.user_id, k.name, k.hash, k.prefix, k.source, k.created_at, k.last_used_at, k.revoked_at, k.expires_at, k.models, k.budgets';

export function sqlKeys(db: SqlExecutor): KeyRepository {
  return {
    async create(key) {
      const rows = await db.query(
        `INSERT INTO api_keys (id, org_id, user_id, name, hash, prefix, source, created_at, last_used_at, revoked_at, expires_at, models, budgets)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13::jsonb) ON CONFLICT DO NOTHING RETURNING id`,
        [
          key.id,
          key.orgId,
          key.userId,
          key.name,
          key.hash,
          key.prefix,
          key.source,
          key.createdAt,
          key.lastUsedAt,
          key.revokedAt,
          key.expiresAt,
          key.models === null ? null : json(key.models),
          json(key.budgets),
        ],
      );
      return rows.length === 1;
    },
    async resolve(hash) {
      // One round trip on the auth path: the key, its user and the user's groups.
      const [row] = await db.query<KeyRow & PrincipalRow>(
        `SELECT ${KEY_COLUMNS}, ${PRINCIPAL_COLUMNS}
         FROM api_keys k JOIN users u ON u.id = k.user_id
         WHERE k.hash = $1 AND k.revoked_at IS NULL`,
        [hash],
      );
      return row ? { key: toKey(row), ...toPrincipal(row) } : null;
    },
    async get(id) {
      const [row] = await db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.id = $1`, [id]);
      return row ? toKey(row) : null;
    },
    async revoke(id, at) {
      const rows = await db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING id', [id, at]);
      return rows.length === 1;
    },
    async listByOrg(orgId) {
      const rows = await db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.org_id = $1 ORDER BY k.created_at, k.id`, [orgId]);
      return rows.map(toKey);
    },
    async list(query, limit) {
      // api_keys_org_user serves one user's keys; api_keys_org the organization's.
      const rows = await db.query<KeyRow>(
        `SELECT ${KEY_COLUMNS} FROM api_keys k
         WHERE k.org_id = $1 AND ($2::text IS NULL OR k.user_id = $2::text) AND ($3::boolean OR k.revoked_at IS NULL)
         ORDER BY k.created_at, k.id LIMIT $4`,
        [query.orgId, query.userId, query.includeRevoked, limit],
      );
      return rows.map(toKey);
    },
    async touch(ids, at) {
      if (ids.length === 0) return;
      // GREATEST keeps the latest use when batches from several processes arrive out of order.
      await db.query(`UPDATE api_keys SET last_used_at = GREATEST(COALESCE(last_used_at, $2::timestamptz), $2::timestamptz) WHERE id = ANY($1::text[])`, [
        ids,
        at,
      ]);
    },
    async countActive() {
      const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE revoked_at IS NULL');
      return row?.n ?? 0;
    },
    async revokedSince(since) {
      const rows = await db.query<{ id: string }>('SELECT id FROM api_keys WHERE revoked_at >= $1 ORDER BY revoked_at, id', [since]);
      return rows.map((r) => r.id);
    },
  };
}
