// One conversation's browser session: its own browser context (cookies, storage, pages), its guard
// proxy, its captured requests, and one call at a time (two calls of one model turn would otherwise
// click on the same page at once).
//
// Every request a page makes passes the route handler first: a scheme other than http(s) is refused
// (file:, chrome:, and data: as a navigation; data: and blob: subresources are in-page content), and
// so is a URL whose host is a private literal or a name that resolves to a private address, unless the
// operator allow-listed it (tools.allowHosts). The guard proxy checks the connection itself again
// (guard-proxy.ts says why both).
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Browser, BrowserContext, Page, Request, Route } from 'playwright-core';
import type { BrowserToolsConfig } from '../../../config/types';
import { bareHost, isPrivateAddress, SsrfBlockedError } from '../../../providers/http/ssrf-guard';
import { ToolFailure } from '../../types';
import { checkUrl, WebAccessError, type HostAllowList } from '../../web-access';
import { GuardProxy, REFUSED_HEADER } from './guard-proxy';
import { NetworkLog } from './network-log';

/** How long a host's DNS verdict is reused by the route handler (the proxy checks every connection anyway). */
const VERDICT_TTL_MS = 30_000;
const MAX_VERDICTS = 1_000;
/** Tabs one conversation may have open; a tab opened past it is closed at once. */
export const MAX_PAGES = 8;

/** Why a URL is refused, from checkUrl's error (a WebAccessError, or SsrfBlockedError for a private literal). */
export function refusalReason(err: unknown, raw: string): string {
  if (err instanceof WebAccessError) return err.message;
  const host = err instanceof SsrfBlockedError ? err.host : raw.slice(0, 200);
  return `${host} is not reachable from this gateway (a private or special-purpose address).`;
}

/** The first line of a Playwright error, without its call log (selectors and URLs, no page content). */
export function playwrightMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (message.split('\nCall log:')[0] ?? message).trim().split('\n').slice(0, 3).join(' ');
}

/**
 * Script evaluation has no time limit of its own in Playwright: a page whose script never yields would
 * hold the session forever. This bounds it (the evaluation itself ends when the page or context does).
 */
export function bounded<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ToolFailure(`${what} took longer than ${ms} ms: the page's script is busy.`)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

export class BrowserSession {
  readonly network: NetworkLog;
  /** Calls in flight or waiting (the pool closes only an idle session). */
  busy = 0;
  lastUsed = Date.now();
  idleTimer: NodeJS.Timeout | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private page: Page | null = null;
  private closed = false;
  private readonly verdicts = new Map<string, { reason: string | null; until: number }>();
  /** Why the main frame's navigation during the current call was refused or failed, if it was. */
  private navigationProblem: string | null = null;

  private constructor(
    readonly conversationId: string,
    readonly orgId: string,
    readonly context: BrowserContext,
    readonly proxy: GuardProxy,
    private readonly allow: HostAllowList,
    config: BrowserToolsConfig,
  ) {
    this.network = new NetworkLog(config.maxCapturedRequests, config.maxPostDataBytes);
    this.network.attach(context);
    context.setDefaultTimeout(config.actionTimeoutMs);
    context.setDefaultNavigationTimeout(config.navigationTimeoutMs);
    context.on('page', (page) => {
      // A page that opens windows in a loop would otherwise fill the machine's memory: tabs past the
      // bound are closed as they open (never the page an action is working on).
      if (context.pages().length > MAX_PAGES) {
        void page.close().catch(() => undefined);
        return;
      }
      // A popup (target=_blank, window.open) becomes the page the next action works on.
      this.page = page;
      page.on('close', () => {
        if (this.page === page)
          this.page =
            context
              .pages()
              .filter((p) => p !== page)
              .at(-1) ?? null;
      });
    });
    context.on('response', (response) => {
      const request = response.request();
      const refused = response.headers()[REFUSED_HEADER];
      if (refused !== undefined && this.isMainNavigation(request)) {
        this.navigationProblem = `The navigation to ${request.url()} was refused: ${decodeURIComponent(refused)}`;
      }
    });
    context.on('requestfailed', (request) => {
      if (!this.isMainNavigation(request) || this.navigationProblem !== null) return;
      const errorText = request.failure()?.errorText ?? 'failed';
      // ERR_ABORTED: the page itself moved on (another navigation); not a failure of this call.
      if (errorText === 'net::ERR_ABORTED') return;
      const url = new URL(request.url());
      const refusal = this.proxy.refusalFor(url.hostname, url.port || (url.protocol === 'https:' ? '443' : '80'));
      this.navigationProblem = refusal
        ? `The navigation to ${request.url()} was refused: ${refusal}`
        : `The navigation to ${request.url()} failed: ${errorText}`;
    });
  }

  static async open(
    browser: Browser,
    ids: { conversationId: string; orgId: string },
    config: BrowserToolsConfig,
    allow: HostAllowList,
  ): Promise<BrowserSession> {
    const proxy = await GuardProxy.start(allow);
    try {
      const context = await browser.newContext({
        proxy: { server: proxy.url, username: proxy.username, password: proxy.password },
        viewport: { width: config.viewportWidth, height: config.viewportHeight },
        // A service worker's requests would not pass the route handler.
        serviceWorkers: 'block',
        acceptDownloads: false,
      });
      const session = new BrowserSession(ids.conversationId, ids.orgId, context, proxy, allow, config);
      await context.route('**/*', (route) => session.guard(route));
      return session;
    } catch (err) {
      await proxy.close();
      throw err;
    }
  }

  /**
   * Runs `work` after the session's earlier calls. The caller stops waiting when `signal` aborts,
   * but the next call still waits for `work` to settle (it holds the page).
   */
  run<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(async () => {
      if (this.closed) throw new ToolFailure('The browser session of this conversation was closed; call again to open a new one.');
      this.navigationProblem = null;
      return work();
    });
    this.queue = result.catch(() => undefined);
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(new ToolFailure('The browser call was stopped (time limit or cancelled).'));
      if (signal.aborted) onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      result.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** The page actions work on (the newest open one), opened when there is none. */
  async currentPage(): Promise<Page> {
    if (this.page && !this.page.isClosed()) return this.page;
    this.page = await this.context.newPage();
    return this.page;
  }

  /** The page, if one is open (a screenshot of nothing is refused rather than opening a blank page). */
  openPage(): Page | null {
    return this.page && !this.page.isClosed() ? this.page : null;
  }

  /** Throws the refusal or failure of the main frame's navigation during this call, if there was one. */
  throwNavigationProblem(): void {
    if (this.navigationProblem !== null) throw new ToolFailure(this.navigationProblem);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    await this.context.close().catch(() => undefined);
    await this.proxy.close();
  }

  private isMainNavigation(request: Request): boolean {
    if (!request.isNavigationRequest()) return false;
    try {
      const frame = request.frame();
      return frame.parentFrame() === null;
    } catch {
      // A service-worker request has no frame: not a page navigation.
      return false;
    }
  }

  private async guard(route: Route): Promise<void> {
    const request = route.request();
    const reason = await this.refusal(request);
    if (reason === null) {
      await route.continue().catch(() => undefined);
      return;
    }
    const entry = this.network.entryOf(request);
    if (entry) entry.failure = `refused: ${reason}`;
    if (this.isMainNavigation(request)) this.navigationProblem = `The navigation to ${request.url().slice(0, 300)} was refused: ${reason}`;
    await route.abort('blockedbyclient').catch(() => undefined);
  }

  /** Why the request may not go out, or null. */
  private async refusal(request: Request): Promise<string | null> {
    const raw = request.url();
    const scheme = raw.slice(0, raw.indexOf(':') + 1).toLowerCase();
    if (scheme === 'data:' || scheme === 'blob:') {
      // In-page content, except as a document: a data: page would run script with no origin to check.
      return request.isNavigationRequest() ? `${scheme} URLs are not opened as pages.` : null;
    }
    let url: URL;
    try {
      url = checkUrl(raw, this.allow);
    } catch (err) {
      return refusalReason(err, raw);
    }
    if (this.allow.allows(url) || isIP(bareHost(url.hostname)) !== 0) return null;
    return this.nameVerdict(bareHost(url.hostname).toLowerCase());
  }

  private async nameVerdict(host: string): Promise<string | null> {
    const cached = this.verdicts.get(host);
    if (cached && cached.until > Date.now()) return cached.reason;
    let reason: string | null;
    try {
      const addresses = await dnsLookup(host, { all: true });
      reason = addresses.some((entry) => isPrivateAddress(entry.address))
        ? `${host} is not reachable from this gateway (a private or special-purpose address).`
        : null;
    } catch {
      // Not resolvable here: the connection fails on its own; nothing private to protect.
      reason = null;
    }
    if (this.verdicts.size >= MAX_VERDICTS) this.verdicts.delete(this.verdicts.keys().next().value as string);
    this.verdicts.set(host, { reason, until: Date.now() + VERDICT_TTL_MS });
    return reason;
  }
}
