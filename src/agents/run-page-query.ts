// Query parameters of GET /v1/agents/{agentId}: which path (legacy or paginated) and the page asked
// for. Presence is read from the raw query string, not from the validated query, because a generated
// validator may fill in defaults (limit: 20) that would turn every legacy call into a paginated one.
import { GatewayError } from '../http/errors';

export const LEGACY_RUN_IDS = 5;
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
const PAGE_PARAMS = ['limit', 'cursor', 'startDate', 'endDate'] as const;

export type RunPageRequest = { paginated: false } | { paginated: true; limit: number; cursor: string | null; startDate: string | null; endDate: string | null };

// Date only (YYYY-MM-DD) or a date-time with an explicit offset: ISO-8601 shapes Date.parse reads the
// same way on every platform. A date-time without offset is ambiguous, so it is refused.
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

function badRequest(message: string, param: string): GatewayError {
  return new GatewayError('bad_request', `Invalid request: ${message}.`, { param });
}

function single(search: URLSearchParams, name: string): string | null {
  const values = search.getAll(name);
  if (values.length > 1) throw badRequest(`'${name}' may be given once`, name);
  return values[0] ?? null;
}

/**
 * A bound as an ISO-8601 UTC timestamp (the store's format). Both bounds are inclusive; a date-only
 * end bound covers its whole day (00:00:00.000 to 23:59:59.999 UTC).
 */
function parseBound(raw: string, name: 'startDate' | 'endDate'): string {
  // An unencoded `+` of a UTC offset arrives as a space (form encoding): read it as the `+` it was.
  const value = raw.replace(/ (\d{2}:\d{2})$/, '+$1');
  const dateOnly = DATE_ONLY.test(value);
  if (!dateOnly && !DATE_TIME.test(value)) throw badRequest(`'${name}' must be an ISO-8601 date or date-time`, name);
  const ms = Date.parse(dateOnly ? `${value}T00:00:00.000Z` : value);
  if (Number.isNaN(ms)) throw badRequest(`'${name}' is not a valid date`, name);
  return new Date(dateOnly && name === 'endDate' ? ms + 86_399_999 : ms).toISOString();
}

export function parseRunPageRequest(url: string | undefined): RunPageRequest {
  const at = url?.indexOf('?') ?? -1;
  const search = new URLSearchParams(url && at >= 0 ? url.slice(at + 1) : '');
  if (!PAGE_PARAMS.some((name) => search.has(name))) return { paginated: false };

  let limit = DEFAULT_LIMIT;
  const rawLimit = single(search, 'limit');
  if (rawLimit !== null) {
    if (!/^\d{1,3}$/.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > MAX_LIMIT) {
      throw badRequest(`'limit' must be an integer from 1 to ${MAX_LIMIT}`, 'limit');
    }
    limit = Number(rawLimit);
  }
  const cursor = single(search, 'cursor');
  if (cursor === '') throw badRequest(`'cursor' is not a cursor issued by this service`, 'cursor');
  const rawStart = single(search, 'startDate');
  const rawEnd = single(search, 'endDate');
  const startDate = rawStart === null ? null : parseBound(rawStart, 'startDate');
  const endDate = rawEnd === null ? null : parseBound(rawEnd, 'endDate');
  if (startDate !== null && endDate !== null && startDate > endDate) {
    throw badRequest(`'startDate' must be less than or equal to 'endDate'`, 'startDate');
  }
  return { paginated: true, limit, cursor, startDate, endDate };
}
