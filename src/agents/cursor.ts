// The opaque cursor of GET /v1/agents/{agentId}: the keyset position (createdAt, id) of the last run
// of the previous page, bound to the agent and signed with an installation secret, so a cursor we did
// not issue (edited, forged, from another agent) is rejected with 400 instead of being trusted.
// It deliberately does not carry the date filters (spec: the client re-sends them on every page).
// Format (may change without notice, spec Versioning 3): base64url(JSON [createdAt, id]) "." base64url(mac).
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface CursorPosition {
  createdAt: string;
  id: string;
}

const MAC_BYTES = 16;

function mac(secret: Buffer, agentId: string, payload: string): Buffer {
  return createHmac('sha256', secret).update(`run-page\0${agentId}\0${payload}`).digest().subarray(0, MAC_BYTES);
}

export function encodeCursor(secret: Buffer, agentId: string, position: CursorPosition): string {
  const payload = Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url');
  return `${payload}.${mac(secret, agentId, payload).toString('base64url')}`;
}

/** The position, or null when the cursor is malformed or not signed by us for this agent. */
export function decodeCursor(secret: Buffer, agentId: string, cursor: string): CursorPosition | null {
  if (cursor.length > 512) return null;
  const dot = cursor.indexOf('.');
  if (dot <= 0) return null;
  const payload = cursor.slice(0, dot);
  const given = Buffer.from(cursor.slice(dot + 1), 'base64url');
  const expected = mac(secret, agentId, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== 2) return null;
    const [createdAt, id] = parsed as unknown[];
    if (typeof createdAt !== 'string' || typeof id !== 'string') return null;
    return { createdAt, id };
  } catch {
    return null;
  }
}
