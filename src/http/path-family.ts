import type { EnvelopeFamily } from './errors';

/** Path prefixes answered in the flat envelope (spec: agent, run, eval endpoints; ours: webhooks, admin, keys, me, usage, console sign-in). */
const FLAT_PREFIXES = ['/v1/agents', '/v1/runs', '/v1/webhooks', '/v1/admin', '/v1/keys', '/v1/me', '/v1/usage', '/console/auth'];

/**
 * The envelope family of a raw path, for errors raised before any operation matched it: an unknown
 * route, a path Express could not decode, a request Node's HTTP parser refused. Operations carry
 * their own family (x-error-envelope); this only has to agree with them on their prefixes.
 */
export function familyOfPath(path: string): EnvelopeFamily {
  if (FLAT_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) return 'flat';
  if (path === '/v1/messages' || path.startsWith('/v1/messages/')) return 'anthropic';
  return 'openai';
}
