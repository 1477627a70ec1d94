// svc_browser_control: one action on the conversation's page, then what the page shows (title, URL,
// visible text, bounded). The actions are a fixed set a model needs to read and use a site; there is
// no `evaluate`: arbitrary script adds nothing the actions and get_text cannot do, and would be a
// second way in that every guard would have to think about.
import type { Page } from 'playwright-core';
import type { BrowserToolsConfig } from '../../../config/types';
import { ToolFailure, type HostedTool } from '../../types';
import { checkUrl, type HostAllowList } from '../../web-access';
import type { BrowserPool } from './pool';
import { bounded, playwrightMessage, refusalReason } from './session';

const ACTIONS = ['navigate', 'click', 'type', 'press', 'select', 'scroll', 'back', 'forward', 'reload', 'get_text', 'wait_for'] as const;
type Action = (typeof ACTIONS)[number];

/** The page's title and rendered text (what a reader sees: hidden elements are left out), in one evaluation. */
const SNAPSHOT =
  '({ title: document.title, text: document.body ? document.body.innerText : (document.documentElement ? document.documentElement.textContent || "" : "") })';

export function stringArg(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value === '') throw new ToolFailure(`Argument ${name} must be a non-empty string.`);
  return value;
}

function optionalString(args: Record<string, unknown>, name: string): string | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ToolFailure(`Argument ${name} must be a string.`);
  return value;
}

/** A URL as a model writes it: a bare host or path gets https://. */
function targetUrl(raw: string, allow: HostAllowList): URL {
  const withScheme = /^[a-z][a-z0-9+.-]*:/i.test(raw) ? raw : `https://${raw}`;
  try {
    return checkUrl(withScheme, allow);
  } catch (err) {
    throw new ToolFailure(`The navigation to ${raw.slice(0, 300)} was refused: ${refusalReason(err, raw)}`);
  }
}

function cut(text: string, max: number, hint: string): string {
  const trimmed = text.replace(/\n{3,}/g, '\n\n').trim();
  if (trimmed.length <= max) return trimmed;
  return `${trimmed.slice(0, max)}\n[… ${trimmed.length - max} more characters; ${hint}]`;
}

/** Retried once when the page navigated away under the read (a script redirect, a late submit). */
async function readPage<T>(page: Page, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (!/context was destroyed|navigat/i.test(playwrightMessage(err))) throw err;
    await page.waitForLoadState('domcontentloaded').catch(() => undefined);
    return read();
  }
}

/** Waits (bounded) for the document a click or key press may have started loading. */
async function settle(page: Page, config: BrowserToolsConfig): Promise<string | null> {
  try {
    await page.waitForLoadState('load', { timeout: config.navigationTimeoutMs });
    return null;
  } catch {
    return '(The page had not finished loading.)';
  }
}

/** How long after a click a new tab (target=_blank, window.open) may still appear. */
const POPUP_GRACE_MS = 400;

/** Watches for a tab the page opens from now on; settled() waits a short grace for it after the action. */
function popupAfter(page: Page): { settled(): Promise<Page | null> } {
  let opened: Page | null = null;
  let notify: ((popup: Page) => void) | null = null;
  const onPopup = (popup: Page): void => {
    opened = popup;
    notify?.(popup);
  };
  page.on('popup', onPopup);
  return {
    async settled() {
      if (!opened) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POPUP_GRACE_MS);
          notify = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      page.off('popup', onPopup);
      return opened;
    },
  };
}

async function act(action: Action, args: Record<string, unknown>, page: Page, config: BrowserToolsConfig, allow: HostAllowList): Promise<string> {
  switch (action) {
    case 'navigate': {
      const url = targetUrl(stringArg(args, 'url'), allow);
      const response = await page.goto(url.href, { waitUntil: 'domcontentloaded' });
      const loading = await settle(page, config);
      const status = response ? ` (HTTP ${response.status()})` : '';
      return [`Opened ${url.href}${status}.`, loading].filter(Boolean).join(' ');
    }
    case 'click': {
      const selector = stringArg(args, 'selector');
      const popup = popupAfter(page);
      await page.click(selector);
      const opened = await popup.settled();
      if (opened) return [`Clicked ${selector}; it opened a new tab, shown here.`, await settle(opened, config)].filter(Boolean).join(' ');
      return [`Clicked ${selector}.`, await settle(page, config)].filter(Boolean).join(' ');
    }
    case 'type': {
      const selector = stringArg(args, 'selector');
      const text = optionalString(args, 'text') ?? '';
      await page.fill(selector, text);
      return `Typed ${text.length} characters into ${selector}.`;
    }
    case 'press': {
      const key = stringArg(args, 'key');
      const selector = optionalString(args, 'selector');
      if (selector) await page.press(selector, key);
      else await page.keyboard.press(key);
      return [`Pressed ${key}${selector ? ` in ${selector}` : ''}.`, await settle(page, config)].filter(Boolean).join(' ');
    }
    case 'select': {
      const selector = stringArg(args, 'selector');
      const chosen = await page.selectOption(selector, stringArg(args, 'text'));
      return `Selected ${chosen.join(', ') || 'nothing'} in ${selector}.`;
    }
    case 'scroll': {
      const selector = optionalString(args, 'selector');
      if (selector) {
        await page.locator(selector).first().scrollIntoViewIfNeeded();
        return `Scrolled ${selector} into view.`;
      }
      const direction = optionalString(args, 'direction') ?? 'down';
      if (direction !== 'down' && direction !== 'up') throw new ToolFailure('Argument direction must be "down" or "up".');
      const step = Math.round(config.viewportHeight * 0.9);
      await page.mouse.wheel(0, direction === 'down' ? step : -step);
      return `Scrolled ${direction} by ${step} pixels.`;
    }
    case 'back':
    case 'forward': {
      const response = action === 'back' ? await page.goBack({ waitUntil: 'domcontentloaded' }) : await page.goForward({ waitUntil: 'domcontentloaded' });
      if (!response && page.url() === 'about:blank') return `There was no page to go ${action} to.`;
      return [`Went ${action}.`, await settle(page, config)].filter(Boolean).join(' ');
    }
    case 'reload': {
      await page.reload({ waitUntil: 'domcontentloaded' });
      return ['Reloaded.', await settle(page, config)].filter(Boolean).join(' ');
    }
    case 'get_text':
      return '';
    case 'wait_for': {
      const selector = stringArg(args, 'selector');
      await page.locator(selector).first().waitFor({ state: 'visible' });
      return `${selector} is visible.`;
    }
  }
}

async function describePage(page: Page, config: BrowserToolsConfig, note: string, selector?: string): Promise<string> {
  const snapshot = await bounded(
    readPage(page, () => page.evaluate<{ title: unknown; text: unknown }>(SNAPSHOT)),
    config.actionTimeoutMs,
    'Reading the page',
  );
  const title = String(snapshot.title);
  const text = selector ? await page.locator(selector).first().innerText() : String(snapshot.text);
  const hint = selector ? 'narrow the selector' : 'use get_text with a selector to read a part';
  const header = [`Title: ${title}`, `URL: ${page.url()}`, ...(note ? [note] : [])];
  return `${header.join('\n')}\n\n${cut(text, config.maxTextChars, hint)}`;
}

export function browserControl(pool: BrowserPool, config: BrowserToolsConfig, allow: HostAllowList): HostedTool {
  return {
    type: 'svc_browser_control',
    description:
      "Drive this conversation's web browser (headless Chromium; the page, cookies and history persist between calls). " +
      'Actions: navigate {url}; click {selector}; type {selector, text} (replaces the field value); press {key, selector?} (e.g. Enter); ' +
      'select {selector, text} (an option by value or label); scroll {direction: down|up} or {selector}; back; forward; reload; ' +
      'get_text {selector?} (the text of one element); wait_for {selector}. ' +
      'Selectors are CSS (`#id`, `form button`) or Playwright selectors (`text=Sign in`, `role=button[name="Submit"]`). ' +
      'Returns the page title, URL and visible text. Private and internal addresses are refused.',
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: [...ACTIONS], description: 'What to do.' },
        url: { type: 'string', description: 'navigate: the http(s) URL to open.' },
        selector: { type: 'string', description: 'The element to act on or read (CSS or Playwright selector).' },
        text: { type: 'string', description: 'type: the text to enter; select: the option value or label.' },
        key: { type: 'string', description: 'press: a key name such as Enter, Tab, ArrowDown, Control+A.' },
        direction: { type: 'string', enum: ['down', 'up'], description: 'scroll: which way (one screen).' },
      },
      required: ['action'],
      additionalProperties: false,
    },
    limits: { timeoutMs: config.navigationTimeoutMs + config.actionTimeoutMs + 5_000 },
    async execute(args, ctx) {
      const action = args['action'];
      if (typeof action !== 'string' || !(ACTIONS as readonly string[]).includes(action)) {
        throw new ToolFailure(`Argument action must be one of ${ACTIONS.join(', ')}.`);
      }
      // A bad URL is refused before a browser is started for it.
      if (action === 'navigate') targetUrl(stringArg(args, 'url'), allow);
      return pool.use(ctx, async (session) => {
        const page = await session.currentPage();
        let note: string;
        try {
          note = await act(action as Action, args, page, config, allow);
        } catch (err) {
          session.throwNavigationProblem();
          if (err instanceof ToolFailure) throw err;
          throw new ToolFailure(playwrightMessage(err));
        }
        session.throwNavigationProblem();
        // A popup the action opened is the page now.
        const shown = await session.currentPage().catch(() => page);
        const selector = action === 'get_text' ? optionalString(args, 'selector') : undefined;
        try {
          return { output: await describePage(shown, config, note, selector) };
        } catch (err) {
          throw new ToolFailure(playwrightMessage(err));
        }
      });
    },
  };
}
