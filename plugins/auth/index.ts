// auth: API key or console session token -> principal (organization, user, role, groups, the key's model
// allow-list). Credentials are hashed on arrival (the store holds hashes only) and never logged;
// resolutions are cached (unknown ones apart from valid ones) no longer than a key is valid, revocations
// evicted within about two revocation polls (at once in this process: DELETE /v1/keys, a sign-out).
// Expired keys are refused like revoked ones. A console session acts as its user: keyId null, sessionId set.
import { GatewayError } from '../../src/http/errors';
import { definePlugin } from '../../src/pipeline/plugin';
import { isSessionToken } from '../../src/console/session-tokens';
import { onKeyRevoked } from '../../src/security/key-revocations';
import { hashApiKey } from '../../src/security/keys';
import type { RequestContext } from '../../src/pipeline/context';
import type { Principal } from '../../src/store/types';
import { readApiKey } from './credentials';
import { KeyResolver } from './key-resolver';
import { SessionResolver } from './session-resolver';
import { TouchBatcher } from './touch-batcher';

export interface AuthConfig {
  enabled: boolean;
  cacheSize: number;
  cacheTtlMs: number;
  negativeTtlMs: number;
  revocationPollMs: number;
  touchFlushMs: number;
}

/** Defaults, also the schema's `default`s (one source). */
export const AUTH_DEFAULTS: AuthConfig = {
  enabled: true,
  cacheSize: 10000,
  cacheTtlMs: 60000,
  negativeTtlMs: 2000,
  revocationPollMs: 1000,
  touchFlushMs: 5000,
};

export const AUTH_MESSAGES = {
  missing: 'Missing API key: send it as "Authorization: Bearer <key>", "x-api-key: <key>" or "api-key: <key>".',
  malformed: 'Malformed API key header: expected "Authorization: Bearer <key>", "x-api-key: <key>" or "api-key: <key>".',
  invalid: 'Invalid API key: it is unknown, has expired or has been revoked.',
  session: 'Invalid console session: it is unknown, has expired or was signed out. Sign in again.',
} as const;

export default definePlugin<AuthConfig>({
  name: 'auth',
  phase: 'authenticate',
  order: 100,
  requires: [],
  failMode: 'closed',
  description: "Resolves the API key (Authorization: Bearer, x-api-key or api-key) to the caller's organization, user, role and groups",
  configSchema: {
    type: 'object',
    additionalProperties: false,
    description:
      'API key (or console session token) authentication on every authenticated operation. Missing, malformed, unknown, expired or revoked keys and unknown, expired or signed-out sessions get 401 with the flat envelope; a key with a model allow-list may call only those models. Fails closed: when the store cannot be asked, the request is rejected. With auth off, every call acts as an admin of the first configured organization.',
    properties: {
      enabled: { type: 'boolean', default: AUTH_DEFAULTS.enabled, description: 'Require an API key.' },
      cacheSize: {
        type: 'integer',
        minimum: 1,
        default: AUTH_DEFAULTS.cacheSize,
        description:
          'Valid key resolutions kept in memory (least recently used are dropped); as many unknown or revoked keys are remembered apart, so a flood of random keys cannot evict valid ones.',
      },
      cacheTtlMs: {
        type: 'integer',
        minimum: 0,
        default: AUTH_DEFAULTS.cacheTtlMs,
        description: 'How long a resolved key is served from memory; revocations evict it sooner.',
      },
      negativeTtlMs: {
        type: 'integer',
        minimum: 0,
        default: AUTH_DEFAULTS.negativeTtlMs,
        description: 'How long an unknown or revoked key is remembered as such.',
      },
      revocationPollMs: {
        type: 'integer',
        minimum: 100,
        default: AUTH_DEFAULTS.revocationPollMs,
        description: 'How often each process asks the store for revoked keys; a revocation takes effect within about twice this.',
      },
      touchFlushMs: {
        type: 'integer',
        minimum: 100,
        default: AUTH_DEFAULTS.touchFlushMs,
        description: 'How often the last-use time of keys is written to the store, in one batch.',
      },
    },
  },
  create(partial, deps) {
    const config = { ...AUTH_DEFAULTS, ...partial };
    const resolver = new KeyResolver(deps.store.keys, deps.logger, config, deps.config.evaluation.model);
    const touches = new TouchBatcher(deps.store.keys, deps.logger, config.touchFlushMs);
    const unsubscribe = onKeyRevoked(deps.store.keys, (keyId) => resolver.evict(keyId));
    // Console sessions exist only with OpenID Connect sign-in configured; without it, a session token is just an unknown key.
    const sessions = deps.config.console.oidc ? new SessionResolver(deps.store, deps.logger, config) : null;

    // RFC 6750 section 3: a 401 names the scheme the client should use.
    const challenge = { 'www-authenticate': 'Bearer' };
    function admit(principal: Principal | null, ctx: { principal: Principal | null }): void {
      if (principal === null) throw new GatewayError('unauthorized', AUTH_MESSAGES.invalid, { headers: challenge });
      ctx.principal = principal;
      if (principal.keyId) touches.add(principal.keyId);
    }

    function admitSession(principal: Principal | null, ctx: RequestContext): void {
      if (principal === null) throw new GatewayError('unauthorized', AUTH_MESSAGES.session, { headers: challenge });
      ctx.principal = principal;
      // The audit record names the session the call came through (its keyId is null: no key was used).
      if (principal.sessionId) ctx.resourceIds['consoleSessionId'] = principal.sessionId;
    }

    return {
      // Not async: a cache hit completes synchronously, without a promise.
      onRequest(ctx) {
        const credential = readApiKey(ctx.req.headers);
        if (!credential.ok) throw new GatewayError('unauthorized', AUTH_MESSAGES[credential.reason], { headers: challenge });
        const hash = hashApiKey(credential.key);
        if (sessions && isSessionToken(credential.key)) {
          const session = sessions.cached(hash);
          if (session !== undefined) return admitSession(session, ctx);
          return sessions.resolve(hash).then((principal) => admitSession(principal, ctx));
        }
        const cached = resolver.cached(hash);
        if (cached !== undefined) return admit(cached, ctx);
        return resolver.resolve(hash).then((principal) => admit(principal, ctx));
      },
      async close() {
        unsubscribe();
        await resolver.close();
        await sessions?.close();
        await touches.close();
      },
    };
  },
});
