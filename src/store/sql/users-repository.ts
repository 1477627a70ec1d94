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
