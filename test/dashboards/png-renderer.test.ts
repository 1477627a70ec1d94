// The dashboard PNG renderer on the real Chromium: the chart as a valid PNG, no network touched
// whatever the spec asks for, at most two renderings at once, the browser closed when idle or shut
// down, and a clear "unavailable" without Chromium.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dashboardPage } from '../../src/dashboards/page';
import { DashboardPngRenderer, RendererUnavailableError } from '../../src/dashboards/png-renderer';
import { createLogger } from '../../src/log/logger';
import { waitFor } from '../helpers/wait';
import { assertPng } from './png-check';

const CHROMIUM = '/usr/bin/chromium';
const logger = createLogger({ level: 'error', silent: true });
const DATA = [
  { region: 'north', revenue: 120 },
  { region: 'south', revenue: 80 },
];
const BAR = { mark: 'bar', encoding: { x: { field: 'region', type: 'nominal' }, y: { field: 'revenue', type: 'quantitative' } } };

function page(spec: Record<string, unknown>, data: Record<string, unknown>[] = DATA): string {
  return dashboardPage({ title: 'Test', version: 1, updatedAt: new Date().toISOString(), spec, data }, '../../dashboard_assets/');
}

describe('dashboard PNG renderer', function () {
  this.timeout(60_000);
  let renderer: DashboardPngRenderer;
  before(() => {
    renderer = new DashboardPngRenderer({ chromiumPath: CHROMIUM, timeoutMs: 20_000 }, logger);
  });
  after(() => renderer.close());

  it('renders the chart as a valid PNG', async () => {
    const { width, height } = assertPng(await renderer.render(page(BAR)));
    assert.ok(width > 40 && height > 100, `${width}x${height}`);
  });

  it('asks nothing of the network, whatever the spec points at', async () => {
    let hits = 0;
    const server: Server = createServer((_req, res) => {
      hits++;
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      // Image marks load their URLs when drawn: the chart still renders, without them.
      const images = { mark: 'image', encoding: { x: { field: 'region', type: 'nominal' }, url: { value: `${origin}/logo.png` } } };
      assertPng(await renderer.render(page(images)));
      // A layer with its own data URL: whatever becomes of the chart, nothing is fetched.
      const layered = { layer: [BAR, { data: { url: `${origin}/more.json` }, mark: 'point', encoding: { x: { field: 'region', type: 'nominal' } } }] };
      await renderer.render(page(layered)).catch(() => null);
      assert.equal(hits, 0);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('renders at most two pages at once, the others waiting their turn', async () => {
    let most = 0;
    let waited = 0;
    const renders = Array.from({ length: 5 }, () => renderer.render(page(BAR)));
    const watch = setInterval(() => {
      const { rendering, waiting } = renderer.state();
      most = Math.max(most, rendering);
      waited = Math.max(waited, waiting);
    }, 5);
    try {
      for (const png of await Promise.all(renders)) assertPng(png);
    } finally {
      clearInterval(watch);
    }
    assert.equal(most, 2);
    assert.ok(waited >= 2, `waiting at most: ${waited}`);
    assert.equal(renderer.state().rendering, 0);
  });

  it('refuses a rendering at once when too many are already waiting', async () => {
    const busy = new DashboardPngRenderer({ chromiumPath: CHROMIUM, timeoutMs: 20_000, maxWaiting: 1 }, logger);
    try {
      // Two render, one waits, the fourth is refused (which one is the fourth is up to the event loop).
      const outcomes = await Promise.allSettled([1, 2, 3, 4].map(() => busy.render(page(BAR))));
      const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      assert.equal(refused.length, 1);
      assert.ok(refused[0]!.reason instanceof RendererUnavailableError);
      assert.equal((refused[0]!.reason as Error).message, 'Too many PNG renderings are waiting; retry shortly.');
      for (const o of outcomes) if (o.status === 'fulfilled') assertPng(o.value);
    } finally {
      await busy.close();
    }
  });

  it('closes the browser when idle, and starts it again when needed', async () => {
    const idle = new DashboardPngRenderer({ chromiumPath: CHROMIUM, timeoutMs: 20_000, idleMs: 200 }, logger);
    try {
      assert.equal(idle.state().browser, false, 'not started until a PNG is asked for');
      await idle.render(page(BAR));
      assert.equal(idle.state().browser, true);
      await waitFor(() => !idle.state().browser, { timeoutMs: 5000, what: 'the idle browser to close' });
      assertPng(await idle.render(page(BAR)));
    } finally {
      await idle.close();
    }
    assert.equal(idle.state().browser, false);
    await assert.rejects(idle.render(page(BAR)), RendererUnavailableError);
  });

  it('says rendering is unavailable without Chromium', async () => {
    const none = new DashboardPngRenderer({ chromiumPath: '/nonexistent/chromium', timeoutMs: 5000 }, logger);
    assert.equal(await none.available(), false);
    await assert.rejects(none.render(page(BAR)), (err: unknown) => {
      assert.ok(err instanceof RendererUnavailableError);
      assert.equal(err.message, 'Chromium is not installed at /nonexistent/chromium.');
      return true;
    });
  });
});
