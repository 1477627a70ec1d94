import type { IncomingHttpHeaders } from 'node:http';

export type Credential = { ok: true; key: string } | { ok: false; reason: 'missing' | 'malformed' };

// A key is one token of visible ASCII (RFC 6750 b64token is a subset); 512 bounds the hashing work.
const KEY_SHAPE = /^[\x21-\x7e]{8,512}$/;
const BEARER = /^Bearer[ \t]+([^ \t]+)[ \t]*$/i;

function shaped(key: string): Credential {
  return KEY_SHAPE.test(key) ? { ok: true, key } : { ok: false, reason: 'malformed' };
}

/**
 * Reads the API key from `Authorization: Bearer <key>`, `x-api-key` or `api-key` (in that order). A
 * non-Bearer Authorization header is ignored when a key header is present (proxies add Basic auth),
 * and is malformed otherwise. Repeated key headers (joined with ", " by Node) are malformed.
 */
export function readApiKey(headers: IncomingHttpHeaders): Credential {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const bearer = BEARER.exec(authorization);
    if (bearer) return shaped(bearer[1] as string);
  }
  const header = headers['x-api-key'] ?? headers['api-key'];
  if (header !== undefined) return shaped(Array.isArray(header) ? header.join(', ') : header.trim());
  return authorization !== undefined ? { ok: false, reason: 'malformed' } : { ok: false, reason: 'missing' };
}
