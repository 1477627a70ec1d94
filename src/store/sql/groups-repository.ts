import type { GroupRepository } from '../port';
import type { GroupRecord } from '../types';
import type { SqlExecutor } from './database';
import { json } from './rows';

interface GroupRow {
  org_id: string;
  id: string;
  name: string;
  members: string[];
}

function toGroup(row: GroupRow): GroupRecord {
  return { id: row.id, orgId: row.org_id, name: row.name, members: row.members };
}

export function sqlGroups(db: SqlExecutor): GroupRepository {
  return {
    async upsert(group) {
      await db.query(
        `INSERT INTO groups (org_id, id, name, members) VALUES ($1, $2, $3, $4::jsonb)
         ON CONFLICT (org_id, id) DO UPDATE SET name = EXCLUDED.name, members = EXCLUDED.members`,
        [group.orgId, group.id, group.name, json(group.members)],
      );
    },
    async listByOrg(orgId) {
      return (await db.query<GroupRow>('SELECT * FROM groups WHERE org_id = $1 ORDER BY id', [orgId])).map(toGroup);
    },
    async groupIdsOf(orgId, userId) {
      const rows = await db.query<{ id: string }>('SELECT id FROM groups WHERE org_id = $1 AND members @> jsonb_build_array($2::text) ORDER BY id', [
        orgId,
        userId,
      ]);
      return rows.map((r) => r.id);
    },
  };
}
