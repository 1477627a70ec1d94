import type { UsageRepository } from '../port';
import type { SqlExecutor, SqlParam } from './database';

const BATCH = 500;

export function sqlUsage(db: SqlExecutor): UsageRepository {
  return {
    async insertMany(records) {
      for (let start = 0; start < records.length; start += BATCH) {
        const params: SqlParam[] = [];
        const values = records.slice(start, start + BATCH).map((r) => {
          params.push(r.at, r.orgId, r.userId, r.keyId, r.model, r.promptTokens, r.completionTokens, r.requestId);
          const b = params.length - 8;
          return `($${b + 1}::timestamptz, $${b + 2}::text, $${b + 3}::text, $${b + 4}::text, $${b + 5}::text, $${b + 6}::int, $${b + 7}::int, $${b + 8}::text)`;
        });
        await db.query(
          `INSERT INTO usage_records (at, org_id, user_id, key_id, model, prompt_tokens, completion_tokens, request_id) VALUES ${values.join(', ')}`,
          params,
        );
      }
    },
    async totals(orgId, since) {
      // Sums are bigint in SQL; float8 brings them back as JS numbers from both drivers.
      return db.query<{ model: string; requests: number; promptTokens: number; completionTokens: number }>(
        `SELECT model, count(*)::int AS requests, sum(prompt_tokens)::float8 AS "promptTokens", sum(completion_tokens)::float8 AS "completionTokens"
         FROM usage_records WHERE org_id = $1 AND ($2::timestamptz IS NULL OR at >= $2::timestamptz)
         GROUP BY model ORDER BY model`,
        [orgId, since],
      );
    },
  };
}
