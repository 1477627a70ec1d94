// One headless Chromium per gateway process (launched on first use, relaunched after a crash) and one
// browser session per conversation, bounded: at most tools.browser.maxContexts open at once (opening
// one more closes the least recently used idle one), each closed after idleTimeoutMs without a call,
// when the conversation is forgotten, and at shutdown.
import { access, constants } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import type { Logger } from 'winston';
import type { BrowserToolsConfig } from '../../../config/types';
import { runNodeScript } from '../../../node-script';
import { ToolFailure, type EgressState, type ToolCallContext } from '../../types';
import type { HostAllowList } from '../../web-access';
import { BrowserSession, playwrightMessage } from './session';

/**
 * UDP does not go through the context's proxy: WebRTC could open flows to any address and QUIC could
 * reach a host over HTTP/3, both past the guard. Neither is allowed to.
 */
const LAUNCH_ARGS = ['--force-webrtc-ip-handling-policy=disable_non_proxied_udp', '--disable-quic'];

/**
 * Whether an executable starts is a fact about this machine, not about one gateway: it is found out
 * once per process (every app a process builds, e.g. each test's, would otherwise launch Chromium at
 * start-up). A failed answer is not kept, so a fixed installation is seen by the next check.
 */
const startupChecks = new Map<string, Promise<string | null>>();

/**
 * The start-up check launches Chromium as a browser call would, with playwright-core, in a short-lived
 * node process of its own: loaded into the gateway, playwright-core stays resident (~70 MB) and its
 * AsyncLocalStorage switches on Node's promise hooks for the life of the process, a cost on every
 * promise of every request (~3% of the gateway's CPU at json c64, and the bytes of each promise's ids)
 * in a gateway that may never make a browser call.
 */
const CHECK_SCRIPT = `const [playwright, options] = process.argv.slice(1);
require(playwright)
  .chromium.launch(JSON.parse(options))
  .then((browser) => browser.close())
  .then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(err instanceof Error ? err.message : String(err));
      process.exit(1);
    },
  );`;

/** How Chromium is launched, by a browser call and by the start-up check alike. */
const LAUNCH_TIMEOUT_MS = 30_000;
const launchOptions = (executablePath: string) => ({ executablePath, headless: true, args: LAUNCH_ARGS, timeout: LAUNCH_TIMEOUT_MS });

/** Longest wait for the check's process (its launch has a timeout of its own). */
const CHECK_TIMEOUT_MS = LAUNCH_TIMEOUT_MS + 15_000;

/** Null when Chromium at `executablePath` starts headless (and closes), else why not. */
async function launchInChild(executablePath: string): Promise<string | null> {
  const args = [require.resolve('playwright-core'), JSON.stringify(launchOptions(executablePath))];
  const failure = await runNodeScript(CHECK_SCRIPT, args, { timeoutMs: CHECK_TIMEOUT_MS });
  return failure === null ? null : playwrightMessage(failure);
}

export class BrowserPool {
  private browser: Promise<Browser> | null = null;
  private readonly sessions = new Map<string, BrowserSession>();
  private readonly opening = new Map<string, Promise<BrowserSession>>();
  private closing = false;

  constructor(
    private readonly config: BrowserToolsConfig,
    private readonly allow: HostAllowList,
    private readonly egress: EgressState,
    private readonly logger: Logger,
  ) {}

  /** Null when Chromium is there and starts, else why not. */
  check(): Promise<string | null> {
    const path = this.config.executablePath;
    let answer = startupChecks.get(path);
    if (!answer) {
      answer = this.checkNow();
      startupChecks.set(path, answer);
      void answer.then((reason) => {
        if (reason !== null) startupChecks.delete(path);
      });
    }
    return answer;
  }

  private async checkNow(): Promise<string | null> {
    const path = this.config.executablePath;
    try {
      await access(path, constants.X_OK);
    } catch {
      return `no Chromium executable at ${path} (install Debian's chromium, or set tools.browser.executablePath)`;
    }
    const failure = await launchInChild(path);
    return failure === null ? null : `Chromium at ${path} does not start: ${failure}`;
  }

  /** The conversation's session if one is open (listing requests never opens one). */
  existing(conversationId: string): BrowserSession | undefined {
    const session = this.sessions.get(conversationId);
    return session && !session.isClosed ? session : undefined;
  }

  /**
   * Runs `work` in the conversation's session (opened when there is none), after its earlier calls,
   * going out through the conversation's egress profile as it is now.
   */
  async use<T>(ctx: ToolCallContext, work: (session: BrowserSession) => Promise<T>, options: { open: boolean } = { open: true }): Promise<T> {
    const session = options.open ? await this.sessionFor(ctx) : this.existing(ctx.conversationId);
    if (!session) throw new ToolFailure('No browser session is open in this conversation: open a page with svc_browser_control first.');
    session.busy += 1;
    if (session.idleTimer) clearTimeout(session.idleTimer);
    try {
      return await session.run(ctx.signal, async () => {
        // Asked inside the session's turn: a change of egress must not cut an earlier call's connections.
        const proxyUrl = await this.egress.proxyFor(ctx.orgId, ctx.conversationId);
        try {
          session.proxy.setUpstream(proxyUrl);
        } catch (err) {
          throw new ToolFailure(err instanceof Error ? err.message : String(err));
        }
        return work(session);
      });
    } finally {
      session.busy -= 1;
      session.lastUsed = Date.now();
      if (session.busy === 0 && !session.isClosed) {
        session.idleTimer = setTimeout(() => void this.closeSession(session, 'idle'), this.config.idleTimeoutMs);
        session.idleTimer.unref();
      }
    }
  }

  async forget(conversationId: string): Promise<void> {
    const session = this.sessions.get(conversationId);
    if (session) await this.closeSession(session, 'forgotten');
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.sessions.values()].map((session) => this.closeSession(session, 'shutdown')));
    const browser = this.browser;
    this.browser = null;
    if (browser) await browser.then((b) => b.close()).catch(() => undefined);
  }

  private async sessionFor(ctx: ToolCallContext): Promise<BrowserSession> {
    const current = this.sessions.get(ctx.conversationId);
    if (current && !current.isClosed && current.orgId === ctx.orgId) return current;
    // The same id from another organization never shares a context.
    if (current) await this.closeSession(current, 'replaced');
    const pending = this.opening.get(ctx.conversationId);
    if (pending) return pending;
    const opened = this.openSession(ctx).finally(() => this.opening.delete(ctx.conversationId));
    this.opening.set(ctx.conversationId, opened);
    return opened;
  }

  private async openSession(ctx: ToolCallContext): Promise<BrowserSession> {
    if (this.closing) throw new ToolFailure('The browser is shutting down.');
    const othersOpening = (): number => [...this.opening.keys()].filter((id) => id !== ctx.conversationId).length;
    while (this.sessions.size + othersOpening() >= this.config.maxContexts) await this.evictOne();
    const browser = await this.browserInstance();
    let session: BrowserSession;
    try {
      session = await BrowserSession.open(browser, { conversationId: ctx.conversationId, orgId: ctx.orgId }, this.config, this.allow);
    } catch (err) {
      throw new ToolFailure(`The browser could not open a page: ${playwrightMessage(err)}`);
    }
    this.sessions.set(ctx.conversationId, session);
    this.logger.info('browser context opened', { conversationId: ctx.conversationId, count: this.sessions.size });
    return session;
  }

  /** Closes the least recently used idle session; refuses when every session is in a call. */
  private async evictOne(): Promise<void> {
    const idle = [...this.sessions.values()].filter((session) => session.busy === 0).sort((a, b) => a.lastUsed - b.lastUsed);
    const oldest = idle[0];
    if (!oldest) {
      throw new ToolFailure(`The browser is busy: ${this.sessions.size} conversations are using it (tools.browser.maxContexts). Try again shortly.`);
    }
    await this.closeSession(oldest, 'evicted');
  }

  private async closeSession(session: BrowserSession, reason: string): Promise<void> {
    if (this.sessions.get(session.conversationId) === session) this.sessions.delete(session.conversationId);
    if (session.isClosed) return;
    await session.close();
    this.logger.info('browser context closed', { conversationId: session.conversationId, reason, count: this.sessions.size });
  }

  private browserInstance(): Promise<Browser> {
    if (!this.browser) {
      const launching = this.launch().then((browser) => {
        browser.on('disconnected', () => {
          // A crashed browser takes its contexts along; the next call launches a new one.
          if (this.browser === launching) this.browser = null;
          for (const session of this.sessions.values()) void this.closeSession(session, 'browser exited');
          if (!this.closing) this.logger.warn('the browser exited; it is launched again on the next call');
        });
        return browser;
      });
      launching.catch(() => {
        if (this.browser === launching) this.browser = null;
      });
      this.browser = launching;
    }
    return this.browser.catch((err: unknown) => {
      throw new ToolFailure(`The browser could not be started: ${playwrightMessage(err)}`);
    });
  }

  private launch(): Promise<Browser> {
    // Never downloads a browser: playwright-core drives the executable the operator installed. Loaded
    // on first launch: it is ~70 MB of resident memory a gateway without browser calls should not carry.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { chromium } = require('playwright-core') as typeof import('playwright-core');
    return chromium.launch(launchOptions(this.config.executablePath));
  }
}
