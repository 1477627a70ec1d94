// svc_browser_control, svc_browser_screenshot, svc_browser_list_network_requests,
// svc_browser_export_request_as_curl: headless Chromium (Debian `chromium`, driven by playwright-core,
// never downloaded), one browser context per conversation (pool.ts), every request through the SSRF
// guard and the conversation's egress profile (session.ts, guard-proxy.ts), requests captured
// (network-log.ts) and exported as curl commands (curl.ts), screenshots stored in the workspace and
// shown to vision models.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BrowserToolsConfig } from '../../../config/types';
import { ToolFailure, type HostedTool, type HostedToolFactory, type HostedToolSet, type ToolDeps } from '../../types';
import { HostAllowList } from '../../web-access';
import { browserControl } from './control';
import { curlCommand, isTextBody } from './curl';
import { describeRequest } from './network-log';
import { BrowserPool } from './pool';
import { bounded, playwrightMessage } from './session';

/** Where in the workspace screenshots and request bodies go. */
const BROWSER_DIR = 'browser';
/** Lines a request listing shows at most (the newest matching). */
const MAX_LISTED = 200;

/** "yyyy-mm-ddThh-mm-ss-mmmZ": a file-name-safe time stamp. */
function stamp(now: Date): string {
  return now.toISOString().replace(/[:.]/g, '-');
}

function screenshot(pool: BrowserPool, config: BrowserToolsConfig, now: () => Date): HostedTool {
  let taken = 0;
  return {
    type: 'svc_browser_screenshot',
    description: `Take a PNG screenshot of the page open in this conversation's browser (the visible viewport, or full_page: true for the whole page up to ${config.maxScreenshotHeight} pixels tall). The image is saved in the workspace and shown to you.`,
    parameters: {
      type: 'object',
      properties: { full_page: { type: 'boolean', description: 'The whole scrollable page instead of the viewport (default false).' } },
      additionalProperties: false,
    },
    limits: { timeoutMs: config.actionTimeoutMs + 10_000 },
    async execute(args, ctx) {
      const fullPage = args['full_page'] === true;
      return pool.use(
        ctx,
        async (session) => {
          const page = session.openPage();
          if (!page) throw new ToolFailure('No page is open in this conversation: open one with svc_browser_control first.');
          let png: Buffer;
          try {
            let clip: { x: number; y: number; width: number; height: number } | undefined;
            if (fullPage) {
              const height = Number(
                await bounded(
                  page.evaluate<unknown>('Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)'),
                  config.actionTimeoutMs,
                  'Measuring the page',
                ),
              );
              if (height > config.maxScreenshotHeight)
                clip = { x: 0, y: 0, width: page.viewportSize()?.width ?? config.viewportWidth, height: config.maxScreenshotHeight };
            }
            png = await page.screenshot({ type: 'png', fullPage, ...(clip ? { clip } : {}) });
          } catch (err) {
            if (err instanceof ToolFailure) throw err;
            throw new ToolFailure(`The screenshot failed: ${playwrightMessage(err)}`);
          }
          taken += 1;
          const relative = `${BROWSER_DIR}/screenshot-${stamp(now())}-${taken}.png`;
          const target = await ctx.workspace.resolve(relative);
          await mkdir(path.dirname(target), { recursive: true });
          await writeFile(target, png);
          // The PNG header's IHDR chunk holds the size (PNG spec §11.2.2).
          const size = `${png.readUInt32BE(16)}×${png.readUInt32BE(20)}`;
          return {
            output: `Screenshot of ${page.url()} (${size} pixels${fullPage ? ', full page' : ''}) saved to ${relative}.`,
            images: [{ mediaType: 'image/png', data: png.toString('base64') }],
          };
        },
        { open: false },
      );
    },
  };
}

function listNetworkRequests(pool: BrowserPool): HostedTool {
  return {
    type: 'svc_browser_list_network_requests',
    description:
      "List the network requests this conversation's browser made (newest last), with ids for svc_browser_export_request_as_curl: method, status, resource type, URL, and why a request failed or was refused.",
    parameters: {
      type: 'object',
      properties: {
        filter: { type: 'string', description: 'Only requests whose URL contains this text (case-insensitive).' },
        resource_type: { type: 'string', description: 'Only this resource type: document, xhr, fetch, script, stylesheet, image, font, …' },
        method: { type: 'string', description: 'Only this HTTP method (GET, POST, …).' },
      },
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const text = typeof args['filter'] === 'string' && args['filter'] !== '' ? args['filter'] : undefined;
      const resourceType = typeof args['resource_type'] === 'string' && args['resource_type'] !== '' ? args['resource_type'] : undefined;
      const method = typeof args['method'] === 'string' && args['method'] !== '' ? args['method'] : undefined;
      return pool.use(
        ctx,
        async (session) => {
          const matching = session.network.list({ ...(text ? { text } : {}), ...(resourceType ? { resourceType } : {}), ...(method ? { method } : {}) });
          const filtered = text !== undefined || resourceType !== undefined || method !== undefined;
          const head = `${session.network.size} requests kept${filtered ? `, ${matching.length} matching` : ''}.`;
          if (matching.length === 0) return { output: head };
          const shown = matching.slice(-MAX_LISTED);
          const skipped = matching.length - shown.length;
          const lines = [head, ...(skipped > 0 ? [`[… ${skipped} earlier requests not shown; narrow with filter]`] : []), ...shown.map(describeRequest)];
          return { output: lines.join('\n') };
        },
        { open: false },
      );
    },
  };
}

function exportRequestAsCurl(pool: BrowserPool): HostedTool {
  return {
    type: 'svc_browser_export_request_as_curl',
    description:
      "Export a request this conversation's browser made (an id from svc_browser_list_network_requests) as a runnable curl command for a POSIX shell, with its method, URL, headers (cookies and authorization included) and body.",
    parameters: {
      type: 'object',
      properties: { id: { type: ['integer', 'string'], description: 'The request id, e.g. 12 or "#12".' } },
      required: ['id'],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const raw = args['id'];
      const id = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim().replace(/^#/, '')) : Number.NaN;
      if (!Number.isInteger(id) || id < 1) throw new ToolFailure('Argument id must be a request id such as 12 (see svc_browser_list_network_requests).');
      return pool.use(
        ctx,
        async (session) => {
          const entry = session.network.get(id);
          if (!entry) {
            const why = id <= session.network.lastId ? 'it is older than the requests kept' : 'no request has that id';
            throw new ToolFailure(`There is no captured request #${id}: ${why}.`);
          }
          await entry.settled;
          if (entry.postDataSize > 0 && entry.postData === null) {
            throw new ToolFailure(
              `Request #${id} had a ${entry.postDataSize}-byte body, larger than tools.browser.maxPostDataBytes: a command without it would not reproduce the request.`,
            );
          }
          let body: { text: string } | { file: string } | null = null;
          let note = '';
          if (entry.postData !== null && entry.postData.length > 0) {
            if (isTextBody(entry.postData)) {
              body = { text: entry.postData.toString('utf8') };
            } else {
              // Bytes a command line cannot hold go to a file beside the command.
              const relative = `${BROWSER_DIR}/request-${id}.body`;
              const target = await ctx.workspace.resolve(relative);
              await mkdir(path.dirname(target), { recursive: true });
              await writeFile(target, entry.postData);
              body = { file: relative };
              note = `\n\nThe binary body is in the workspace file ${relative}; run the command in the workspace directory.`;
            }
          }
          const command = curlCommand({ method: entry.method, url: entry.url, headers: entry.headers, body });
          return { output: `${command}${note}` };
        },
        { open: false },
      );
    },
  };
}

/** The tool set and the pool behind it (tests look at the pool's sessions). */
export function buildBrowserTools(deps: ToolDeps): { set: HostedToolSet; pool: BrowserPool } {
  const config = deps.config.tools.browser;
  // The same operator list the gateway's WebAccess is made from (tools.allowHosts).
  const allow = new HostAllowList(deps.config.tools.allowHosts);
  const pool = new BrowserPool(config, allow, deps.egress, deps.logger);
  const set: HostedToolSet = {
    tools: [browserControl(pool, config, allow), screenshot(pool, config, deps.now), listNetworkRequests(pool), exportRequestAsCurl(pool)],
    check: () => pool.check(),
    close: () => pool.close(),
    forget: (conversationId) => pool.forget(conversationId),
  };
  return { set, pool };
}

export const browserTools: HostedToolFactory = (deps) => buildBrowserTools(deps).set;
