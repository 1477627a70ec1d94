// Console sign-in with OpenID Connect, end to end against a real provider (oidc-provider on a random
// port): the browser goes through the gateway's login, the provider's login and consent pages and the
// gateway's callback, then exchanges its one-time ticket for a session token that calls the API as the
// mapped user; the refusals (state, nonce, unknown or unverified identity, reused ticket, sign-out,
// expiry) make no session or stop one.
import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/security/keys';
import { generateSessionToken, newSessionId } from '../../src/console/session-tokens';
import { baseConfigDocument, startTestGateway, type TestGateway } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';
import { Browser, startTestProvider, type TestProvider } from './oidc-test-provider';

const ACCOUNTS = {
  'sub-member': { email: 'someone-else@example.com', emailVerified: true },
  'sub-admin-google': { email: 'Admin@Example.com', emailVerified: true },
  'sub-unverified': { email: 'viewer@example.com', emailVerified: false },
  'sub-stranger': { email: 'stranger@example.com', emailVerified: true },
  // Shows the member's pinned address: the member is their subject alone.
  'sub-impostor': { email: 'member@example.com', emailVerified: true },
};

function organizations(): Record<string, unknown>[] {
  const orgs = baseConfigDocument()['organizations'] as { id: string; users: Record<string, unknown>[] }[];
  return orgs.map((org) =>
    org.id !== 'acme'
      ? org
      : {
          ...org,
          users: org.users.map((user) =>
            user['id'] === 'u-member'
              ? { ...user, oidcSubject: 'sub-member', email: 'member@example.com' }
              : user['id'] === 'u-admin'
                ? { ...user, email: 'admin@example.com' }
                : user['id'] === 'u-viewer'
                  ? { ...user, email: 'viewer@example.com' }
                  : user,
          ),
        },
  );
}

describe('console sign-in with OpenID Connect (a real provider)', function () {
  this.timeout(120_000);
  let provider: TestProvider;
  let gw: TestGateway;

  before(async () => {
    provider = await startTestProvider();
    gw = await startTestGateway({
      config: {
        console: {
          oidc: { issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret },
          // These tests sign in far more often than a person, all from 127.0.0.1 within a minute (the
          // limit itself: sign-in-limit.test.ts).
          signInRateLimit: 1000,
        },
        organizations: organizations(),
        plugins: { auth: { enabled: true }, audit: { enabled: true, flushIntervalMs: 50 } },
      },
    });
    await provider.configure(`${gw.url}/console/auth/oidc/callback`, ACCOUNTS);
  });
  after(async () => {
    await gw?.close();
    await provider?.close();
  });

  const atConsole = (url: URL) => url.pathname === '/console/';

  /** Signs in as `login` at the provider; the browser ends at the console page the callback redirects to. */
  async function signIn(login: string, rewrite?: (url: URL) => URL): Promise<{ browser: Browser; landed: URL }> {
    const browser = new Browser();
    const { url } = await browser.follow(`${gw.url}/console/auth/oidc/login`, { login, stopAt: atConsole, ...(rewrite ? { rewrite } : {}) });
    return { browser, landed: new URL(url) };
  }

  async function exchange(browser: Browser): Promise<Response> {
    return browser.request(`${gw.url}/console/auth/session`, { method: 'POST' });
  }

  it('tells the console that OpenID Connect sign-in is on', async () => {
    const res = await fetch(`${gw.url}/console/auth/config`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { oidc: true });
  });

  it('redirects to the provider with state, nonce and PKCE S256, holding them in a signed HttpOnly cookie', async () => {
    const res = await fetch(`${gw.url}/console/auth/oidc/login`, { redirect: 'manual' });
    assert.equal(res.status, 302);
    const location = new URL(res.headers.get('location') ?? '');
    assert.equal(location.origin, provider.issuer);
    const params = location.searchParams;
    assert.equal(params.get('client_id'), provider.clientId);
    assert.equal(params.get('redirect_uri'), `${gw.url}/console/auth/oidc/callback`);
    assert.equal(params.get('response_type'), 'code');
    assert.equal(params.get('scope'), 'openid email profile');
    assert.equal(params.get('code_challenge_method'), 'S256');
    assert.match(params.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.ok((params.get('state') ?? '').length >= 20 && (params.get('nonce') ?? '').length >= 20);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('agw_console_oidc='));
    assert.match(cookie ?? '', /; Path=\/console\/auth\/oidc; Max-Age=600; HttpOnly; SameSite=Lax$/);
    assert.ok(!(cookie ?? '').includes(params.get('state')!) || cookie!.includes('.'), 'a signed value');
  });

  it('signs in a user mapped by subject; the ticket buys one session token that acts as that user', async () => {
    const { browser, landed } = await signIn('sub-member');
    assert.equal(landed.href, `${gw.url}/console/`);
    const host = '127.0.0.1';
    assert.ok(browser.cookie(host, 'agw_console_ticket'), 'the one-time ticket cookie');
    assert.equal(browser.cookie(host, 'agw_console_oidc'), undefined, 'the sign-in state cookie is cleared');

    const res = await exchange(browser);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { token: string; expiresAt: string; user: unknown };
    assert.match(body.token, /^agws_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(body.user, { id: 'u-member', name: 'Member', role: 'member' });
    const ttl = Date.parse(body.expiresAt) - Date.now();
    assert.ok(ttl > 11.9 * 3600_000 && ttl <= 12 * 3600_000, 'expires in 12 hours by default');
    assert.match(res.headers.getSetCookie().join('\n'), /agw_console_ticket=; Path=\/console\/auth; Max-Age=0/);

    const bearer = { authorization: `Bearer ${body.token}` };
    const agents = await fetch(`${gw.url}/v1/agents/list`, { headers: bearer });
    assert.equal(agents.status, 200);
    // As the member, never more: the admin-only audit is refused.
    assert.equal((await fetch(`${gw.url}/v1/admin/audit`, { headers: bearer })).status, 403);

    // Only the digest is stored, never the token itself.
    const resolved = await gw.store.consoleSessions.resolve(hashApiKey(body.token), new Date().toISOString());
    assert.equal(resolved?.user.id, 'u-member');
    assert.equal(resolved?.session.subject, 'sub-member');

    // The audit trail names the user and the session (no key was used).
    const sessionId = resolved!.session.id;
    const recorded = async () =>
      (await gw.store.audit.list({ orgId: 'acme', since: null, limit: 1000, after: null })).find(
        (r) => r.operationId === 'listAgents' && r.resourceIds['consoleSessionId'] === sessionId,
      );
    await waitFor(async () => (await recorded()) !== undefined, { timeoutMs: 10_000, what: 'the audit record of the session call' });
    const record = await recorded();
    assert.equal(record?.userId, 'u-member');
    assert.equal(record?.keyId, null);
    assert.equal(record?.status, 200);
  });

  it('maps a verified email (case-insensitively) to its user, with that user’s role', async () => {
    const { browser } = await signIn('sub-admin-google');
    const res = await exchange(browser);
    assert.equal(res.status, 200);
    const { token, user } = (await res.json()) as { token: string; user: unknown };
    assert.deepEqual(user, { id: 'u-admin', name: 'Admin', role: 'admin' });
    assert.equal((await fetch(`${gw.url}/v1/admin/audit`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
  });

  it('redeems a ticket only once', async () => {
    const { browser } = await signIn('sub-member');
    const ticket = browser.cookie('127.0.0.1', 'agw_console_ticket');
    assert.ok(ticket);
    assert.equal((await exchange(browser)).status, 200);
    // The same ticket again (a replayed cookie): refused.
    const replay = await fetch(`${gw.url}/console/auth/session`, { method: 'POST', headers: { cookie: `agw_console_ticket=${ticket}` } });
    assert.equal(replay.status, 401);
    const error = (await replay.json()) as { error: string; message: string };
    assert.deepEqual(error, { error: 'Unauthorized', message: 'No valid sign-in ticket: it is missing, expired or already used. Sign in again.' });
    assert.equal((await fetch(`${gw.url}/console/auth/session`, { method: 'POST' })).status, 401, 'no ticket at all');
  });

  it('makes no session for an identity no configured user has, or whose email is unverified, or pinned to another subject', async () => {
    for (const login of ['sub-stranger', 'sub-unverified', 'sub-impostor']) {
      const { browser, landed } = await signIn(login);
      assert.equal(landed.href, `${gw.url}/console/?signInError=unknown_user`, login);
      assert.equal(browser.cookie('127.0.0.1', 'agw_console_ticket'), undefined, `${login}: no ticket`);
      assert.equal((await exchange(browser)).status, 401, `${login}: no session`);
    }
  });

  it('refuses a callback whose state is not the one this browser started', async () => {
    const browser = new Browser();
    // Sign-in A is started, then sign-in B in the same browser: B's state cookie replaces A's.
    const first = await browser.request(`${gw.url}/console/auth/oidc/login`);
    const providerUrlA = first.headers.get('location')!;
    await browser.request(`${gw.url}/console/auth/oidc/login`);
    const { url } = await browser.follow(providerUrlA, { login: 'sub-member', stopAt: atConsole });
    assert.equal(url, `${gw.url}/console/?signInError=invalid_state`);
    assert.equal(browser.cookie('127.0.0.1', 'agw_console_ticket'), undefined);

    // No sign-in cookie at all (another browser, or a forged link).
    const bare = await fetch(`${gw.url}/console/auth/oidc/callback?code=abc&state=xyz`, { redirect: 'manual' });
    assert.equal(bare.status, 302);
    assert.equal(bare.headers.get('location'), '/console/?signInError=invalid_state');
    assert.equal(
      bare.headers.getSetCookie().some((c) => c.startsWith('agw_console_ticket=') && !c.includes('Max-Age=0')),
      false,
    );
  });

  it('refuses an ID token whose nonce is not the one sent (a tampered authorization request)', async () => {
    const tamper = (url: URL): URL => {
      if (url.origin === provider.issuer && url.searchParams.has('nonce')) url.searchParams.set('nonce', 'an-attacker-chosen-nonce-0123456789');
      return url;
    };
    const { browser, landed } = await signIn('sub-member', tamper);
    assert.equal(landed.href, `${gw.url}/console/?signInError=sign_in_failed`);
    assert.equal(browser.cookie('127.0.0.1', 'agw_console_ticket'), undefined);
  });

  it('sends the user back with provider_error when the provider answers with an error', async () => {
    const browser = new Browser();
    const login = await browser.request(`${gw.url}/console/auth/oidc/login`);
    const state = new URL(login.headers.get('location')!).searchParams.get('state')!;
    const res = await browser.request(`${gw.url}/console/auth/oidc/callback?error=access_denied&state=${state}`);
    assert.equal(res.headers.get('location'), `${gw.url}/console/?signInError=provider_error`);
  });

  it('logout revokes the session at once', async () => {
    const { browser } = await signIn('sub-member');
    const { token } = (await (await exchange(browser)).json()) as { token: string };
    const bearer = { authorization: `Bearer ${token}` };
    assert.equal((await fetch(`${gw.url}/v1/agents/list`, { headers: bearer })).status, 200, 'cached as valid');
    assert.equal((await fetch(`${gw.url}/console/auth/logout`, { method: 'POST', headers: bearer })).status, 204);
    const after = await fetch(`${gw.url}/v1/agents/list`, { headers: bearer });
    assert.equal(after.status, 401);
    assert.deepEqual(await after.json(), {
      error: 'Unauthorized',
      message: 'Invalid console session: it is unknown, has expired or was signed out. Sign in again.',
    });
    assert.equal((await fetch(`${gw.url}/console/auth/logout`, { method: 'POST', headers: bearer })).status, 401);
  });

  it('refuses a session once it has expired, even while it was cached as valid', async () => {
    const token = generateSessionToken();
    const now = Date.now();
    await gw.store.consoleSessions.create({
      id: newSessionId(),
      orgId: 'acme',
      userId: 'u-viewer',
      tokenHash: hashApiKey(token),
      ticketHash: null,
      ticketExpiresAt: new Date(now).toISOString(),
      subject: 'sub-viewer',
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + 5000).toISOString(),
      revokedAt: null,
    });
    const bearer = { authorization: `Bearer ${token}` };
    assert.equal((await fetch(`${gw.url}/v1/agents/list`, { headers: bearer })).status, 200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, now + 5100 - Date.now())));
    assert.equal((await fetch(`${gw.url}/v1/agents/list`, { headers: bearer })).status, 401);
  });
});

describe('console sign-in without OpenID Connect configured', function () {
  this.timeout(60_000);
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ config: { plugins: { auth: { enabled: true } } } });
  });
  after(() => gw?.close());

  it('offers API-key sign-in only, and session tokens are unknown keys', async () => {
    assert.deepEqual(await (await fetch(`${gw.url}/console/auth/config`)).json(), { oidc: false });
    assert.equal((await fetch(`${gw.url}/console/auth/oidc/login`, { redirect: 'manual' })).status, 404);
    assert.equal((await fetch(`${gw.url}/console/auth/oidc/callback?code=a&state=b`, { redirect: 'manual' })).status, 404);
    const token = generateSessionToken();
    await gw.store.consoleSessions.create({
      id: newSessionId(),
      orgId: 'acme',
      userId: 'u-admin',
      tokenHash: hashApiKey(token),
      ticketHash: null,
      ticketExpiresAt: new Date().toISOString(),
      subject: 'sub-admin',
      createdAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 3600_000).toISOString(),
      revokedAt: null,
    });
    assert.equal((await fetch(`${gw.url}/v1/agents/list`, { headers: { authorization: `Bearer ${token}` } })).status, 401);
  });
});
