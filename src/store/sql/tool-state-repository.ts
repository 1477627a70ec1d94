import type { ToolStateRepository } from '../port';
import type { SqlExecutor } from './database';

export function sqlToolState(db: SqlExecutor): ToolStateRepository {
  return {
    async get(orgId, conversationId, key) {
      const [row] = await db.query<{ value: string }>('SELECT value FROM tool_state WHERE conversation_id = $1 AND org_id = $2 AND key = $3', [
        conversationId,
        orgId,
        key,
      ]);
      return row?.value ?? null;
    },
    async set(orgId, conversationId, key, value, updatedAt) {
      await db.query(
        `INSERT INTO tool_state (conversation_id, org_id, key, value, updated_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (conversation_id, org_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
        [conversationId, orgId, key, value, updatedAt],
      );
    },
    async delete(orgId, conversationId, key) {
      const rows = await db.query<{ key: string }>('DELETE FROM tool_state WHERE conversation_id = $1 AND org_id = $2 AND key = $3 RETURNING key', [
        conversationId,
        orgId,
        key,
      ]);
      return rows.length > 0;
    },
    async forget(conversationId, key) {
      const rows =
        key === undefined
          ? await db.query<{ key: string }>('DELETE FROM tool_state WHERE conversation_id = $1 RETURNING key', [conversationId])
          : await db.query<{ key: string }>('DELETE FROM tool_state WHERE conversation_id = $1 AND key = $2 RETURNING key', [conversationId, key]);
      return rows.length;
    },
  };
}
