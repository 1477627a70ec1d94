// Console sign-in with OpenID Connect in headless Chromium (Debian's chromium, driven by playwright-core)
// against a real provider (oidc-provider, its development login and consent pages): the SSO button leads
// through the provider's pages back to the console, signed in as the mapped user, whose pages load their
// data; the session token is kept in session storage and never appears in the URL.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { baseConfigDocument, startTestGateway, type TestGateway } from '../helpers/gateway';
import { ensureConsoleBuilt, ROOT } from './build';
import { startTestProvider, type TestProvider } from './oidc-test-provider';

const CHROMIUM = process.env['CHROMIUM_PATH'] || '/usr/bin/chromium';
const SHARED_AGENT = '7b000000-0000-4000-8000-000000000001';

/** The member is pinned to the provider subject `sub-member`. */
function organizations(): Record<string, unknown>[] {
  const orgs = baseConfigDocument()['organizations'] as { id: string; users: Record<string, unknown>[] }[];
  return orgs.map((org) =>
    org.id !== 'acme'
      ? org
      : { ...org, users: org.users.map((user) => (user['id'] === 'u-member' ? { ...user, oidcSubject: 'sub-member', email: 'member@example.com' } : user)) },
  );
}

describe('console sign-in with OpenID Connect in Chromium', function () {
  this.timeout(120_000);
  const shots = path.join(ROOT, 'test-artifacts/console');
  let provider: TestProvider;
  let gw: TestGateway;
  let browser: Browser;

  before(async function () {
    this.timeout(180_000);
    ensureConsoleBuilt();
    await mkdir(shots, { recursive: true });
    provider = await startTestProvider();
    gw = await startTestGateway({
      config: {
        console: { oidc: { issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret } },
        organizations: organizations(),
        plugins: { auth: { enabled: true } },
        providers: { demo: { type: 'demo' } },
        models: [{ id: 'demo', provider: 'demo', created: 1700000000 }],
        agents: [
          {
            id: SHARED_AGENT,
            organization: 'acme',
            name: 'SSO shared agent',
            description: 'Shared with the member.',
            createdBy: 'u-admin',
            sharedWith: [{ user: 'u-member', permissions: ['view'] }],
            model: 'demo',
            steps: [{ prompt: 'Hi' }],
          },
        ],
      },
    });
    await provider.configure(`${gw.url}/console/auth/oidc/callback`, { 'sub-member': { email: 'someone-else@example.com', emailVerified: true } });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await provider?.close();
  });

  it("signs in through the provider's pages as the mapped user; the token is in session storage, never in the URL", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const page = await context.newPage();
      const visited: string[] = [];
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame()) visited.push(frame.url());
      });
      await page.goto(`${gw.url}/console/`);
      await page.getByRole('link', { name: 'Sign in with SSO' }).click();

      // The provider's login page, then its consent page.
      await page.waitForURL((url) => url.origin === provider.issuer);
      await page.locator('input[name="login"]').fill('sub-member');
      await page.locator('input[name="password"]').fill('any');
      await page.locator('button[type="submit"]').click();
      await page.getByRole('button', { name: /continue/i }).click();

      // Back on the console, signed in as the member.
      const navigation = page.getByRole('navigation', { name: 'Console' });
      await navigation.waitFor({ timeout: 30_000 });
      const landed = new URL(page.url());
      assert.equal(landed.origin, gw.url);
      assert.match(landed.pathname, /^\/console\//);
      assert.equal(landed.search, '', 'no signInError');
      assert.ok(visited.includes(`${gw.url}/console/`), 'the callback sent the browser to the console');
      await page.getByText('Member', { exact: true }).waitFor();
      assert.equal(await navigation.getByRole('link', { name: 'Audit', exact: true }).count(), 0, 'a member: no admin pages');

      const token = (await page.evaluate("sessionStorage.getItem('agw.console.token')")) as string | null;
      assert.match(token ?? '', /^agws_[A-Za-z0-9_-]{43}$/);
      assert.equal(await page.evaluate('localStorage.length'), 0);
      for (const url of visited) assert.ok(!url.includes(token!) && !/agws_/.test(url), `no token in ${url}`);
      const cookies = await context.cookies(gw.url);
      assert.equal(
        cookies.find((c) => c.name === 'agw_console_ticket'),
        undefined,
        'the one-time ticket is spent',
      );

      // A page that needs the session loads its data.
      await navigation.getByRole('link', { name: 'Agents', exact: true }).click();
      await page.getByRole('table', { name: 'Agents' }).getByRole('link', { name: 'SSO shared agent' }).waitFor();
      assert.ok(!page.url().includes(token!));
      await page.screenshot({ path: path.join(shots, 'oidc-signed-in.png'), fullPage: true });

      // The token is the session's: it calls the API as the member.
      const me = await fetch(`${gw.url}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(me.status, 200);
      assert.equal(((await me.json()) as { user: { id: string } }).user.id, 'u-member');
    } finally {
      await context.close();
    }
  });
  it('an identity no user is mapped to comes back to the sign-in page with the reason, and no session', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const page = await context.newPage();
      await page.goto(`${gw.url}/console/`);
      await page.getByRole('link', { name: 'Sign in with SSO' }).click();
      await page.waitForURL((url) => url.origin === provider.issuer);
      await page.locator('input[name="login"]').fill('sub-stranger');
      await page.locator('input[name="password"]').fill('any');
      await page.locator('button[type="submit"]').click();
      await page.getByRole('button', { name: /continue/i }).click();

      await page.getByRole('alert').filter({ hasText: 'no user of this gateway is mapped' }).waitFor({ timeout: 30_000 });
      assert.equal(new URL(page.url()).search, '', 'the error code is taken out of the address bar');
      assert.equal(await page.evaluate("sessionStorage.getItem('agw.console.token')"), null);
      assert.equal(await page.getByRole('navigation', { name: 'Console' }).count(), 0);
    } finally {
      await context.close();
    }
  });

  it('a sign-in past console.signInRateLimit comes back to the sign-in page saying so, as does a refused ticket exchange', async () => {
    const limited = await startTestGateway({
      store: gw.store,
      config: {
        console: { signInRateLimit: 1, oidc: { issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret } },
        plugins: { auth: { enabled: true } },
      },
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      // The one sign-in request a minute this address (127.0.0.1) has, used up.
      assert.equal((await fetch(`${limited.url}/console/auth/oidc/login`, { redirect: 'manual' })).status, 302);
      const page = await context.newPage();
      await page.goto(`${limited.url}/console/`);
      await page.getByRole('link', { name: 'Sign in with SSO' }).click();
      await page.getByRole('alert').filter({ hasText: 'Too many sign-in attempts' }).waitFor({ timeout: 30_000 });
      assert.equal(new URL(page.url()).search, '', 'the error code is taken out of the address bar');
      await page.screenshot({ path: path.join(shots, 'oidc-rate-limited.png'), fullPage: true });

      // Back from the provider with a ticket while still over the limit: the page's exchange gets 429.
      const host = new URL(limited.url).hostname;
      await context.addCookies([{ name: 'agw_console_ticket', value: 'any-ticket', domain: host, path: '/console/auth' }]);
      const back = await context.newPage();
      await back.goto(`${limited.url}/console/`);
      await back.getByRole('alert').filter({ hasText: 'Too many sign-in attempts' }).waitFor({ timeout: 30_000 });
      assert.equal(await back.evaluate("sessionStorage.getItem('agw.console.token')"), null);
    } finally {
      await context.close();
      await limited.close();
    }
  });
});
