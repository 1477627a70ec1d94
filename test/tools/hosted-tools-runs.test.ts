// The hosted tools in agent runs, on both deployments (embedded/inline, postgres/bullmq with the run on
// a worker, whose tool set ran its own start-up checks): the shell, the browser on a page served here,
// svc_web_search against a fake SearxNG, svc_vpn_connect then a download through a real HTTP proxy, the
// stored-file tools and a share link, knowledge search and a dashboard. Each call is an item of the
// run's conversation whose output is asserted. Then retention: pruning the run's
// conversation removes its workspace, its tool state, its MCP session and its browser context.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { createLogger } from '../../src/log/logger';
import { pruneRetention } from '../../src/runs/sweepers';
import { EGRESS_PROFILE_KEY } from '../../src/tools/conversation-egress';
import type { ConversationItemRecord } from '../../src/store/types';
import { startMcpServer, type RunningMcpServer } from '../fixtures/mcp/mcp-servers';
import { listenOnLoopback, type LoopbackServer } from '../fixtures/upstreams/loopback-server';
import { BACKENDS } from '../helpers/backends';
import { startSite } from './browser-fixtures';
import { startHttpProxy, type FakeProxy } from './hosted/proxies';
import { organizationsWithTools, toolAgent, toolMessages, useToolGateway, type Json } from './tool-gateway';

const BROWSER_AGENT = '5a1e0000-0000-4000-8000-0000000000e1';
const SEARCH_AGENT = '5a1e0000-0000-4000-8000-0000000000e2';
const VPN_AGENT = '5a1e0000-0000-4000-8000-0000000000e3';
const FILES_AGENT = '5a1e0000-0000-4000-8000-0000000000e4';
const PRUNED_AGENT = '5a1e0000-0000-4000-8000-0000000000e5';
const SHELL_AGENT = '5a1e0000-0000-4000-8000-000000000081';
const ANALYST = '5a1e0000-0000-4000-8000-0000000000d5';
const PROXY_PASSWORD = 'runs-proxy-secret';
const PUBLIC_URL = 'http://gateway.test';

type Call = { id: string; name: string; arguments: Json };
/** A model that makes `calls[n]` once it has seen n tool results, then answers with what it saw. */
const scripted =
  (...calls: Array<Call | Call[] | ((seen: string[]) => Call)>) =>
  (body: Json) => {
    const seen = toolMessages(body).map((m) => String(m.content));
    const next = calls[seen.length];
    if (next === undefined) return { reply: `done: ${seen.join(' | ')}` };
    const made = typeof next === 'function' ? [next(seen)] : Array.isArray(next) ? next : [next];
    return { toolCalls: made.map((c) => ({ id: c.id, name: c.name, arguments: JSON.stringify(c.arguments) })) };
  };

/** The server-side call items of a run (svc_call / mcp_call), as [type, name, status]. */
const calls = (items: ConversationItemRecord[]): ConversationItemRecord[] => items.filter((i) => i.type === 'svc_call' || i.type === 'mcp_call');
const summary = (items: ConversationItemRecord[]): unknown[] => calls(items).map((i) => [i.type, i.data['name'], i.status]);
const output = (item: ConversationItemRecord | undefined): string => String(item?.data['output'] ?? item?.data['error']);

const gone = async (file: string): Promise<boolean> =>
  stat(file).then(
    () => false,
    (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
  );

for (const backend of BACKENDS) {
  describe(`hosted tools in agent runs (${backend})`, function () {
    this.timeout(120_000);
    let site: Awaited<ReturnType<typeof startSite>>;
    let searx: LoopbackServer;
    const searches: string[] = [];
    let downloads: LoopbackServer;
    const arrivals: string[] = [];
    let proxy: FakeProxy;
    let mcpServer: RunningMcpServer;

    const bed = useToolGateway(async () => {
      site = await startSite(9);
      searx = await listenOnLoopback(async (req, res) => {
        const url = new URL(req.url ?? '/', 'http://searx');
        searches.push(url.searchParams.get('q') ?? '');
        const results = [{ url: 'https://docs.example.org/egress', title: 'Egress proxies', content: 'How traffic leaves through a proxy.' }];
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ query: url.searchParams.get('q'), results }));
      });
      proxy = await startHttpProxy('agent', PROXY_PASSWORD);
      downloads = await listenOnLoopback(async (req, res) => {
        arrivals.push(`${req.url ?? ''} ${proxy.carries(req.socket.remotePort) ? 'via proxy' : 'direct'}`);
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`content of ${req.url ?? ''}`);
      });
      mcpServer = await startMcpServer('streamable-http');
      const mcp = { type: 'mcp', server_label: 'calc', server_url: mcpServer.url, allowed_tools: ['add'], require_approval: 'never' };
      return {
        backend,
        agents: [
          toolAgent(BROWSER_AGENT, [
            { type: 'svc_browser_control' },
            { type: 'svc_browser_screenshot' },
            { type: 'svc_browser_list_network_requests' },
            { type: 'svc_browser_export_request_as_curl' },
          ]),
          toolAgent(SEARCH_AGENT, [{ type: 'svc_web_search' }]),
          toolAgent(VPN_AGENT, [{ type: 'svc_vpn_connect' }, { type: 'svc_web_download' }]),
          toolAgent(FILES_AGENT, [
            { type: 'svc_files_download_as_text' },
            { type: 'svc_files_download_original' },
            { type: 'svc_file_list' },
            { type: 'svc_file_share_with_user' },
          ]),
          toolAgent(SHELL_AGENT, [{ type: 'svc_shell' }]),
          toolAgent(ANALYST, [{ type: 'svc_knowledge_store_search' }, { type: 'svc_dashboard_generate' }], { timeoutSeconds: 60 }),
          toolAgent(PRUNED_AGENT, [{ type: 'svc_file_write' }, { type: 'svc_browser_control' }, { type: 'svc_vpn_connect' }, mcp]),
        ],
        tools: { allowHosts: ['127.0.0.1'], maxRounds: 6, shell: { wallTimeMs: 5000 } },
        config: {
          server: { publicUrl: PUBLIC_URL },
          organizations: organizationsWithTools({
            egressProfiles: { office: { url: `http://agent:${PROXY_PASSWORD}@${proxy.hostPort}`, description: 'Office' } },
            webSearch: { provider: 'searxng', url: searx.origin },
          }),
        },
        teardown: async () => {
          await mcpServer?.close();
          await proxy?.close();
          await downloads?.close();
          await searx?.close();
          await site?.close();
        },
      };
    });

    before(async () => {
      const at = new Date().toISOString();
      await bed.gw.store.knowledge.createStore({ id: 'ks_run_notes', orgId: 'acme', name: 'notes', description: null, createdBy: null, createdAt: at });
      const text = 'Revenue in Q1: north 120, south 80.';
      const doc = {
        id: 'kdoc_q1',
        orgId: 'acme',
        storeId: 'ks_run_notes',
        title: 'Q1 regional revenue',
        source: 'finance/q1.md',
        metadata: {},
        text,
        createdAt: at,
      };
      await bed.gw.store.knowledge.addDocument(doc);
    });

    it('svc_shell runs the command in the run’s workspace', async () => {
      const command = 'printf "one two three\\n" > words.txt && wc -w < words.txt';
      bed.upstream.script(scripted({ id: 'sh1', name: 'svc_shell', arguments: { command } }));
      const { run, items } = await bed.runAgent(SHELL_AGENT);
      assert.equal(run.status, 'success', JSON.stringify(run));
      assert.deepEqual(summary(items), [['svc_call', 'svc_shell', 'completed']]);
      assert.equal(output(calls(items)[0]), 'exit_code: 0\n--- stdout ---\n3\n--- stderr ---\n(empty)');
      const file = path.join(bed.workspaceOf(run.conversationId), 'words.txt');
      assert.equal(await readFile(file, 'utf8'), 'one two three\n');
      if (process.getuid?.() === 0) assert.equal((await stat(file)).uid, 65534, 'written by the unprivileged sandbox user');
    });

    it('svc_knowledge_store_search finds the organization’s document and svc_dashboard_generate charts it', async () => {
      const spec = { mark: 'bar', encoding: { x: { field: 'region', type: 'nominal' }, y: { field: 'revenue', type: 'quantitative' } } };
      bed.upstream.script(
        scripted(
          { id: 's1', name: 'svc_knowledge_store_search', arguments: { query: 'Q1 revenue' } },
          { id: 'd1', name: 'svc_dashboard_generate', arguments: { title: 'Q1', csv: 'region,revenue\nnorth,120\nsouth,80', spec } },
        ),
      );
      const { run, items } = await bed.runAgent(ANALYST, 45_000);
      assert.equal(run.status, 'success', JSON.stringify(run));
      assert.deepEqual(summary(items), [
        ['svc_call', 'svc_knowledge_store_search', 'completed'],
        ['svc_call', 'svc_dashboard_generate', 'completed'],
      ]);
      const [search, chart] = calls(items);
      const found = JSON.parse(output(search)) as { results: { document_id: string; source: string }[] };
      assert.deepEqual(
        found.results.map((r) => [r.document_id, r.source]),
        [['kdoc_q1', 'finance/q1.md']],
      );
      const made = JSON.parse(output(chart)) as { dashboard_id: string; rows: number; url: string };
      assert.equal(made.rows, 2);
      assert.ok(made.url.startsWith(`${PUBLIC_URL}/v1/dashboards/`));
      const stored = await bed.gw.store.dashboards.get(made.dashboard_id);
      assert.equal(stored?.orgId, 'acme');
      assert.equal(stored?.conversationId, run.conversationId);
    });

    it('the browser tools: navigate a local page, screenshot it, list its requests and export one as curl', async () => {
      bed.upstream.script(
        scripted(
          { id: 'b1', name: 'svc_browser_control', arguments: { action: 'navigate', url: `${site.origin}/` } },
          { id: 'b2', name: 'svc_browser_screenshot', arguments: {} },
          { id: 'b3', name: 'svc_browser_list_network_requests', arguments: {} },
          (seen) => ({ id: 'b4', name: 'svc_browser_export_request_as_curl', arguments: { id: /^#(\d+) GET 200 document /m.exec(seen[2]!)?.[1] ?? 'none' } }),
        ),
      );
      const { run, items } = await bed.runAgent(BROWSER_AGENT);
      assert.equal(run.status, 'success', JSON.stringify(run));
      assert.deepEqual(summary(items), [
        ['svc_call', 'svc_browser_control', 'completed'],
        ['svc_call', 'svc_browser_screenshot', 'completed'],
        ['svc_call', 'svc_browser_list_network_requests', 'completed'],
        ['svc_call', 'svc_browser_export_request_as_curl', 'completed'],
      ]);
      const [nav, shot, list, curl] = calls(items);
      assert.match(output(nav), /^Title: Home\nURL: http:\/\/127\.0\.0\.1:\d+\/\n[\s\S]*Welcome home/);
      const saved = /saved to (browser\/screenshot-[^ ]+\.png)\.$/.exec(output(shot))?.[1];
      assert.ok(saved, output(shot));
      const png = await readFile(path.join(bed.workspaceOf(run.conversationId), saved));
      assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG', 'the screenshot is in the run’s workspace');
      assert.match(output(list), new RegExp(`^#\\d+ GET 200 document ${site.origin}/$`, 'm'));
      assert.ok(output(curl).startsWith(`curl ${site.origin}/ -H `), output(curl));
      assert.match(output(curl), /-H 'user-agent: [^']*HeadlessChrome/, 'the headers the browser sent');
      assert.ok(site.requests.some((r) => r.url === '/'));
    });

    it('svc_web_search asks the organization’s SearxNG and records title, URL and snippet', async () => {
      bed.upstream.script(scripted({ id: 's1', name: 'svc_web_search', arguments: { query: 'egress proxy' } }));
      const { run, items } = await bed.runAgent(SEARCH_AGENT);
      assert.equal(run.status, 'success', JSON.stringify(run));
      assert.deepEqual(summary(items), [['svc_call', 'svc_web_search', 'completed']]);
      assert.equal(
        output(calls(items)[0]),
        'Results for "egress proxy":\n\n1. Egress proxies\n   https://docs.example.org/egress\n   How traffic leaves through a proxy.',
      );
      assert.equal(searches.at(-1), 'egress proxy');
      assert.match(String(run.result), /Egress proxies/);
    });

    it('svc_vpn_connect sends the run’s download through the egress proxy, without showing its URL', async () => {
      const file = `${randomBytes(4).toString('hex')}.txt`;
      bed.upstream.script(
        scripted(
          { id: 'v1', name: 'svc_vpn_connect', arguments: { profile: 'office' } },
          { id: 'v2', name: 'svc_web_download', arguments: { url: `${downloads.origin}/${file}` } },
        ),
      );
      const { run, items } = await bed.runAgent(VPN_AGENT);
      assert.equal(run.status, 'success', JSON.stringify(run));
      assert.deepEqual(summary(items), [
        ['svc_call', 'svc_vpn_connect', 'completed'],
        ['svc_call', 'svc_web_download', 'completed'],
      ]);
      const [connect, download] = calls(items);
      assert.match(output(connect), /^Connected to egress profile "office" \(Office\)/);
      assert.match(output(download), new RegExp(`^Saved downloads/${file} \\(\\d+ bytes, text/plain\\)`));
      assert.deepEqual(
        arrivals.filter((a) => a.startsWith(`/${file}`)),
        [`/${file} via proxy`],
      );
      assert.equal(await readFile(path.join(bed.workspaceOf(run.conversationId), 'downloads', file), 'utf8'), `content of /${file}`);
      assert.equal(await bed.gw.store.toolState.get('acme', run.conversationId, EGRESS_PROFILE_KEY), 'office');
      assert.ok(!JSON.stringify(items).includes(PROXY_PASSWORD), 'the proxy credentials are in no item');
    });

    it('the stored-file tools read an uploaded file, copy it into the workspace and share it by a working link', async () => {
      const fileId = `file-${randomBytes(12).toString('hex')}`;
      const content = Buffer.from('Minutes: budget approved, 42 000 EUR.\n');
      await bed.gw.store.files.create(
        {
          id: fileId,
          orgId: 'acme',
          userId: 'u-admin',
          filename: 'minutes.txt',
          purpose: 'user_data',
          bytes: content.length,
          mediaType: 'text/plain',
          createdAt: new Date().toISOString(),
        },
        content,
      );
      bed.upstream.script(
        scripted(
          { id: 'f1', name: 'svc_files_download_as_text', arguments: { file_id: fileId } },
          { id: 'f2', name: 'svc_files_download_original', arguments: { file_id: fileId } },
          { id: 'f3', name: 'svc_file_list', arguments: { path: 'files' } },
          { id: 'f4', name: 'svc_file_share_with_user', arguments: { path: 'files/minutes.txt' } },
        ),
      );
      const { run, items } = await bed.runAgent(FILES_AGENT);
      assert.equal(run.status, 'success', JSON.stringify(run));
      assert.deepEqual(summary(items), [
        ['svc_call', 'svc_files_download_as_text', 'completed'],
        ['svc_call', 'svc_files_download_original', 'completed'],
        ['svc_call', 'svc_file_list', 'completed'],
        ['svc_call', 'svc_file_share_with_user', 'completed'],
      ]);
      const [text, original, list, share] = calls(items);
      assert.match(output(text), /as text[^\n]*:\nMinutes: budget approved, 42 000 EUR\./);
      assert.match(output(original), /to files\/minutes\.txt in the workspace\.$/);
      assert.match(output(list), /minutes\.txt/);
      const link = new RegExp(`${PUBLIC_URL}(/\\S+)`).exec(output(share))?.[1];
      assert.ok(link, output(share));
      const downloaded = await fetch(`${bed.gw.url}${link}`);
      assert.equal(downloaded.status, 200);
      assert.equal(await downloaded.text(), content.toString());
    });

    it('pruning the run’s conversation removes its workspace, tool state, MCP session and browser context', async () => {
      bed.upstream.script(
        scripted([
          { id: 'p1', name: 'svc_file_write', arguments: { path: 'kept.txt', content: 'x' } },
          { id: 'p2', name: 'svc_browser_control', arguments: { action: 'navigate', url: `${site.origin}/set-cookie` } },
          { id: 'p3', name: 'svc_vpn_connect', arguments: { profile: 'office' } },
          { id: 'p4', name: 'calc__add', arguments: { a: 40, b: 2 } },
        ]),
      );
      const { run, items } = await bed.runAgent(PRUNED_AGENT);
      assert.equal(run.status, 'success', JSON.stringify(run));
      assert.equal(calls(items).filter((i) => i.status === 'completed').length, 4, JSON.stringify(calls(items).map((i) => i.data)));
      const services = bed.gw.gateway.services;
      const workspace = bed.workspaceOf(run.conversationId);
      const echo = async (): Promise<string> => {
        const browser = services.tools.registry.get('acme', 'svc_browser_control')!;
        const ctx = {
          orgId: 'acme',
          userId: 'u-admin',
          conversationId: run.conversationId,
          signal: new AbortController().signal,
          workspace: services.tools.workspaces.of('acme', run.conversationId),
        };
        return (await browser.execute({ action: 'navigate', url: `${site.origin}/echo-cookie` }, ctx)).output;
      };
      assert.equal(await readFile(path.join(workspace, 'kept.txt'), 'utf8'), 'x');
      assert.equal(await services.store.toolState.get('acme', run.conversationId, EGRESS_PROFILE_KEY), 'office');
      assert.match(await echo(), /Cookie: session=conv-secret/, 'the conversation’s browser context holds its cookie');
      const deletes = mcpServer.requests.filter((r) => r === 'DELETE /mcp').length;

      // A retention pass a day and more after the run (retention: one day).
      const later = new Date(Date.now() + 2 * 86_400_000);
      const logger = createLogger({ level: 'error', silent: true });
      const pruned = await pruneRetention({ store: services.store, tools: services.tools, logger, now: () => later, retentionDays: 1 });
      assert.ok(pruned.runs >= 1);

      assert.equal(await services.store.runs.get(run.id), null);
      assert.ok(await gone(workspace), 'the workspace directory is gone');
      assert.equal(await services.store.toolState.get('acme', run.conversationId, EGRESS_PROFILE_KEY), null, 'its tool state is gone');
      assert.equal(mcpServer.requests.filter((r) => r === 'DELETE /mcp').length, deletes + 1, 'its MCP session was ended');
      assert.match(await echo(), /Cookie: none/, 'its browser context was closed (a new one has no cookie)');
    });
  });
}
