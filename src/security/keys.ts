import crypto, { createHash, randomBytes, randomUUID } from 'node:crypto';

// crypto.hash (Node 20.12+): a one-shot digest without a Hash object, ~2.5x faster per call on the
// auth path (measured 0.30 vs 0.73 µs); createHash on older Node 20 releases.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

/** API keys look like `agw_<43 chars of base64url>`: 256 bits of randomness. */
export const KEY_PREFIX = 'agw_';

export function generateApiKey(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/**
 * Keys are stored as SHA-256 digests only. A fast hash is right here (unlike passwords): keys carry
 * 256 bits of entropy, so there is nothing to brute-force, and auth stays on the hot path cheaply.
 */
export function hashApiKey(key: string): string {
  return oneShot ? oneShot('sha256', key, 'hex') : createHash('sha256').update(key, 'utf8').digest('hex');
}

/** What may be shown of a key: enough to recognise it, never enough to use it. */
export function keyDisplayPrefix(key: string): string {
  return key.slice(0, Math.min(8, Math.floor(key.length / 3)));
}

export function newKeyId(): string {
  return `key_${randomUUID().replace(/-/g, '')}`;
}
