// svc_dashboard_generate and svc_dashboard_update on a real gateway: the chart checked by compiling
// and drawing it (a spec that does not compile is a failure with the compiler's message), stored per
// organization and versioned, served through signed expiring links as a page that Chromium renders
// offline (scripts from the gateway only), as JSON, and as a PNG.
import assert from 'node:assert/strict';
import { chromium, type Browser } from 'playwright-core';
import request from 'supertest';
import { dashboardLinkSecret, signDashboardLink } from '../../src/dashboards/links';
import { createLogger } from '../../src/log/logger';
import { HOSTED_TOOL_FACTORIES } from '../../src/tools/catalog';
import { dashboardTools } from '../../src/tools/hosted/dashboards';
import { ToolRegistry } from '../../src/tools/registry';
import { ToolFailure } from '../../src/tools/types';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { assertPng } from '../dashboards/png-check';
import { storeToolHarness, type StoreToolHarness } from './store-tool-deps';

const CHROMIUM = '/usr/bin/chromium';
const SALES = [
  { region: 'north', revenue: 120 },
  { region: 'south', revenue: 80 },
  { region: 'west', revenue: 45 },
];
const BAR = { mark: 'bar', encoding: { x: { field: 'region', type: 'nominal' }, y: { field: 'revenue', type: 'quantitative' } } };

interface Made {
  dashboard_id: string;
  version: number;
  title: string;
  url: string;
  spec_url: string;
  png_url?: string;
  link_expires_at: string;
  rows: number;
  marks: number;
  warnings?: string[];
  note?: string;
}

describe('dashboards: svc_dashboard_generate, svc_dashboard_update and their pages', function () {
  this.timeout(120_000);
  let gw: TestGateway;
  let h: StoreToolHarness;
  let browser: Browser;

  before(async () => {
    gw = await startTestGateway({ config: { plugins: { auth: { enabled: true } } } });
    // The tools' links name the gateway as users reach it (server.publicUrl).
    h = await storeToolHarness(dashboardTools, gw.store, testConfig({ server: { publicUrl: gw.url }, tools: { dashboards: { maxDataRows: 50 } } }));
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  });
  after(async () => {
    await browser?.close();
    await h?.close();
    await gw?.close();
  });

  const run = async (type: 'svc_dashboard_generate' | 'svc_dashboard_update', args: Record<string, unknown>, orgId = 'acme'): Promise<Made> =>
    JSON.parse((await h.tool(type).execute(args, h.ctx(orgId))).output) as Made;
  const generate = (args: Record<string, unknown>, orgId?: string) => run('svc_dashboard_generate', args, orgId);
  const update = (args: Record<string, unknown>, orgId?: string) => run('svc_dashboard_update', args, orgId);
  const fetchLink = (url: string) => request(gw.url).get(url.slice(gw.url.length));

  it('generate checks the chart, stores it per organization and returns a signed link with the spec and PNG beside it', async () => {
    const made = await generate({ title: 'Revenue by region', data: SALES, spec: BAR });
    assert.match(made.dashboard_id, /^dash_[0-9a-f]{32}$/);
    assert.equal(made.version, 1);
    assert.equal(made.title, 'Revenue by region');
    assert.match(made.url, new RegExp(`^${gw.url}/v1/dashboards/${made.dashboard_id}/view\\?expires=\\d+&signature=[A-Za-z0-9_-]{43}$`));
    assert.equal(made.spec_url, `${made.url}&format=json`);
    assert.equal(made.png_url, `${made.url}&format=png`);
    const ttl = Date.parse(made.link_expires_at) - Date.now();
    assert.ok(ttl > 604_700_000 && ttl <= 604_800_000, 'valid for tools.dashboards.linkTtlSeconds (7 days)');
    assert.equal(made.rows, 3);
    assert.equal(made.marks, 3, 'three bars drawn');
    assert.equal(made.warnings, undefined);
    const stored = await gw.store.dashboards.get(made.dashboard_id);
    assert.equal(stored?.orgId, 'acme');
    assert.equal(stored?.createdBy, 'u-admin');
    assert.equal(stored?.conversationId, 'conv-test');
    assert.deepEqual(stored?.data, SALES);
    assert.deepEqual(stored?.spec, BAR);
  });

  it('serves a page that Chromium renders offline: only the gateway is asked for anything, and the chart is an <svg> with its marks', async () => {
    const made = await generate({ title: 'Bars <b>&</b> "quotes"', data: SALES, spec: BAR });
    const res = await fetchLink(made.url).expect(200);
    assert.match(res.headers['content-type'] ?? '', /^text\/html/);
    assert.match(res.headers['content-security-policy'] ?? '', /default-src 'none'; script-src 'self' 'unsafe-eval'/);
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.match(res.text, /<title>Bars &#60;b&#62;&#38;&#60;\/b&#62; &#34;quotes&#34;<\/title>/, 'the title is escaped');
    assert.ok(!/src="(https?:)?\/\//.test(res.text), 'no script from another site (no CDN)');

    const page = await browser.newPage();
    try {
      const requested: string[] = [];
      page.on('request', (r) => requested.push(r.url()));
      await page.goto(made.url);
      await page.waitForFunction("document.body.dataset.state !== 'loading'", undefined, { timeout: 30_000 });
      assert.equal(await page.evaluate<string>('document.body.dataset.state'), 'rendered');
      // Vega's drawing is the svg.marks (vega-embed's action menu has an icon svg of its own).
      assert.equal(await page.locator('#chart svg.marks').count(), 1);
      assert.equal(await page.locator('#chart svg.marks .mark-rect.role-mark path').count(), 3, 'one path per bar');
      assert.ok(requested.length >= 5, 'the page and its four scripts');
      assert.deepEqual(
        requested.filter((url) => !url.startsWith(`${gw.url}/`)),
        [],
      );
    } finally {
      await page.close();
    }
  });

  it('serves the spec with its data as JSON, and the chart as a valid PNG', async () => {
    const made = await generate({ title: 'Sales', data: SALES, spec: BAR });
    const json = await fetchLink(made.spec_url).expect(200);
    assert.deepEqual(json.body, { ...BAR, data: { values: SALES } });
    const png = await fetchLink(made.png_url!)
      .buffer(true)
      .parse((r, done) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    assert.equal(png.headers['content-type'], 'image/png');
    const { width, height } = assertPng(png.body as Buffer);
    // Three bars with their axes: about 100 by 200 pixels (the drawing alone, no page margins).
    assert.ok(width >= 60 && height >= 150, `a chart-sized image, ${width}x${height}`);
  });

  it('update changes data (or csv), spec and title, keeps the rest, and the same link shows the new version', async () => {
    const made = await generate({ title: 'Quarterly', data: SALES, spec: BAR });
    const csv = await update({ dashboard_id: made.dashboard_id, csv: 'region,revenue\nnorth,10\nsouth,20\neast,30\nwest,40\n' });
    assert.equal(csv.version, 2);
    assert.equal(csv.rows, 4);
    assert.equal(csv.marks, 4);
    assert.deepEqual(
      (await fetchLink(made.spec_url).expect(200)).body.data.values[2],
      { region: 'east', revenue: 30 },
      'the old link, the new data, numbers cast',
    );
    const retitled = await update({ dashboard_id: made.dashboard_id, title: 'Quarterly, revised' });
    assert.equal(retitled.version, 3);
    assert.equal(retitled.rows, 4, 'data kept');
    const line = await update({ dashboard_id: made.dashboard_id, spec: { ...BAR, mark: 'line' } });
    assert.equal(line.version, 4);
    const served = (await fetchLink(made.spec_url).expect(200)).body;
    assert.equal(served.mark, 'line');
    assert.equal(served.data.values.length, 4);
    const page = await fetchLink(made.url).expect(200);
    assert.match(page.text, /<title>Quarterly, revised<\/title>/);
    assert.match(page.text, /Version 4/);
  });

  it('refuses a spec that does not compile or render, with the library’s message, and stores nothing', async () => {
    const before = (await gw.store.dashboards.listByOrg('acme', 100)).length;
    const failure = async (args: Record<string, unknown>, pattern: RegExp): Promise<void> => {
      await assert.rejects(generate({ title: 'Bad', data: SALES, ...args }), (err: unknown) => {
        assert.ok(err instanceof ToolFailure, String(err));
        assert.match(err.message, pattern);
        return true;
      });
    };
    await failure({ spec: { mark: 'pie' } }, /^The Vega-Lite spec does not compile: .*unknown mark type "pie"; Vega-Lite's are arc, area, bar/);
    await failure({ spec: { encoding: { x: { field: 'region' } } } }, /^The Vega-Lite spec does not compile: Invalid specification/);
    await failure(
      { spec: { ...BAR, transform: [{ calculate: 'datum.revenue +', as: 'x2' }] } },
      /^The Vega-Lite spec does not compile: Unexpected end of input/,
    );
    await failure({ spec: { ...BAR, data: { url: 'http://127.0.0.1:9/data.json' } }, data: undefined }, /Give the records to chart/);
    await failure(
      { spec: { ...BAR, transform: [{ lookup: 'region', from: { data: { url: 'http://127.0.0.1:9/x.json' }, key: 'region', fields: ['y'] } }] } },
      /spec\.transform\[0\]\.from\.data\.url: dashboards draw only the data given/,
    );
    assert.equal((await gw.store.dashboards.listByOrg('acme', 100)).length, before);

    const made = await generate({ title: 'Good', data: SALES, spec: BAR });
    await assert.rejects(update({ dashboard_id: made.dashboard_id, spec: { mark: 'pie' } }), /does not compile/);
    assert.equal((await gw.store.dashboards.get(made.dashboard_id))?.version, 1, 'a failed update changes nothing');
  });

  it('warns about fields that are not in the data and about a chart without marks', async () => {
    const made = await generate({ title: 'Typo', data: SALES, spec: { ...BAR, encoding: { ...BAR.encoding, y: { field: 'revenu', type: 'quantitative' } } } });
    // Ours first, then Vega's own (an empty extent for the missing field).
    assert.equal(made.warnings?.[0], 'Field "revenu" is not in the data (its fields: region, revenue).');
    assert.ok(made.warnings?.some((w) => /Infinite extent for field "revenu/.test(w)));
    const empty = await generate({ title: 'Empty', data: SALES, spec: { ...BAR, transform: [{ filter: 'datum.revenue > 1000' }] } });
    assert.equal(empty.marks, 0);
    assert.match(empty.note ?? '', /draws no marks/);
  });

  it('takes the spec’s inline values or csv, and bounds the data', async () => {
    const inline = await generate({ title: 'Inline', spec: { ...BAR, data: { values: SALES } } });
    assert.equal(inline.rows, 3);
    assert.deepEqual((await gw.store.dashboards.get(inline.dashboard_id))?.spec, BAR, 'stored without its data');
    for (const [args, pattern] of [
      [{ data: SALES, csv: 'a\n1' }, /data or as csv, not both/],
      [{ data: Array.from({ length: 51 }, (_, i) => ({ region: `r${i}`, revenue: i })) }, /more than 50 rows/],
      [{ csv: 'region,revenue\n"north,1\n' }, /^The CSV does not parse: /],
      [{ data: [1, 2, 3] }, /array of records/],
      [{ data: [{ region: 'a\u0000b', revenue: 1 }] }, /NUL character/],
    ] as const) {
      await assert.rejects(generate({ title: 'Limits', spec: BAR, ...args }), (err: unknown) => err instanceof ToolFailure && pattern.test(err.message));
    }
    await assert.rejects(update({ dashboard_id: inline.dashboard_id }), /Give at least one of title, data, csv or spec/);
  });

  it("keeps organizations apart: another organization's dashboard cannot be updated or fetched with its API key", async () => {
    const made = await generate({ title: 'Ours', data: SALES, spec: BAR });
    await assert.rejects(
      update({ dashboard_id: made.dashboard_id, title: 'Theirs now' }, 'other'),
      /No dashboard with id "dash_[0-9a-f]+" in this organization/,
    );
    const notFound = await request(gw.url).get(`/v1/dashboards/${made.dashboard_id}`).set(gw.auth('outsider')).expect(404);
    assert.deepEqual(notFound.body.error, {
      message: `No dashboard found with id '${made.dashboard_id}'.`,
      type: 'invalid_request_error',
      code: null,
      param: 'dashboard_id',
    });
    await request(gw.url).delete(`/v1/dashboards/${made.dashboard_id}`).set(gw.auth('outsider')).expect(404);
    const theirs = await request(gw.url).get('/v1/dashboards').set(gw.auth('outsider')).expect(200);
    assert.ok(!theirs.body.data.some((d: { id: string }) => d.id === made.dashboard_id));

    const ours = await request(gw.url).get(`/v1/dashboards/${made.dashboard_id}`).set(gw.auth('member')).expect(200);
    assert.equal(ours.body.object, 'dashboard');
    assert.deepEqual(ours.body.spec, { ...BAR, data: { values: SALES } });
    // A fresh signed link that works.
    assert.match(ours.body.url, new RegExp(`^${gw.url}/v1/dashboards/${made.dashboard_id}/view\\?`));
    await fetchLink(ours.body.url).expect(200);
    const list = await request(gw.url).get('/v1/dashboards?limit=100').set(gw.auth('member')).expect(200);
    assert.ok(list.body.data.some((d: { id: string; title: string }) => d.id === made.dashboard_id && d.title === 'Ours'));
  });

  it('links: an expired one is 403, a forged or borrowed one 404, and none works once the dashboard is deleted', async () => {
    const made = await generate({ title: 'Linked', data: SALES, spec: BAR });
    const other = await generate({ title: 'Other', data: SALES, spec: BAR });
    const secret = await dashboardLinkSecret(gw.store);
    const expired = signDashboardLink(secret, gw.url, made.dashboard_id, Math.floor(Date.now() / 1000) - 5);
    const res = await fetchLink(expired.url).expect(403);
    assert.deepEqual(res.body.error, {
      message: 'This dashboard link has expired; ask for a new one.',
      type: 'permission_error',
      code: 'link_expired',
      param: null,
    });
    const url = new URL(made.url);
    const signature = url.searchParams.get('signature')!;
    // The first character changes: the last one of a base64url HMAC also holds unused bits, where A and B can decode alike.
    const forged = made.url.replace(signature, `${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`);
    await fetchLink(forged).expect(404);
    const later = made.url.replace(/expires=(\d+)/, (_m, n: string) => `expires=${Number(n) + 3600}`);
    await fetchLink(later).expect(404);
    await fetchLink(made.url.replace(made.dashboard_id, other.dashboard_id)).expect(404);
    await fetchLink(made.url.replace(/&signature=[^&]+/, '')).expect(400);
    await request(gw.url).delete(`/v1/dashboards/${made.dashboard_id}`).set(gw.auth('admin')).expect(200);
    await fetchLink(made.url).expect(404);
  });

  it('serves the page scripts from the installed packages', async () => {
    const vega = await request(gw.url).get('/v1/dashboard_assets/vega-embed.min.js').expect(200);
    assert.match(vega.headers['content-type'] ?? '', /^application\/javascript/);
    assert.match(vega.text, /vegaEmbed/);
    await request(gw.url).get('/v1/dashboard_assets/vega-lite.min.js').expect(200);
    await request(gw.url).get('/v1/dashboard_assets/package.json').expect(404);
    await request(gw.url).get('/v1/dashboard_assets/..%2Fpackage.json').expect(404);
  });

  it('without Chromium: the tool gives no PNG link and a PNG asked for is a 503; pages still work', async () => {
    const missing = '/nonexistent/chromium';
    const noBrowser = await startTestGateway({ store: gw.store, config: { tools: { browser: { executablePath: missing } } } });
    const h2 = await storeToolHarness(
      dashboardTools,
      gw.store,
      testConfig({ server: { publicUrl: noBrowser.url }, tools: { browser: { executablePath: missing } } }),
    );
    try {
      const made = JSON.parse((await h2.tool('svc_dashboard_generate').execute({ title: 'No PNG', data: SALES, spec: BAR }, h2.ctx())).output) as Made;
      assert.equal(made.png_url, undefined);
      const res = await request(noBrowser.url)
        .get(`${made.url.slice(noBrowser.url.length)}&format=png`)
        .expect(503);
      assert.deepEqual(res.body.error, {
        message: 'PNG rendering is not available on this gateway: Chromium is not installed at /nonexistent/chromium.',
        type: 'server_error',
        code: 'unavailable',
        param: null,
      });
      await request(noBrowser.url).get(made.url.slice(noBrowser.url.length)).expect(200);
    } finally {
      await h2.close();
      await noBrowser.close();
    }
  });

  it('is in the hosted catalog', async () => {
    const registry = await ToolRegistry.create({ ...h.deps, logger: createLogger({ level: 'error', silent: true }) }, HOSTED_TOOL_FACTORIES);
    try {
      assert.ok(registry.get('acme', 'svc_dashboard_generate'));
      assert.ok(registry.get('acme', 'svc_dashboard_update'));
    } finally {
      await registry.close();
    }
  });
});
