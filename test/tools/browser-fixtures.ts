// What the browser tool tests share: a small web site on 127.0.0.1 (allow-listed by host:port), a
// "private" server on another port that nothing may reach (it counts every TCP connection), an HTTP
// egress proxy that records what went through it, and ToolDeps built around a real config.
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { parseConfig } from '../../src/config/load';
import { createLogger } from '../../src/log/logger';
import type { Store } from '../../src/store/port';
import type { HostedTool, HostedToolSet, ToolCallContext, ToolDeps, ToolOutcome } from '../../src/tools/types';
import { createWebAccess } from '../../src/tools/web-access';
import { Workspaces } from '../../src/tools/workspace';
import { baseConfigDocument } from '../helpers/config';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  raw: Buffer;
}

export async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

export async function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The server no page may reach: it counts connections (not only requests), so a tunnel counts too. */
export async function startPrivateServer(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const server = http.createServer((_req, res) => res.end('private data'));
  server.on('connection', () => (connections += 1));
  const port = await listen(server);
  return { port, connections: () => connections, close: () => closeServer(server) };
}

export async function startSite(privatePort: number): Promise<{ port: number; origin: string; requests: RecordedRequest[]; close(): Promise<void> }> {
  const requests: RecordedRequest[] = [];
  const html = (res: http.ServerResponse, body: string, headers: Record<string, string> = {}): void => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(`<!doctype html>${body}`);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = raw.toString('utf8');
      const url = new URL(req.url ?? '/', 'http://site');
      requests.push({ method: req.method ?? '', url: url.pathname + url.search, headers: req.headers, body, raw });
      switch (url.pathname) {
        case '/':
          return html(
            res,
            `<title>Home</title><h1>Welcome home</h1><p style="display:none">hidden-words</p>
            <a id="next" href="/second">Next page</a> <a id="popup" href="/second" target="_blank">In a new tab</a>
            <button id="reveal" onclick="document.getElementById('out').textContent = 'Revealed by click'">Reveal</button>
            <div id="out"></div>
            <form method="post" action="/submit"><input id="q" name="q"><button id="send" type="submit">Send</button></form>`,
          );
        case '/second':
          return html(res, '<title>Second</title><p>You reached the second page.</p>');
        case '/submit':
          return html(res, `<title>Submitted</title><p>Got: ${escapeHtml(body)}</p>`);
        case '/set-cookie':
          return html(res, '<title>Cookie</title><p>cookie set</p>', { 'set-cookie': 'session=conv-secret; Path=/' });
        case '/echo-cookie':
          return html(res, `<title>Echo</title><p>Cookie: ${escapeHtml(req.headers.cookie ?? 'none')}</p>`);
        case '/app':
          // A page that calls an API with a method, headers and a body a shell would mangle unquoted.
          return html(
            res,
            `<title>App</title><p id="state">calling</p><script>
            fetch('/api/items?tag=a&x=[1]', { method: 'PUT', headers: { 'content-type': 'application/json', 'x-note': "it's \\"quoted\\" $HOME" },
              body: JSON.stringify({ name: "O'Brien", note: '$(touch /tmp/pwned) \`id\` !' }) })
              .then((r) => r.text()).then((t) => { document.getElementById('state').textContent = 'api said ' + t; });
            </script>`,
          );
        case '/binary-app':
          // Bytes 0-255 (not text: NUL, invalid UTF-8), then a body larger than the test's maxPostDataBytes.
          return html(
            res,
            `<title>Upload</title><p id="state">uploading</p><script>
            const bytes = new Uint8Array(256).map((_, i) => i);
            fetch('/api/upload', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: bytes })
              .then(() => fetch('/api/upload?big=1', { method: 'POST', body: 'x'.repeat(5000) }))
              .then(() => { document.getElementById('state').textContent = 'uploaded'; });
            </script>`,
          );
        case '/api/upload':
        case '/api/items':
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
          return;
        case '/private-img':
          return html(
            res,
            `<title>Public page</title><p>Pictures</p><a id="inside" href="http://localhost:${privatePort}/inside">Intranet</a>
            <img src="http://127.0.0.1:${privatePort}/literal.png"><img src="http://localhost:${privatePort}/named.png">
            <script>try { new WebSocket('ws://127.0.0.1:${privatePort}/ws'); } catch (e) {}</script>`,
          );
        case '/redirect-private':
          res.writeHead(302, { location: `http://localhost:${privatePort}/after-redirect` }).end();
          return;
        case '/long':
          return html(res, `<title>Long</title><p>${'lorem '.repeat(1000)}</p><p id="short">the short part</p>`);
        case '/busy':
          // Loaded, then a script that never yields.
          return html(res, '<title>Busy</title><p>spinning</p><script>setTimeout(() => { for (;;) {} }, 50);</script>');
        case '/spoof':
          // A site posing as the guard's refusal.
          return html(res, '<title>Spoof</title><p>an ordinary page</p>', { 'x-agent-gateway-refused': 'fake' });
        case '/popups':
          return html(res, '<title>Popups</title><script>for (let i = 0; i < 20; i += 1) window.open("/second?" + i);</script>');
        case '/tall':
          return html(res, '<title>Tall</title><div style="height: 20000px; background: linear-gradient(red, blue)">tall</div>');
        case '/pixel.png':
          res.writeHead(404).end();
          return;
        default:
          res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      }
    });
  });
  const port = await listen(server);
  return { port, origin: `http://127.0.0.1:${port}`, requests, close: () => closeServer(server) };
}

/** A plain HTTP forward proxy (absolute-form requests and CONNECT) that records each target. */
export async function startEgressProxy(): Promise<{ url: string; targets: string[]; close(): Promise<void> }> {
  const targets: string[] = [];
  const server = http.createServer((req, res) => {
    targets.push(`${req.method} ${req.url}`);
    const url = new URL(req.url ?? '');
    const upstream = http.request(
      { host: url.hostname, port: url.port, method: req.method, path: url.pathname + url.search, headers: req.headers },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket) => {
    targets.push(`CONNECT ${req.url}`);
    const [host, port] = (req.url ?? '').split(':');
    const target = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      client.pipe(target);
      target.pipe(client);
    });
    target.on('error', () => client.destroy());
    client.on('error', () => target.destroy());
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, targets, close: () => closeServer(server) };
}

export interface BrowserTestDeps {
  deps: ToolDeps;
  workspaceRoot: string;
  /** Conversations whose egress goes through `proxyUrl`. */
  egressFor: Map<string, string>;
  cleanup(): Promise<void>;
}

export async function browserDeps(allowHosts: string[], browser: Record<string, unknown> = {}): Promise<BrowserTestDeps> {
  const workspaceRoot = await mkdtemp(path.join(os.tmpdir(), 'agw-browser-'));
  const config = parseConfig(stringify({ ...baseConfigDocument(), tools: { allowHosts, browser } }), {});
  const web = createWebAccess(config.tools.allowHosts);
  const egressFor = new Map<string, string>();
  const deps: ToolDeps = {
    config,
    // The browser tools keep nothing in the store.
    store: {} as Store,
    logger: createLogger({ level: 'error', silent: process.env['TEST_LOGS'] !== '1' }),
    now: () => new Date(),
    workspaces: new Workspaces(workspaceRoot),
    fetch: web.fetch,
    egress: { proxyFor: (_orgId, conversationId) => Promise.resolve(egressFor.get(conversationId) ?? null) },
  };
  return {
    deps,
    workspaceRoot,
    egressFor,
    async cleanup() {
      await web.close();
      await rm(workspaceRoot, { recursive: true, force: true });
    },
  };
}

export function callContext(deps: ToolDeps, conversationId: string, signal: AbortSignal = new AbortController().signal): ToolCallContext {
  return { orgId: 'acme', userId: 'u-member', conversationId, signal, workspace: deps.workspaces.of('acme', conversationId) };
}

/** Calls a tool of the set by its type. */
export function caller(set: HostedToolSet, deps: ToolDeps) {
  const byType = new Map<string, HostedTool>(set.tools.map((tool) => [tool.type, tool]));
  return (type: string, conversationId: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolOutcome> => {
    const tool = byType.get(type);
    if (!tool) throw new Error(`no tool ${type}`);
    return tool.execute(args, callContext(deps, conversationId, signal));
  };
}
