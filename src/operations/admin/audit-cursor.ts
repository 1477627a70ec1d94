// The audit page cursor: the keyset (time, id) of the last record returned, base64url JSON. It needs no
// signature: the query is always scoped to the caller's organization, so a forged cursor can only skip
// within records the caller may read anyway.
import { GatewayError } from '../../http/errors';

export interface AuditPosition {
  at: string;
  id: string;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;

export function encodeAuditCursor(position: AuditPosition): string {
  return Buffer.from(JSON.stringify([position.at, position.id])).toString('base64url');
}

export function decodeAuditCursor(cursor: string): AuditPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  if (
    Array.isArray(parsed) &&
    parsed.length === 2 &&
    typeof parsed[0] === 'string' &&
    ISO.test(parsed[0]) &&
    typeof parsed[1] === 'string' &&
    parsed[1].length > 0
  ) {
    return { at: parsed[0], id: parsed[1] };
  }
  throw new GatewayError('bad_request', 'Invalid cursor: pass the nextCursor of a previous page as after.', { param: 'after' });
}
