// The console's sign-in (GET /console/auth/config, /console/auth/oidc/login, /console/auth/oidc/callback,
// POST /console/auth/session, /console/auth/logout). OpenID Connect: the login redirects to the
// provider with state, nonce and PKCE (kept in a signed HttpOnly cookie); the callback has openid-client
// exchange the code and verify the ID token, maps it to a configured user, creates a console session
// and hands the page a one-time ticket cookie, which POST /console/auth/session exchanges for the bearer
// token. Failures send the browser back to the console with a code (never a session), and are logged
// without any secret (no code, token, ticket or client secret). The login, the callback and the ticket
// exchange count against console.signInRateLimit per client address (src/console/sign-in-limit.ts).
import { GatewayError } from '../../http/errors';
import { errorFields } from '../../log/logger';
import { oidcSignIn } from '../../console/oidc';
import { readCookie } from '../../console/cookies';
import { announceSessionRevoked } from '../../console/session-revocations';
import { generateSessionToken, generateTicket, newSessionId } from '../../console/session-tokens';
import { mapClaimsToUser } from '../../console/user-mapping';
import { publicBaseUrl, requestBaseUrl } from '../../files/share-link';
import { hashApiKey } from '../../security/keys';
import type { RequestContext } from '../../pipeline/context';
import type { AppServices } from '../../services';
import type { Handler, Reply } from '../types';
import {
  clearStateCookie,
  clearTicketCookie,
  consoleUrl,
  readSignInState,
  redirectUriFor,
  secureFor,
  SIGN_IN_WINDOW_SECONDS,
  stateCookie,
  TICKET_COOKIE,
  TICKET_SECONDS,
  ticketCookie,
  type SignInError,
} from './sign-in-state';

/** Expired sessions are deleted this many at a time, when a sign-in creates a new one. */
const PRUNE_BATCH = 100;

/** A 302 that also sets `cookies` (several Set-Cookie headers: set on the response, which the reply's headers join). */
function redirect(ctx: RequestContext, location: string, cookies: string[]): Reply {
  if (cookies.length > 0) ctx.res.setHeader('set-cookie', cookies);
  return { status: 302, headers: { location, 'cache-control': 'no-store' } };
}

/** Seconds this request's client address must wait (console.signInRateLimit); 0: admitted and counted. */
async function signInWait(ctx: RequestContext, { signInLimit }: AppServices): Promise<number> {
  return signInLimit === null ? 0 : await signInLimit.admit(ctx.req);
}

/** Over the sign-in limit, a browser route sends the browser back to the console, which says why. */
function rateLimited(ctx: RequestContext, services: AppServices, seconds: number): Reply {
  // Debug: a flood must not double the log (the access log has every request already).
  services.logger.debug('console sign-in refused', { requestId: ctx.requestId, reason: 'rate_limited' });
  const location = consoleUrl(redirectUriFor(services.config, ctx.req), 'rate_limited');
  return { status: 302, headers: { location, 'cache-control': 'no-store', 'retry-after': String(seconds) } };
}

/** GET /console/auth/config (public): which sign-in methods the console offers. */
export const getConsoleAuthConfig: Handler = async (_ctx, { config }) => {
  return { status: 200, body: { oidc: config.console.oidc !== undefined } };
};

/** GET /console/auth/oidc/login (public): 302 to the provider's authorization endpoint. */
export const startConsoleOidcLogin: Handler = async (ctx, services) => {
  const { config, store, logger, clock } = services;
  const settings = config.console.oidc;
  if (!settings) throw new GatewayError('not_found', 'OpenID Connect sign-in is not configured (console.oidc).');
  const wait = await signInWait(ctx, services);
  if (wait > 0) return rateLimited(ctx, services, wait);
  const redirectUri = redirectUriFor(config, ctx.req);
  let request;
  try {
    request = await oidcSignIn(settings).authorizationRequest(redirectUri);
  } catch (err) {
    logger.warn('console sign-in: the OpenID Connect provider could not be reached', { requestId: ctx.requestId, ...errorFields(err) });
    return redirect(ctx, consoleUrl(redirectUri, 'provider_unavailable'), []);
  }
  const { url, ...checks } = request;
  const cookie = await stateCookie(store, { ...checks, redirectUri, expiresAt: clock.now().getTime() + SIGN_IN_WINDOW_SECONDS * 1000 });
  return redirect(ctx, url, [cookie]);
};

/** GET /console/auth/oidc/callback (public): code exchange, ID token checks, user mapping, session and ticket. */
export const completeConsoleOidcLogin: Handler = async (ctx, services) => {
  const { config, store, logger, clock } = services;
  const settings = config.console.oidc;
  if (!settings) throw new GatewayError('not_found', 'OpenID Connect sign-in is not configured (console.oidc).');
  // Before the state is read or the provider asked: the state cookie keeps, so a retry can still finish.
  const wait = await signInWait(ctx, services);
  if (wait > 0) return rateLimited(ctx, services, wait);
  const now = clock.now();
  const signIn = await readSignInState(store, ctx.req, now.getTime());
  const fail = (error: SignInError, redirectUri: string | null): Reply => {
    logger.info('console sign-in refused', { requestId: ctx.requestId, reason: error });
    return redirect(ctx, consoleUrl(redirectUri, error), [clearStateCookie(redirectUri !== null && secureFor(redirectUri))]);
  };
  // No state cookie of ours (expired, another browser, forged) or a state it does not hold: refused
  // before the provider is asked anything (the code is never redeemed for a request we did not start).
  if (!signIn || ctx.query['state'] !== signIn.state) return fail('invalid_state', signIn?.redirectUri ?? null);
  if (ctx.query['error'] !== undefined) return fail('provider_error', signIn.redirectUri);

  const callbackUrl = new URL(signIn.redirectUri);
  const at = ctx.req.url?.indexOf('?') ?? -1;
  callbackUrl.search = at >= 0 ? (ctx.req.url ?? '').slice(at) : '';
  let claims;
  try {
    claims = await oidcSignIn(settings).complete(callbackUrl, signIn);
  } catch (err) {
    // openid-client's errors name the check that failed (nonce, issuer, audience, signature, expiry), never a token.
    logger.warn('console sign-in: the provider response failed verification', { requestId: ctx.requestId, ...errorFields(err) });
    return fail('sign_in_failed', signIn.redirectUri);
  }
  const mapped = mapClaimsToUser(config, claims);
  const user = mapped ? await store.users.get(mapped.userId) : null;
  if (!mapped || !user || user.orgId !== mapped.orgId) {
    // The subject identifies the account to the operator (to configure oidcSubject); it is no secret.
    logger.info('console sign-in: no configured user for this identity', { requestId: ctx.requestId, subject: claims.sub.slice(0, 255) });
    return fail('unknown_user', signIn.redirectUri);
  }

  const ticket = generateTicket();
  const nowIso = now.toISOString();
  const session = {
    id: newSessionId(),
    orgId: user.orgId,
    userId: user.id,
    tokenHash: null,
    ticketHash: hashApiKey(ticket),
    ticketExpiresAt: new Date(now.getTime() + TICKET_SECONDS * 1000).toISOString(),
    subject: claims.sub.slice(0, 255),
    createdAt: nowIso,
    expiresAt: new Date(now.getTime() + config.console.sessionTtlSeconds * 1000).toISOString(),
    revokedAt: null,
  };
  await store.consoleSessions.create(session);
  ctx.resourceIds['consoleSessionId'] = session.id;
  logger.info('console sign-in', { requestId: ctx.requestId, orgId: user.orgId, userId: user.id, sessionId: session.id });
  // Sessions past their expiry are of no use: each sign-in clears a batch of them.
  store.consoleSessions.prune(nowIso, PRUNE_BATCH).catch((err: unknown) => logger.warn('pruning expired console sessions failed', errorFields(err)));
  const secure = secureFor(signIn.redirectUri);
  return redirect(ctx, consoleUrl(signIn.redirectUri), [clearStateCookie(secure), ticketCookie(ticket, secure)]);
};

/** POST /console/auth/session (public, ticket cookie): the one-time ticket for the bearer session token. */
export const createConsoleSession: Handler = async (ctx, services) => {
  const { config, store, clock } = services;
  const secure = secureFor(publicBaseUrl(config.server, requestBaseUrl(ctx.req, config.server.trustProxy)));
  const headers = { 'set-cookie': clearTicketCookie(secure), 'cache-control': 'no-store' };
  const ticket = readCookie(ctx.req.headers, TICKET_COOKIE);
  const refused = new GatewayError('unauthorized', 'No valid sign-in ticket: it is missing, expired or already used. Sign in again.', { headers });
  // Without a ticket nothing is looked up, and not counted: the console page asks on every load.
  if (ticket === undefined) throw refused;
  const wait = await signInWait(ctx, services);
  if (wait > 0) {
    // The ticket cookie stays: it may still be exchanged within its minute.
    throw new GatewayError('rate_limited', `Too many sign-in requests from this address. Retry after ${wait} s.`, {
      headers: { 'retry-after': String(wait), 'cache-control': 'no-store' },
    });
  }
  const token = generateSessionToken();
  const session = await store.consoleSessions.redeemTicket(hashApiKey(ticket), hashApiKey(token), clock.now().toISOString());
  if (!session) throw refused;
  const user = await store.users.get(session.userId);
  if (!user) throw refused;
  ctx.resourceIds['consoleSessionId'] = session.id;
  return {
    status: 200,
    headers,
    body: { token, expiresAt: session.expiresAt, user: { id: user.id, name: user.name, role: user.role } },
  };
};

/** POST /console/auth/logout (bearer): the console session used stops working, here at once, elsewhere within two polls. */
export const deleteConsoleSession: Handler = async (ctx, { store, clock }) => {
  const sessionId = ctx.principal?.sessionId;
  if (sessionId !== undefined) {
    await store.consoleSessions.revoke(sessionId, clock.now().toISOString());
    announceSessionRevoked(store, sessionId);
  }
  return { status: 204 };
};
