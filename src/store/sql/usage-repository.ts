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

/**
 * Each group's key as the parts of a usage query sum by it (`d`: the call's UTC day, for day and month
 * buckets), and its select expression over those keys, named as the row property.
 */
const GROUP_KEYS: Record<UsageGroup, { key: string; select: string }> = {
  day: { key: 'd', select: `to_char(d, 'YYYY-MM-DD') AS day` },
  month: { key: 'd', select: `to_char(d, 'YYYY-MM') AS month` },
  model: { key: 'model', select: 'model' },
  user: { key: 'user_id', select: 'user_id AS "userId"' },
  key: { key: 'key_id', select: 'key_id AS "keyId"' },
};
const GROUP_NAMES: Record<UsageGroup, string> = { day: 'day', month: 'month', model: 'model', user: '"userId"', key: '"keyId"' };

/** The columns a call's usage is summed from, the same on audit_records and usage_records. */
export const CALL_COLUMNS = 'at, org_id, user_id, key_id, model, prompt_tokens, cached_prompt_tokens, completion_tokens, cost';

/**
 * Adds calls to the per-UTC-day totals (usage_day_totals, schema.ts migration 17): `source` is a query
 * with CALL_COLUMNS and `requests` (calls per row); rows without an organization count nowhere. One
 * GROUP BY over the batch, so one upsert per (org, day, model, user, key) it touches, not one per call.
 */
export function addDayTotals(source: string): string {
  return `INSERT INTO usage_day_totals AS t (org_id, day, model, user_id, key_id, requests, prompt_tokens, cached_prompt_tokens, completion_tokens, cost)
  SELECT org_id, (at AT TIME ZONE 'UTC')::date, model, user_id, key_id, sum(requests), coalesce(sum(prompt_tokens), 0),
    coalesce(sum(cached_prompt_tokens), 0), coalesce(sum(completion_tokens), 0), coalesce(sum(cost), 0)
  FROM (${source}) calls WHERE org_id IS NOT NULL
  GROUP BY 1, 2, 3, 4, 5
  ON CONFLICT (org_id, day, model, user_id, key_id) DO UPDATE SET requests = t.requests + EXCLUDED.requests,
    prompt_tokens = t.prompt_tokens + EXCLUDED.prompt_tokens, cached_prompt_tokens = t.cached_prompt_tokens + EXCLUDED.cached_prompt_tokens,
    completion_tokens = t.completion_tokens + EXCLUDED.completion_tokens, cost = t.cost + EXCLUDED.cost`;
}

/** The calls of the raw rows (a call's own usage in its audit record, the rest in usage_records), `condition` on both. */
function rawCalls(condition: string): string {
  return `SELECT ${CALL_COLUMNS}, 1 AS requests FROM audit_records WHERE prompt_tokens IS NOT NULL AND ${condition}
   UNION ALL
   SELECT ${CALL_COLUMNS}, 1 AS requests FROM usage_records WHERE ${condition}`;
}

/** Fills the day totals from every raw record (the migration, and a seeded database). */
export const BACKFILL_USAGE_DAY_TOTALS = addDayTotals(rawCalls('true'));

/**
 * The embedded bulk load's totals (pglite-process.ts, copyJsonRows): the batch is summed per
 * (org, day, model, user, key) in the database's process and arrives as one JSON parameter of groups.
 */
export const ADD_DAY_TOTALS_JSON = addDayTotals(
  `SELECT x.day::timestamp AT TIME ZONE 'UTC' AS at, x."orgId" AS org_id, x."userId" AS user_id, x."keyId" AS key_id, x.model,
     x."promptTokens" AS prompt_tokens, x."cachedPromptTokens" AS cached_prompt_tokens, x."completionTokens" AS completion_tokens, x.cost, x.requests
   FROM json_to_recordset($1::json) AS x(day date, "orgId" text, "userId" text, "keyId" text, model text, requests bigint,
     "promptTokens" bigint, "cachedPromptTokens" bigint, "completionTokens" bigint, cost float8)`,
);

const DAY_MS = 86_400_000;

/**
 * The whole UTC days inside [since, until): from the first midnight at or after `since` to the last at
 * or before `until`; null when the window holds no whole day.
 */
export function wholeDays(since: string, until: string): { from: Date; to: Date } | null {
  const from = Math.ceil(Date.parse(since) / DAY_MS) * DAY_MS;
  const to = Math.floor(Date.parse(until) / DAY_MS) * DAY_MS;
  return from < to ? { from: new Date(from), to: new Date(to) } : null;
}

const dayOf = (midnight: Date): string => midnight.toISOString().slice(0, 10);

const FILTERS = `($4::text IS NULL OR user_id = $4) AND ($5::text IS NULL OR key_id = $5) AND ($6::text IS NULL OR model = $6)`;

const TOKEN_SUMS = `sum(prompt_tokens) AS prompt_tokens, sum(cached_prompt_tokens) AS cached_prompt_tokens,
  sum(completion_tokens) AS completion_tokens, sum(cost) AS cost`;
/** A raw part counts its rows as calls; the day totals carry their calls in `requests`. */
const RAW_SUMS = `count(*) AS requests, ${TOKEN_SUMS}`;
const TOTAL_SUMS = `sum(requests) AS requests, ${TOKEN_SUMS}`;

/**
 * The parts of a usage query, each summed by the query's group keys where it is read. Without a whole
 * day in the window: the raw rows of [since, until) ($2, $3). With: the day totals of days [$10, $11),
 * and the raw rows of the partial days around them, [since, $8) and [$9, until) (empty ranges when the
 * window starts or ends at midnight). Each part is read through its (org_id, at|day) index; the filters
 * are parameters, so the text depends only on the grouping and on whether the window holds a whole day.
 * Summing inside each part leaves the outer aggregate a few rows per bucket, and formats a bucket's day
 * once, not once per record: an admin's 30 days by day and model (~29,000 day-total rows and ~10,000
 * raw ones in the list bench's database) went from 115-122 to 73-80 ms in PostgreSQL.
 */
function usageParts(keys: readonly string[], days: boolean): string {
  // The keys as the part's first columns (`day`: its expression for the UTC day), each followed by a comma.
  const columns = (day: string): string => keys.map((k) => `${k === 'd' ? `${day} AS d` : k}, `).join('');
  const groupBy = keys.length > 0 ? ` GROUP BY ${keys.map((_, i) => i + 1).join(', ')}` : '';
  const rawDay = `(at AT TIME ZONE 'UTC')::date`;
  const raw = (lo: string, hi: string): string => {
    const range = `org_id = $1 AND at >= ${lo}::timestamptz AND at < ${hi}::timestamptz AND ${FILTERS}`;
    return `SELECT ${columns(rawDay)}${RAW_SUMS} FROM audit_records WHERE prompt_tokens IS NOT NULL AND ${range}${groupBy}
   UNION ALL
   SELECT ${columns(rawDay)}${RAW_SUMS} FROM usage_records WHERE ${range}${groupBy}`;
  };
  if (!days) return raw('$2', '$3');
  return `${raw('$2', '$8')}
   UNION ALL
   SELECT ${columns('day')}${TOTAL_SUMS} FROM usage_day_totals WHERE org_id = $1 AND day >= $10::date AND day < $11::date AND ${FILTERS}${groupBy}
   UNION ALL
   ${raw('$9', '$3')}`;
}

export function usageQueryStatement(groupBy: readonly UsageGroup[], days = false): string {
  const keys = [...new Set(groupBy.map((g) => GROUP_KEYS[g].key))];
  const selects = groupBy.map((g) => GROUP_KEYS[g].select);
  const names = groupBy.map((g) => GROUP_NAMES[g]);
  return `SELECT ${[...selects, ''].join(', ')}coalesce(sum(requests), 0)::int AS requests, coalesce(sum(prompt_tokens), 0)::float8 AS "promptTokens",
     coalesce(sum(cached_prompt_tokens), 0)::float8 AS "cachedPromptTokens", coalesce(sum(completion_tokens), 0)::float8 AS "completionTokens",
     coalesce(sum(cost), 0)::float8 AS cost
   FROM (${usageParts(keys, days)}) calls
   ${names.length > 0 ? `GROUP BY ${names.join(', ')} ORDER BY ${names.map((n) => `${n} NULLS FIRST`).join(', ')}` : ''}
   LIMIT $7`;
}

/**
 * Tokens and cost of the organization, a user and a key since a time: the day totals from the first
 * midnight at or after it ($6, a date; budget periods start at one, so that is all of them), and the
 * raw rows of [since, that midnight) ($2, $3) when the period does not start at midnight.
 */
const SPENT = `SELECT coalesce(sum(tokens), 0)::float8 AS "orgTokens", coalesce(sum(cost), 0)::float8 AS "orgCost",
    coalesce(sum(tokens) FILTER (WHERE user_id = $4), 0)::float8 AS "userTokens",
    coalesce(sum(cost) FILTER (WHERE user_id = $4), 0)::float8 AS "userCost",
    coalesce(sum(tokens) FILTER (WHERE key_id = $5), 0)::float8 AS "keyTokens",
    coalesce(sum(cost) FILTER (WHERE key_id = $5), 0)::float8 AS "keyCost"
  FROM (
    SELECT user_id, key_id, coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0) AS tokens, cost
      FROM (${rawCalls('org_id = $1 AND at >= $2::timestamptz AND at < $3::timestamptz')}) raw
    UNION ALL
    SELECT user_id, key_id, prompt_tokens + completion_tokens, cost FROM usage_day_totals WHERE org_id = $1 AND day >= $6::date
  ) calls`;

/** The usage records as one JSON parameter, `$param` (the audit repository embeds it in its own statement). */
export function insertUsageStatement(param: number, suffix = ''): string {
  return insertFromJson('usage_records', USAGE_COLUMNS, param, suffix);
}

/** A batch of usage records ($1) and its day totals, in one statement. */
export const INSERT_USAGE = `WITH usage AS (${insertUsageStatement(1, `RETURNING ${CALL_COLUMNS}`)})
${addDayTotals('SELECT *, 1 AS requests FROM usage')}`;

/** Rows per statement: bounds the size of one JSON parameter. */
export const USAGE_BATCH = 1000;

export async function insertUsage(db: SqlExecutor, records: readonly UsageRecord[]): Promise<void> {
  for (let start = 0; start < records.length; start += USAGE_BATCH) {
    const batch = start === 0 && records.length <= USAGE_BATCH ? records : records.slice(start, start + USAGE_BATCH);
    await db.query(INSERT_USAGE, [JSON.stringify(batch)]);
  }
}

/**
 * Retention: the day totals of days before the cutoff's go, and the cutoff's own day is summed again
 * from the raw records left of it ($1: the cutoff; run after those before it were deleted).
 */
export const PRUNE_DAY_TOTALS = [
  `DELETE FROM usage_day_totals WHERE day <= ($1::timestamptz AT TIME ZONE 'UTC')::date`,
  addDayTotals(rawCalls(`at >= $1::timestamptz AND at < ((($1::timestamptz AT TIME ZONE 'UTC')::date + 1)::timestamp AT TIME ZONE 'UTC')`)),
];

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
      const base = [query.orgId, query.since, query.until, query.userId ?? null, query.keyId ?? null, query.model ?? null, query.limit];
      const days = wholeDays(query.since, query.until);
      if (!days) return db.query<UsageGroupRow>(usageQueryStatement(query.groupBy), base);
      return db.query<UsageGroupRow>(usageQueryStatement(query.groupBy, true), [
        ...base,
        days.from.toISOString(),
        days.to.toISOString(),
        dayOf(days.from),
        dayOf(days.to),
      ]);
    },
    async spent(orgId, userId, keyId, since) {
      const midnight = new Date(Math.ceil(Date.parse(since) / DAY_MS) * DAY_MS);
      const [row] = await db.query<Record<'orgTokens' | 'orgCost' | 'userTokens' | 'userCost' | 'keyTokens' | 'keyCost', number>>(SPENT, [
        orgId,
        since,
        midnight.toISOString(),
        userId,
        keyId,
        dayOf(midnight),
      ]);
      return {
        organization: { tokens: row?.orgTokens ?? 0, cost: row?.orgCost ?? 0 },
        user: { tokens: userId === null ? 0 : (row?.userTokens ?? 0), cost: userId === null ? 0 : (row?.userCost ?? 0) },
        key: { tokens: keyId === null ? 0 : (row?.keyTokens ?? 0), cost: keyId === null ? 0 : (row?.keyCost ?? 0) },
      };
    },
  };
}
