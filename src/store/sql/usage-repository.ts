import type { UsageRepository } from '../port';
import type { UsageGroup, UsageGroupRow, UsageQuery, UsageRecord } from '../types';
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
  { column: 'cached_prompt_tokens', key: 'cachedPromptTokens', type: 'int' },
  { column: 'cost', key: 'cost', type: 'float8' },
];

/** Each group's select expression, named as the row property (buckets are UTC, whatever the session's zone). */
const GROUP_EXPRESSIONS: Record<UsageGroup, string> = {
  day: `to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day`,
  month: `to_char(at AT TIME ZONE 'UTC', 'YYYY-MM') AS month`,
  model: 'model',
  user: 'user_id AS "userId"',
  key: 'key_id AS "keyId"',
};
const GROUP_NAMES: Record<UsageGroup, string> = { day: 'day', month: 'month', model: 'model', user: '"userId"', key: '"keyId"' };

/**
 * The usage of a query's calls: a call's own usage is in its audit record (those with token counts),
 * other usage in usage_records. Each side is read through its (org_id, at) index; the optional filters
 * are parameters, so the statement text depends only on the grouping.
 */
function usageCalls(where: string): string {
  const columns = 'at, model, user_id, key_id, prompt_tokens, cached_prompt_tokens, completion_tokens, cost';
  return `SELECT ${columns} FROM audit_records WHERE org_id = $1 AND at >= $2::timestamptz AND at < $3::timestamptz AND prompt_tokens IS NOT NULL${where}
   UNION ALL
   SELECT ${columns} FROM usage_records WHERE org_id = $1 AND at >= $2::timestamptz AND at < $3::timestamptz${where}`;
}

export function usageQueryStatement(groupBy: readonly UsageGroup[]): string {
  const filters = ` AND ($4::text IS NULL OR user_id = $4) AND ($5::text IS NULL OR key_id = $5) AND ($6::text IS NULL OR model = $6)`;
  const groups = groupBy.map((g) => GROUP_EXPRESSIONS[g]);
  const names = groupBy.map((g) => GROUP_NAMES[g]);
  return `SELECT ${[...groups, ''].join(', ')}count(*)::int AS requests, coalesce(sum(prompt_tokens), 0)::float8 AS "promptTokens",
     coalesce(sum(cached_prompt_tokens), 0)::float8 AS "cachedPromptTokens", coalesce(sum(completion_tokens), 0)::float8 AS "completionTokens",
     coalesce(sum(cost), 0)::float8 AS cost
   FROM (${usageCalls(filters)}) calls
   ${names.length > 0 ? `GROUP BY ${names.join(', ')} ORDER BY ${names.map((n) => `${n} NULLS FIRST`).join(', ')}` : ''}
   LIMIT $7`;
}

/** Tokens and cost of the organization, a user and a key since a time: one pass over the organization's records. */
const SPENT = `SELECT coalesce(sum(prompt_tokens + completion_tokens), 0)::float8 AS "orgTokens", coalesce(sum(cost), 0)::float8 AS "orgCost",
    coalesce(sum(prompt_tokens + completion_tokens) FILTER (WHERE user_id = $4), 0)::float8 AS "userTokens",
    coalesce(sum(cost) FILTER (WHERE user_id = $4), 0)::float8 AS "userCost",
    coalesce(sum(prompt_tokens + completion_tokens) FILTER (WHERE key_id = $5), 0)::float8 AS "keyTokens",
    coalesce(sum(cost) FILTER (WHERE key_id = $5), 0)::float8 AS "keyCost"
  FROM (${usageCalls('')}) calls`;

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
    async query(query: UsageQuery) {
      const rows = await db.query<UsageGroupRow>(usageQueryStatement(query.groupBy), [
        query.orgId,
        query.since,
        query.until,
        query.userId ?? null,
        query.keyId ?? null,
        query.model ?? null,
        query.limit,
      ]);
      return rows;
    },
    async spent(orgId, userId, keyId, since) {
      // Far future as the end: the budget period runs to now (records are never written ahead of time).
      const [row] = await db.query<Record<'orgTokens' | 'orgCost' | 'userTokens' | 'userCost' | 'keyTokens' | 'keyCost', number>>(SPENT, [
        orgId,
        since,
        '9999-12-31T00:00:00Z',
        userId,
        keyId,
      ]);
      return {
        organization: { tokens: row?.orgTokens ?? 0, cost: row?.orgCost ?? 0 },
        user: { tokens: userId === null ? 0 : (row?.userTokens ?? 0), cost: userId === null ? 0 : (row?.userCost ?? 0) },
        key: { tokens: keyId === null ? 0 : (row?.keyTokens ?? 0), cost: keyId === null ? 0 : (row?.keyCost ?? 0) },
      };
    },
  };
}
