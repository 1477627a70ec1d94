import type { Role } from '../../config/types';
import type { UserRepository } from '../port';
import type { UserRecord } from '../types';
import type { SqlExecutor } from './database';

export interface UserRow {
  id: string;
  org_id: string;
  name: string;
  role: Role;
}

export function toUser(row: UserRow): UserRecord {
  return { id: row.id, orgId: row.org_id, name: row.name, role: row.role };
}

/**
 * The select list that brings a credential's user (joined as `u`) and the user's groups in the same
 * round trip as the credential: an API key and a console session resolve to the same principal shape.
 */
export const PRINCIPAL_COLUMNS = `u.id AS u_id, u.org_id AS u_org_id, u.name AS u_name, u.role AS u_role,
  ARRAY(SELECT g.id FROM groups g WHERE g.org_id = u.org_id AND g.members @> jsonb_build_array(u.id) ORDER BY g.id) AS group_ids`;

export interface PrincipalRow {
  u_id: string;
  u_org_id: string;
  u_name: string;
  u_role: Role;
  group_ids: string[];
}

export function toPrincipal(row: PrincipalRow): { user: UserRecord; groups: string[] } {
  return { user: toUser({ id: row.u_id, org_id: row.u_org_id, name: row.u_name, role: row.u_role }), groups: row.group_ids };
}

export function sqlUsers(db: SqlExecutor): UserRepository {
  return {
    async upsert(user) {
      await db.query(
        `INSERT INTO users (id, org_id, name, role) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET org_id = EXCLUDED.org_id, name = EXCLUDED.name, role = EXCLUDED.role`,
        [user.id, user.orgId, user.name, user.role],
      );
    },
    async get(id) {
      const [row] = await db.query<UserRow>('SELECT * FROM users WHERE id = $1', [id]);
      return row ? toUser(row) : null;
    },
    async listByOrg(orgId) {
      return (await db.query<UserRow>('SELECT * FROM users WHERE org_id = $1 ORDER BY id', [orgId])).map(toUser);
    },
    async count() {
      const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM users');
      return row?.n ?? 0;
    },
  };
}
