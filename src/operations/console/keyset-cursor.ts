// The opaque cursor of the console's lists (runs, stored responses): the keyset (createdAt, id) of the
// last item returned, base64url JSON, like the audit cursor (../admin/audit-cursor.ts). It needs no
// signature: every list query is scoped to what the caller may read, so a forged cursor can only skip
// within items the caller may read anyway.
import { GatewayError } from '../../http/errors';

export interface KeysetPosition {
  createdAt: string;
  id: string;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;

export function encodeKeyset(position: KeysetPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url');
}

/** The position of a cursor from query parameter `after`, absent → null; 400 naming `after` when malformed. */
export function keysetAfter(query: Record<string, unknown>): KeysetPosition | null {
  const cursor = query['after'];
  if (typeof cursor !== 'string') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  if (Array.isArray(parsed) && parsed.length === 2) {
    const [createdAt, id] = parsed as unknown[];
    if (typeof createdAt === 'string' && ISO.test(createdAt) && typeof id === 'string' && id.length > 0 && id.length <= 256) return { createdAt, id };
  }
  throw new GatewayError('bad_request', 'Invalid cursor: pass the nextCursor of a previous page as after.', { param: 'after' });
}

/** The page of a list read with limit + 1 items, and the cursor of the next page (null on the last). */
export function keysetPage<T extends KeysetPosition>(items: readonly T[], limit: number): { page: T[]; nextCursor: string | null } {
  const page = items.slice(0, limit);
  const last = page[page.length - 1];
  return { page, nextCursor: items.length > limit && last ? encodeKeyset({ createdAt: last.createdAt, id: last.id }) : null };
}

/** A validated `limit` query parameter, or the default. */
export function queryLimit(query: Record<string, unknown>, fallback: number): number {
  return typeof query['limit'] === 'number' ? query['limit'] : fallback;
}

/** A validated ISO date-time query parameter, normalised to UTC milliseconds; null when absent. */
export function queryTime(query: Record<string, unknown>, name: string): string | null {
  const value = query[name];
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new GatewayError('bad_request', `Invalid request: '${name}' must be an ISO-8601 date-time.`, { param: name });
  return new Date(ms).toISOString();
}
