// Console session credentials: the bearer token and the one-time ticket that fetches it. Both carry 256
// bits of randomness and are stored as SHA-256 digests only (hashApiKey: a fast hash is right for
// random secrets, as for API keys).
import { randomBytes, randomUUID } from 'node:crypto';

/** Console session tokens look like `agws_<43 chars of base64url>`; API keys start `agw_`. */
export const SESSION_TOKEN_PREFIX = 'agws_';

export function generateSessionToken(): string {
  return `${SESSION_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function isSessionToken(credential: string): boolean {
  return credential.startsWith(SESSION_TOKEN_PREFIX);
}

export function generateTicket(): string {
  return randomBytes(32).toString('base64url');
}

export function newSessionId(): string {
  return `cs_${randomUUID().replace(/-/g, '')}`;
}
