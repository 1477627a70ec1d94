// Dashboard PNGs, drawn by headless Chromium (Debian `chromium`, driven by playwright-core) from the
// same page a browser gets. The page is served to Chromium from memory on an origin of its own that
// never resolves (`.invalid`, RFC 6761): its scripts come from the installed packages, and every other
// request it makes is refused, so rendering touches no network whatever the spec says.
//
// One browser per process, launched on first use and closed after a minute idle (a gateway that never
// renders a PNG never starts Chromium); at most two pages render at once, a few more wait their turn,
// and past those a rendering is refused (the link that asks needs no API key, so no rate limit applies).
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import type { Logger } from 'winston';
import { errorFields } from '../log/logger';
import { dashboardAsset } from './assets';
import { DASHBOARD_PAGE_HEADERS } from './page';

const ORIGIN = 'http://dashboard.invalid';
/** Where the page is "served": its relative asset paths resolve as they do on the gateway. */
const PAGE_PATH = '/v1/dashboards/render/view';
const ASSET_PREFIX = '/v1/dashboard_assets/';
const IDLE_MS = 60_000;
const MAX_CONCURRENT = 2;
const MAX_WAITING = 16;
const VIEWPORT = { width: 1100, height: 800 };

/** PNGs cannot be rendered on this machine (no Chromium, or it does not start). */
export class RendererUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RendererUnavailableError';
  }
}

export interface PngRendererOptions {
  chromiumPath: string;
  timeoutMs: number;
  /** Idle time after which the browser is closed (default one minute). */
  idleMs?: number;
  /** Renderings that may wait for a slot; past it a rendering is refused at once (default 16). */
  maxWaiting?: number;
}

export class DashboardPngRenderer {
  private browser: Promise<Browser> | null = null;
  private idle: NodeJS.Timeout | null = null;
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private closed = false;

  constructor(
    private readonly options: PngRendererOptions,
    private readonly logger: Logger,
  ) {}

  /** What the renderer holds now: whether a browser is running, pages rendering, renderings waiting. */
  state(): { browser: boolean; rendering: number; waiting: number } {
    return { browser: this.browser !== null, rendering: this.active, waiting: this.waiting.length };
  }

  /** Whether the configured Chromium is there to run. */
  async available(): Promise<boolean> {
    return access(this.options.chromiumPath, constants.X_OK).then(
      () => true,
      () => false,
    );
  }

  /** The chart of a dashboard page (dashboardPage's HTML) as PNG bytes. */
  async render(html: string): Promise<Buffer> {
    if (this.closed) throw new RendererUnavailableError('The renderer is shut down.');
    if (!(await this.available())) throw new RendererUnavailableError(`Chromium is not installed at ${this.options.chromiumPath}.`);
    await this.turn();
    try {
      const browser = await this.launch();
      const context = await browser.newContext({ viewport: VIEWPORT, serviceWorkers: 'block' });
      try {
        await context.route('**/*', async (route) => {
          const url = new URL(route.request().url());
          if (url.origin === ORIGIN && url.pathname === PAGE_PATH) {
            await route.fulfill({ status: 200, headers: { ...DASHBOARD_PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' }, body: html });
            return;
          }
          const asset = url.origin === ORIGIN && url.pathname.startsWith(ASSET_PREFIX) ? dashboardAsset(url.pathname.slice(ASSET_PREFIX.length)) : null;
          if (asset) {
            await route.fulfill({ status: 200, headers: { 'content-type': 'application/javascript; charset=utf-8' }, body: await asset });
            return;
          }
          await route.abort('blockedbyclient');
        });
        const page = await context.newPage();
        const timeout = this.options.timeoutMs;
        await page.goto(`${ORIGIN}${PAGE_PATH}`, { timeout, waitUntil: 'load' });
        // The page script sets body[data-state] once vega-embed has drawn the chart, or failed to.
        await page.waitForFunction("document.body.dataset.state !== 'loading'", undefined, { timeout });
        const state = await page.evaluate<string>('document.body.dataset.state');
        if (state !== 'rendered') {
          const reason = await page.evaluate<string>("(document.querySelector('#chart .error') || {}).textContent || 'unknown error'");
          throw new Error(`the chart did not render in Chromium: ${reason}`);
        }
        // The drawing alone (vega's svg.marks), without vega-embed's action menu beside it.
        return await page.locator('#chart svg.marks').screenshot({ type: 'png', timeout });
      } finally {
        await context.close().catch(() => undefined);
      }
    } finally {
      this.release();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.idle) clearTimeout(this.idle);
    const browser = this.browser;
    this.browser = null;
    if (browser) await browser.then((b) => b.close()).catch(() => undefined);
  }

  private launch(): Promise<Browser> {
    if (this.idle) {
      clearTimeout(this.idle);
      this.idle = null;
    }
    if (!this.browser) {
      const launching = (async () => {
        // Loaded on first use: a gateway that renders no PNG never loads playwright.
        const { chromium } = await import('playwright-core');
        const browser = await chromium.launch({ executablePath: this.options.chromiumPath, headless: true, timeout: this.options.timeoutMs });
        browser.on('disconnected', () => {
          if (this.browser === launching) this.browser = null;
        });
        return browser;
      })();
      this.browser = launching;
      launching.catch((err: unknown) => {
        if (this.browser === launching) this.browser = null;
        this.logger.warn('dashboard PNG renderer: Chromium did not start', { chromiumPath: this.options.chromiumPath, ...errorFields(err) });
      });
      return launching.catch((err: unknown) => {
        throw new RendererUnavailableError(`Chromium did not start: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
      });
    }
    return this.browser;
  }

  /** Waits for one of the MAX_CONCURRENT rendering slots. */
  private async turn(): Promise<void> {
    if (this.active < MAX_CONCURRENT) {
      this.active++;
      return;
    }
    if (this.waiting.length >= (this.options.maxWaiting ?? MAX_WAITING)) {
      throw new RendererUnavailableError('Too many PNG renderings are waiting; retry shortly.');
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) {
      next();
      return;
    }
    this.active--;
    if (this.active === 0 && this.browser && !this.closed) {
      this.idle = setTimeout(() => {
        this.idle = null;
        const browser = this.browser;
        this.browser = null;
        if (browser) void browser.then((b) => b.close()).catch(() => undefined);
      }, this.options.idleMs ?? IDLE_MS);
      this.idle.unref();
    }
  }
}
