import type { UsageRepository } from '../port';
import type { SqlExecutor } from './database';

/** One fixed statement whatever the batch size (see the audit repository): records as one JSON parameter. */
const INSERT_USAGE = `INSERT INTO usage_records (at, org_id, user_id, key_id, model, prompt_tokens, completion_tokens, request_id)
  SELECT x.at, x."orgId", x."userId", x."keyId", x.model, x."promptTokens", x."completionTokens", x."requestId"
  FROM json_to_recordset($1::json) AS x(at timestamptz, "orgId" text, "userId" text, "keyId" text, model text,
    "promptTokens" int, "completionTokens" int, "requestId" text)`;

const BATCH = 1000;

export function sqlUsage(db: SqlExecutor): UsageRepository {
  return {
    async insertMany(records) {
      for (let start = 0; start < records.length; start += BATCH) {
        const batch = start === 0 && records.length <= BATCH ? records : records.slice(start, start + BATCH);
        await db.query(INSERT_USAGE, [JSON.stringify(batch)]);
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
