import type { UsageRepository } from '../port';
import type { UsageRecord } from '../types';
import type { JsonCopyColumn, SqlExecutor } from './database';

/**
 * One fixed statement whatever the batch size (see the audit repository): the records as one JSON
 * parameter, `$param`. The audit repository embeds it in its own statement to write both in one.
 */
export function insertUsageStatement(param: number): string {
  return `INSERT INTO usage_records (at, org_id, user_id, key_id, model, prompt_tokens, completion_tokens, request_id)
  SELECT x.at, x."orgId", x."userId", x."keyId", x.model, x."promptTokens", x."completionTokens", x."requestId"
  FROM json_to_recordset($${param}::json) AS x(at timestamptz, "orgId" text, "userId" text, "keyId" text, model text,
    "promptTokens" int, "completionTokens" int, "requestId" text)`;
}

export const INSERT_USAGE = insertUsageStatement(1);

/** The same mapping as insertUsageStatement's, for a driver's bulk load. */
export const USAGE_COPY_COLUMNS: readonly JsonCopyColumn[] = [
  { column: 'at', key: 'at' },
  { column: 'org_id', key: 'orgId' },
  { column: 'user_id', key: 'userId' },
  { column: 'key_id', key: 'keyId' },
  { column: 'model', key: 'model' },
  { column: 'prompt_tokens', key: 'promptTokens' },
  { column: 'completion_tokens', key: 'completionTokens' },
  { column: 'request_id', key: 'requestId' },
];

/** Rows per statement: bounds the size of one JSON parameter. */
export const USAGE_BATCH = 1000;

export async function insertUsage(db: SqlExecutor, records: readonly UsageRecord[]): Promise<void> {
  for (let start = 0; start < records.length; start += USAGE_BATCH) {
    const batch = start === 0 && records.length <= USAGE_BATCH ? records : records.slice(start, start + USAGE_BATCH);
    await db.query(INSERT_USAGE, [JSON.stringify(batch)]);
  }
}

export function sqlUsage(db: SqlExecutor): UsageRepository {
  return {
    insertMany: (records) => insertUsage(db, records),
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
