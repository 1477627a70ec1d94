import type { UsageRepository } from '../port';
import type { UsageRecord } from '../types';
import { insertFromJson, type JsonCopyColumn, type SqlExecutor } from './database';

/** usage_records' columns and the UsageRecord properties they come from. */
export const USAGE_COLUMNS: readonly JsonCopyColumn[] = [
  { column: 'at', key: 'at', type: 'timestamptz' },
  { column: 'org_id', key: 'orgId', type: 'text' },
  { column: 'user_id', key: 'userId', type: 'text' },
  { column: 'key_id', key: 'keyId', type: 'text' },
  { column: 'model', key: 'model', type: 'text' },
  { column: 'prompt_tokens', key: 'promptTokens', type: 'int' },
  { column: 'completion_tokens', key: 'completionTokens', type: 'int' },
  { column: 'request_id', key: 'requestId', type: 'text' },
];

/** The usage records as one JSON parameter, `$param` (the audit repository embeds it in its own statement). */
export function insertUsageStatement(param: number): string {
  return insertFromJson('usage_records', USAGE_COLUMNS, param);
}

export const INSERT_USAGE = insertUsageStatement(1);

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
      // A call's usage is in its audit record when it made one upstream call, else in usage records. An
      // audit record names the model of a failed call too: only one with token counts carries usage.
      return db.query<{ model: string; requests: number; promptTokens: number; completionTokens: number }>(
        `SELECT model, count(*)::int AS requests, sum(prompt_tokens)::float8 AS "promptTokens", sum(completion_tokens)::float8 AS "completionTokens"
         FROM (
           SELECT model, prompt_tokens, completion_tokens FROM audit_records
            WHERE org_id = $1 AND prompt_tokens IS NOT NULL AND ($2::timestamptz IS NULL OR at >= $2::timestamptz)
           UNION ALL
           SELECT model, prompt_tokens, completion_tokens FROM usage_records
            WHERE org_id = $1 AND ($2::timestamptz IS NULL OR at >= $2::timestamptz)
         ) calls
         GROUP BY model ORDER BY model`,
        [orgId, since],
      );
    },
  };
}
