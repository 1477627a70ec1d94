// The console end to end in headless Chromium (Debian's chromium, driven by playwright-core), on both
// deployments (embedded store + inline queue; PostgreSQL + BullMQ with a worker): sign in with a key,
// read models with context window and price, create a key (shown once) and revoke it, trigger a run from
// the agent's form and watch it reach success with its verdicts, re-run a failed step, filter runs and
// the audit, read usage and cost, replay a stored response, read the DLP policy; a member never sees
// another user's keys, an unshared agent's runs or the admin pages. A screenshot of each page goes to
// test-artifacts/console/<deployment>/ (the run page's is copied to docs/console.png for the README).
import assert from 'node:assert/strict';
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import request from 'supertest';
import { startWorkerRuntime, type Runtime } from '../../src/runtime';
import { startFakeLlm, type FakeLlm } from '../agents/fake-llm';
import { BACKENDS, openBackend, type BackendEnv } from '../helpers/backends';
import { organizationsWithDlp } from '../helpers/config';
import { startTestGateway, TEST_KEYS, type TestGateway } from '../helpers/gateway';
import { ensureConsoleBuilt, ROOT } from './build';

const CHROMIUM = process.env['CHROMIUM_PATH'] || '/usr/bin/chromium';
const JUDGED = '7a000000-0000-4000-8000-000000000001';
const FLAKY = '7a000000-0000-4000-8000-000000000002';
const PRIVATE = '7a000000-0000-4000-8000-000000000003';

function consoleConfig(llm: FakeLlm): Record<string, unknown> {
  const shared = [{ user: 'u-member', permissions: ['view', 'edit'] }];
  return {
    plugins: { auth: { enabled: true }, audit: { enabled: true, flushIntervalMs: 20 } },
    providers: { demo: { type: 'demo' }, fake: { type: 'openai', baseUrl: llm.baseUrl, apiKey: 'sk-test' } },
    models: [
      { id: 'demo', provider: 'demo', created: 1700000000 },
      { id: 'fake', provider: 'fake', contextWindow: 128000, pricing: { input: 2.5, cachedInput: 1.25, output: 10 } },
    ],
    organizations: organizationsWithDlp({ enabled: true, detectors: ['email'] }),
    agents: [
      {
        id: JUDGED,
        organization: 'acme',
        name: 'Judged writer',
        description: 'Outlines a topic; the outline is judged.',
        createdBy: 'u-admin',
        sharedWith: shared,
        model: 'fake',
        inputs: [{ label: 'Topic', required: true }],
        steps: [{ name: 'Outline', prompt: 'Outline {{Topic}}.', objective: 'An outline of the topic.' }, { prompt: 'Summarise it.' }],
        timeoutSeconds: 60,
        triggers: [{ type: 'webhook' }],
      },
      {
        id: FLAKY,
        organization: 'acme',
        name: 'Flaky agent',
        description: 'Its first step fails until the upstream recovers.',
        createdBy: 'u-admin',
        sharedWith: shared,
        model: 'fake',
        inputs: [{ label: 'Topic', required: true }],
        steps: [{ name: 'Fragile', prompt: 'FLAKY work on {{Topic}}.', objective: 'Work on the topic.' }],
        timeoutSeconds: 60,
      },
      {
        id: PRIVATE,
        organization: 'acme',
        name: 'Admin private',
        description: 'Shared with nobody.',
        createdBy: 'u-admin',
        model: 'fake',
        steps: [{ prompt: 'Hi' }],
      },
    ],
  };
}

/** Waits until `locator` shows text matching `pattern`. */
async function waitForText(locator: Locator, pattern: RegExp, timeout = 30_000): Promise<void> {
  await locator.filter({ hasText: pattern }).first().waitFor({ timeout });
}

for (const backend of BACKENDS) {
  describe(`console end to end in Chromium (${backend})`, function () {
    this.timeout(120_000);
    const shots = path.join(ROOT, 'test-artifacts/console', backend.replace('/', '-'));
    let llm: FakeLlm;
    let deployment: BackendEnv | null = null;
    let gw: TestGateway;
    let worker: Runtime | null = null;
    let browser: Browser;
    let admin: BrowserContext;
    let page: Page;

    const api = (who: keyof typeof TEST_KEYS | string) => ({
      get: (url: string) =>
        request(gw.url)
          .get(url)
          .set('authorization', `Bearer ${who in TEST_KEYS ? TEST_KEYS[who as keyof typeof TEST_KEYS] : who}`),
      post: (url: string) =>
        request(gw.url)
          .post(url)
          .set('authorization', `Bearer ${who in TEST_KEYS ? TEST_KEYS[who as keyof typeof TEST_KEYS] : who}`),
    });
    const shot = async (p: Page, name: string) => {
      await p.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
    };
    const nav = (p: Page, name: string) => p.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();
    async function signIn(context: BrowserContext, key: string): Promise<Page> {
      const p = await context.newPage();
      await p.goto(`${gw.url}/console`);
      await p.getByLabel('API key').fill(key);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('navigation', { name: 'Console' }).waitFor();
      return p;
    }

    before(async function () {
      this.timeout(180_000);
      ensureConsoleBuilt();
      await mkdir(shots, { recursive: true });
      llm = await startFakeLlm();
      deployment = await openBackend(backend, 'console');
      gw = await startTestGateway({ config: { ...consoleConfig(llm), ...deployment.config }, ...(deployment.pg ? { store: deployment.pg.store } : {}) });
      if (backend === 'postgres/bullmq') worker = await startWorkerRuntime(gw.gateway.services);
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
      admin = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    });
    after(async () => {
      await browser?.close();
      await worker?.close();
      await gw?.close();
      await llm?.close();
      await deployment?.cleanup();
    });

    it('signs in with an API key (kept in session storage, never in the URL); a wrong key is refused', async () => {
      const p = await admin.newPage();
      await p.goto(`${gw.url}/console`);
      await shot(p, 'sign-in');
      await p.getByLabel('API key').fill('agw_not_a_real_key_000000000000000000');
      await p.getByRole('button', { name: 'Sign in' }).click();
      await waitForText(p.getByRole('alert'), /refused/);
      await p.getByLabel('API key').fill(TEST_KEYS.admin);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('navigation', { name: 'Console' }).waitFor();
      assert.equal(await p.evaluate("sessionStorage.getItem('agw.console.token')"), TEST_KEYS.admin);
      assert.doesNotMatch(p.url(), /agw_/);
      assert.equal(await p.evaluate('localStorage.length'), 0);
      // Admin pages are in the navigation for an admin.
      for (const name of ['Audit', 'DLP']) await p.getByRole('link', { name, exact: true }).waitFor();
      page = p;
    });

    it('lists the models with context window and price', async () => {
      await nav(page, 'Models');
      const row = page.getByRole('row', { name: /fake/ });
      await waitForText(row, /128,000 tokens/);
      assert.match(await row.innerText(), /\$2\.5[\s\S]*\$1\.25[\s\S]*\$10/);
      await shot(page, 'models');
    });

    it('creates a key restricted to a model, shows it once with a copy button, and revokes it', async () => {
      await nav(page, 'API keys');
      await page.getByLabel('Name').fill('console e2e key');
      await page.getByRole('checkbox', { name: 'fake' }).check();
      await page.getByRole('button', { name: 'Create key' }).click();
      const shown = page.getByRole('region', { name: 'New key' });
      await shown.waitFor();
      const key = await shown.getByLabel('New key value').inputValue();
      assert.match(key, /^agw_/);
      await shown.getByRole('button', { name: 'Copy' }).waitFor();
      await shot(page, 'keys-created');
      const models = await api(key).get('/v1/models').expect(200);
      assert.deepEqual(
        models.body.data.map((m: { id: string }) => m.id),
        ['fake'],
      );
      await shown.getByRole('button', { name: 'Done' }).click();
      await shown.waitFor({ state: 'detached' });
      await page.reload();
      await page.getByRole('row', { name: /console e2e key/ }).waitFor();
      assert.ok(!(await page.content()).includes(key), 'the key is never shown again');
      await page.getByRole('button', { name: 'Revoke console e2e key' }).click();
      await page.getByRole('button', { name: 'Confirm revoking console e2e key' }).click();
      await page.getByRole('row', { name: /console e2e key/ }).waitFor({ state: 'detached' });
      await api(key).get('/v1/models').expect(401);
      await page.getByLabel('Include revoked keys').check();
      await waitForText(page.getByRole('row', { name: /console e2e key/ }), /revoked/);
      await shot(page, 'keys');
    });

    it("triggers a run from the agent's form and watches it reach success with its verdicts", async () => {
      await nav(page, 'Agents');
      await shot(page, 'agents');
      await page.getByRole('link', { name: 'Judged writer' }).click();
      await waitForText(page.locator('dl'), /Configured/);
      await page.getByLabel('Topic').fill('tides');
      await shot(page, 'agent');
      await page.getByRole('button', { name: 'Start run' }).click();
      await page.waitForURL(/\/console\/runs\/[0-9a-f-]{36}$/);
      const runId = page.url().split('/').pop()!;
      await waitForText(page.getByRole('status', { name: 'Run status' }), /success/);
      const steps = page.getByRole('table', { name: 'Steps' });
      await waitForText(steps.getByRole('row', { name: /Outline/ }), /pass/);
      await waitForText(page.getByRole('region', { name: 'Result' }), /Answer to: Summarise it\./);
      await waitForText(page.getByRole('list', { name: 'Conversation items' }), /Outline tides\./);
      const stored = await api('admin').get(`/v1/runs/${runId}`).expect(200);
      assert.equal(stored.body.status, 'success');
      await shot(page, 'run');
      if (backend === 'embedded/inline') await copyFile(path.join(shots, 'run.png'), path.join(ROOT, 'docs/console.png'));
    });

    it('re-runs the failed step of a run: same run, back to success', async () => {
      llm.flaky = true;
      await nav(page, 'Agents');
      await page.getByRole('link', { name: 'Flaky agent' }).click();
      await page.getByLabel('Topic').fill('storms');
      await page.getByRole('button', { name: 'Start run' }).click();
      await page.waitForURL(/\/console\/runs\/[0-9a-f-]{36}$/);
      const runId = page.url().split('/').pop()!;
      await waitForText(page.getByRole('status', { name: 'Run status' }), /failure/);
      await waitForText(page.getByRole('region', { name: 'Run error' }), /upstream_error/);
      await shot(page, 'run-failed');
      llm.flaky = false;
      await page.getByRole('button', { name: 'Re-run failed step' }).click();
      await waitForText(page.getByRole('status', { name: 'Run status' }), /success/);
      assert.equal(page.url().split('/').pop(), runId, 'the same run');
      assert.equal((await api('admin').get(`/v1/runs/${runId}`).expect(200)).body.status, 'success');
      llm.flaky = true;
    });

    it('lists runs filtered by agent and status, newest first', async () => {
      const privateRun = await api('admin').post('/v1/agents/runs').send({ agentId: PRIVATE, inputs: [] }).expect(202);
      await nav(page, 'Runs');
      const table = page.getByRole('table', { name: 'Runs' });
      await waitForText(table, /Admin private/);
      await page.getByLabel('Agent').selectOption({ label: 'Flaky agent' });
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await table.getByRole('row', { name: /Admin private/ }).waitFor({ state: 'detached' });
      const rows = table.locator('tbody tr');
      assert.ok((await rows.count()) >= 1);
      for (const text of await rows.allInnerTexts()) assert.match(text, /Flaky agent/);
      await page.getByLabel('Status').selectOption('failure');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await waitForText(table, /No runs match/);
      await page.getByLabel('Status').selectOption('');
      await page.getByLabel('Agent').selectOption('');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await waitForText(table, /Admin private/);
      await shot(page, 'runs');
      void privateRun;
    });

    it('a first page of runs that fails shows the error and none of the rows listed for the earlier filters', async () => {
      await nav(page, 'Runs');
      const table = page.getByRole('table', { name: 'Runs' });
      await waitForText(table, /Admin private/);
      await page.route(/\/v1\/runs\?/, (route) =>
        route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ error: { message: 'runs unavailable', type: 'server_error' } }) }),
      );
      try {
        await page.getByRole('button', { name: 'Apply filters' }).click();
        await waitForText(page.getByRole('alert'), /runs unavailable/);
        await waitForText(table, /No runs match/);
        assert.equal(await table.getByRole('link').count(), 0, 'no run of the earlier answer is still listed');
      } finally {
        await page.unroute(/\/v1\/runs\?/);
      }
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await waitForText(table, /Admin private/);
      assert.equal(await page.getByRole('alert').count(), 0);
    });

    it('filters the audit by operation and status, newest first', async () => {
      await nav(page, 'Audit');
      const table = page.getByRole('table', { name: 'Audit records' });
      await waitForText(table, /createRun/);
      await page.getByLabel('Operation').fill('createRun');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      // The unfiltered rows stay listed until the filtered page arrives: wait for them to go.
      await table
        .locator('tbody tr')
        .filter({ hasNotText: /createRun/ })
        .first()
        .waitFor({ state: 'detached' });
      await waitForText(table, /createRun/);
      const texts = await table.locator('tbody tr').allInnerTexts();
      assert.ok(texts.length >= 3, texts.join('\n'));
      for (const text of texts) assert.match(text, /createRun/);
      const times = await table.locator('tbody tr td:first-child').allInnerTexts();
      const parsed = times.map((t) => Date.parse(t));
      if (parsed.every((t) => !Number.isNaN(t)))
        assert.deepEqual(
          [...parsed].sort((a, b) => b - a),
          parsed,
          'newest first',
        );
      await page.getByLabel('Operation').fill('');
      await page.getByLabel('Status').fill('4xx');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await table
        .getByRole('row', { name: /createRun/ })
        .first()
        .waitFor({ state: 'detached' });
      for (const text of await table.locator('tbody tr').allInnerTexts()) assert.match(text, /\b4\d\d\b|No audit records/);
      await shot(page, 'audit');
    });

    it('reads usage and cost by day, model, user and key', async () => {
      await nav(page, 'Usage and cost');
      const byModel = page.getByRole('img', { name: /By model/ });
      await byModel.waitFor();
      assert.match((await byModel.textContent()) ?? '', /fake[\s\S]*\$/);
      await page.getByRole('img', { name: /By day/ }).waitFor();
      await page.getByRole('img', { name: /By user/ }).waitFor();
      assert.match((await page.getByRole('img', { name: /By user/ }).textContent()) ?? '', /u-admin/);
      await page.getByRole('img', { name: /By key/ }).waitFor();
      const totals = page.getByLabel('Totals');
      await waitForText(totals, /\$\d/);
      await shot(page, 'usage');
    });

    it('lists stored responses and replays one (input and output)', async () => {
      const created = await api('admin').post('/v1/responses').send({ model: 'demo', input: 'Replay me please', store: true }).expect(200);
      await nav(page, 'Conversations');
      await page.getByRole('link', { name: created.body.id }).click();
      await waitForText(page.getByRole('list', { name: 'Input items' }), /Replay me please/);
      await page.getByRole('list', { name: 'Output items' }).waitFor();
      await shot(page, 'conversation');
    });

    it('pages stored responses and the filtered audit with More, each page once, the filters kept', async () => {
      // 55 stored responses: three pages of the Conversations list (20 a page), two of the audit (50 a page).
      const mine: string[] = [];
      for (let i = 0; i < 55; i += 1)
        mine.push(
          (
            await api('admin')
              .post('/v1/responses')
              .send({ model: 'demo', input: `Page me ${i}`, store: true })
              .expect(200)
          ).body.id,
        );
      const rowsOf = (label: string) => page.getByRole('table', { name: label }).locator('tbody tr');
      const more = page.getByRole('button', { name: 'More' });

      await nav(page, 'Conversations');
      const stored = page.getByRole('table', { name: 'Stored responses' });
      await stored.getByRole('link', { name: mine[54]!, exact: true }).waitFor();
      assert.equal(await rowsOf('Stored responses').count(), 20);
      for (let pages = 1; (await more.count()) > 0; pages += 1) {
        assert.ok(pages < 10, 'the list ends');
        const before = await rowsOf('Stored responses').count();
        await more.click();
        await rowsOf('Stored responses').nth(before).waitFor();
      }
      const listed = await stored.locator('tbody tr th a').allInnerTexts();
      assert.equal(new Set(listed).size, listed.length, 'no response listed twice');
      assert.deepEqual(
        listed.filter((id) => mine.includes(id)),
        [...mine].reverse(),
        'every one, newest first',
      );

      const audit = rowsOf('Audit records');
      await nav(page, 'Audit');
      await audit
        .filter({ hasNotText: /createResponse/ })
        .first()
        .waitFor();
      await page.getByLabel('Operation').fill('createResponse');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await audit
        .filter({ hasNotText: /createResponse/ })
        .first()
        .waitFor({ state: 'detached' });
      assert.equal(await audit.count(), 50);
      await more.click();
      await audit.nth(50).waitFor();
      const texts = await audit.allInnerTexts();
      assert.ok(texts.length >= 55, `${texts.length} records`);
      for (const text of texts) assert.match(text, /createResponse/, 'the second page keeps the filter');
    });

    it("shows the organization's DLP policy read-only", async () => {
      await nav(page, 'DLP');
      await waitForText(page.getByRole('list', { name: 'Detectors' }), /email/);
      assert.equal(await page.getByRole('textbox').count(), 0, 'read-only');
      await shot(page, 'dlp');
    });

    it("a member never sees another user's keys, an unshared agent's runs or the admin pages", async () => {
      await api('admin').post('/v1/keys').send({ name: 'admin-only key' }).expect(201);
      const memberRun = await api('member')
        .post('/v1/agents/runs')
        .send({ agentId: JUDGED, inputs: [{ name: 'Topic', value: 'moons' }] })
        .expect(202);
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      try {
        const m = await signIn(context, TEST_KEYS.member);
        const navigation = m.getByRole('navigation', { name: 'Console' });
        assert.equal(await navigation.getByRole('link', { name: 'Audit', exact: true }).count(), 0);
        assert.equal(await navigation.getByRole('link', { name: 'DLP', exact: true }).count(), 0);
        await nav(m, 'API keys');
        await waitForText(m.getByRole('table', { name: 'Keys' }), /No keys|member/i);
        assert.equal(await m.getByLabel('Key scope').count(), 0, 'no organization scope for a member');
        assert.ok(!(await m.content()).includes('admin-only key'));
        await nav(m, 'Runs');
        const table = m.getByRole('table', { name: 'Runs' });
        await table.getByRole('link', { name: memberRun.body.runId.slice(0, 8) }).waitFor();
        assert.ok(!(await table.innerText()).includes('Admin private'), "the unshared agent's runs are not listed");
        await shot(m, 'member-runs');
        await m.goto(`${gw.url}/console/audit`);
        await m.getByRole('heading', { name: 'Not found' }).waitFor();
      } finally {
        await context.close();
      }
    });
  });
}
