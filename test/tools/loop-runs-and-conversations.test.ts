// The same tool loop for agent runs and stored conversations, on both deployments (embedded/inline,
// postgres/bullmq): an agent's hosted tools are offered and run, each call and result kept in the
// run's conversation; a step executed again after a crash reuses them (no call runs twice); a stored
// conversation keeps its svc_call items, shows them to the model on the next turn, and keeps its
// workspace across turns.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RunExecutor } from '../../src/runs/executor';
import { startMcpServer, type RunningMcpServer } from '../fixtures/mcp/mcp-servers';
import { startRunUpstream, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { BACKENDS, openBackend, type BackendEnv } from '../helpers/backends';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { startWorkerRuntime, type Runtime } from '../../src/runtime';
import { assertResponsesFraming, jsonReply, parseSseFrames, post, typesOf } from '../responses/http-helpers';
import { runConfig, triggerRun, waitForStatus } from '../runs/helpers';

type Json = Record<string, unknown>;
type Message = { role: string; content?: unknown; tool_calls?: { id: string; function: { name: string } }[] };
const toolMessages = (body: Json): Message[] => ((body['messages'] as Message[]) ?? []).filter((m) => m.role === 'tool');
const TOOL_AGENT = '5a1e0000-0000-4000-8000-000000000071';
/** An agent whose tools reach out: an MCP server and web downloads (request- and tool-supplied URLs). */
const NET_AGENT = '5a1e0000-0000-4000-8000-000000000072';

for (const backend of BACKENDS) {
  describe(`tool loop in runs and stored conversations (${backend})`, function () {
    this.timeout(60_000);
    let upstream: RunUpstream;
    let gw: TestGateway;
    let deployment: BackendEnv | null = null;
    let workspaces: string;
    let worker: Runtime | null = null;
    let mcpServer: RunningMcpServer;
    let site: Server;
    let siteUrl: string;

    before(async function () {
      this.timeout(120_000);
      upstream = await startRunUpstream();
      mcpServer = await startMcpServer('streamable-http');
      site = createServer((_req, res) => res.end('report body'));
      await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
      siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/report.txt`;
      deployment = await openBackend(backend, 'tools');
      workspaces = await mkdtemp(path.join(tmpdir(), 'agw-ws-'));
      const base = runConfig(upstream);
      const agents = [
        ...(base['agents'] as Json[]),
        {
          id: TOOL_AGENT,
          organization: 'acme',
          createdBy: 'u-admin',
          model: 'fake',
          description: 'uses tools',
          name: 'Filer',
          instructions: 'Use the workspace.',
          tools: [{ type: 'svc_file_write' }, { type: 'svc_file_read' }, { type: 'function', name: 'ask_user' }],
          steps: [{ name: 'File', prompt: 'File the report.' }],
          timeoutSeconds: 30,
        },
        {
          id: NET_AGENT,
          organization: 'acme',
          createdBy: 'u-admin',
          model: 'fake',
          description: 'reaches out',
          name: 'Fetcher',
          tools: [
            { type: 'svc_web_download' },
            { type: 'mcp', server_label: 'calc', server_url: mcpServer.url, allowed_tools: ['add'], require_approval: 'never' },
          ],
          steps: [{ name: 'Fetch', prompt: 'Fetch and add.' }],
          timeoutSeconds: 30,
        },
      ];
      gw = await startTestGateway({
        config: { ...base, ...deployment.config, agents, tools: { workspaceDir: workspaces, allowHosts: ['127.0.0.1'] } },
        ...(deployment.pg ? { store: deployment.pg.store } : {}),
      });
      // With BullMQ, runs execute on a worker (here in the same process, as `agent-gateway worker` would).
      if (backend === 'postgres/bullmq') worker = await startWorkerRuntime(gw.gateway.services);
    });
    after(async () => {
      await worker?.close();
      await gw?.close();
      await mcpServer?.close();
      await new Promise((resolve) => site?.close(resolve));
      await upstream?.close();
      await deployment?.cleanup();
      await rm(workspaces, { recursive: true, force: true });
    });
    beforeEach(() => {
      upstream.clear();
      upstream.script(null);
      upstream.calls.length = 0;
    });

    const agentId = TOOL_AGENT;

    it('an agent run offers its hosted tools (not its function tools), runs the calls and records each', async () => {
      upstream.script((body) => {
        const tools = toolMessages(body);
        if (tools.length === 0) return { toolCalls: [{ id: 'w1', name: 'svc_file_write', arguments: JSON.stringify({ path: 'report.md', content: '# Q3' }) }] };
        if (tools.length === 1) return { toolCalls: [{ id: 'r1', name: 'svc_file_read', arguments: JSON.stringify({ path: 'report.md' }) }] };
        return { reply: `Filed: ${String(tools[1]!.content)}` };
      });
      const run = await triggerRun(gw, agentId, []);
      const done = await waitForStatus(gw.store, run.id, 'terminal', 20_000);
      assert.equal(done.status, 'success', JSON.stringify(done));
      assert.match(String(done.result), /Filed: # Q3/);
      const offered = ((upstream.calls[0]!.body['tools'] as { function: { name: string } }[]) ?? []).map((t) => t.function.name);
      assert.deepEqual(offered, ['svc_file_write', 'svc_file_read']);
      const items = await gw.store.conversations.listItems(run.conversationId, { order: 'asc', limit: 100 });
      assert.deepEqual(
        items.map((i) => i.type),
        ['message', 'message', 'function_call', 'svc_call', 'function_call', 'svc_call', 'message'],
      );
      const write = items[3]!;
      assert.equal(write.status, 'completed');
      assert.equal(write.data['name'], 'svc_file_write');
      assert.match(String(write.data['output']), /Wrote 4 bytes/);
      // The run's workspace is its conversation's.
      const file = path.join(workspaces, 'acme', run.conversationId, 'report.md');
      assert.equal(await readFile(file, 'utf8'), '# Q3');
    });

    it('a step executed again after a crash reuses the recorded calls: no tool call runs twice, no turn is asked again', async () => {
      let writes = 0;
      upstream.script((body) => {
        const tools = toolMessages(body);
        if (tools.length === 0) {
          writes += 1;
          return { toolCalls: [{ id: 'a1', name: 'svc_file_write', arguments: JSON.stringify({ path: 'log.txt', content: 'x', append: true }) }] };
        }
        return { reply: 'appended' };
      });
      const run = await triggerRun(gw, agentId, []);
      await waitForStatus(gw.store, run.id, 'success', 20_000);
      const before = await gw.store.conversations.listItems(run.conversationId, { order: 'asc', limit: 100 });
      // As if the worker died after the tool ran, before the step's reply: the reply item removed is
      // not possible (append-only), so the step is re-run from its start with the reply key unknown.
      const reset = await gw.store.runs.update(run.id, { status: 'in_progress', stepsCompleted: 0, endedAt: null, result: null }, {});
      assert.ok(reset);
      const services = gw.gateway.services;
      const executor = new RunExecutor({
        store: gw.store,
        modelCalls: services.modelCalls,
        logger: services.logger,
        metrics: services.metrics,
        config: services.config,
        now: () => new Date(),
        active: services.runEngine.active,
        owner: 'second-worker',
        leaseMs: 3000,
        tools: services.tools.loop,
      });
      const calls = upstream.calls.length;
      await executor.execute(run.id);
      assert.equal((await gw.store.runs.get(run.id))?.status, 'success');
      assert.equal(upstream.calls.length, calls, 'the recorded reply was reused');
      assert.equal(writes, 1);
      const file = path.join(workspaces, 'acme', run.conversationId, 'log.txt');
      assert.equal(await readFile(file, 'utf8'), 'x', 'the append ran once');
      assert.equal((await gw.store.conversations.listItems(run.conversationId, { order: 'asc', limit: 100 })).length, before.length);
    });

    it('re-executing a step whose round ran two calls at once runs neither again (each result recorded under its key)', async () => {
      let turns = 0;
      upstream.script((body) => {
        turns += 1;
        return toolMessages(body).length === 0
          ? {
              toolCalls: [
                { id: 'p1', name: 'svc_file_write', arguments: JSON.stringify({ path: 'p.txt', content: 'a', append: true }) },
                { id: 'p2', name: 'svc_file_write', arguments: JSON.stringify({ path: 'q.txt', content: 'b', append: true }) },
              ],
            }
          : { reply: 'both' };
      });
      const run = await triggerRun(gw, agentId, []);
      await waitForStatus(gw.store, run.id, 'success', 20_000);
      // Simulate the crash between the two results: a fresh run whose conversation holds the turn and
      // only the first result. Rebuild it from this run's items.
      const items = await gw.store.conversations.listItems(run.conversationId, { order: 'asc', limit: 100 });
      const second = await triggerRun(gw, agentId, []);
      await waitForStatus(gw.store, second.id, 'success', 20_000);
      assert.ok(items.some((i) => i.idempotencyKey?.endsWith(':round0:call1:output')));
      const fresh = await gw.store.runs.update(second.id, { status: 'in_progress', stepsCompleted: 0, endedAt: null, result: null }, {});
      assert.ok(fresh);
      const calls = upstream.calls.length;
      const executor = new RunExecutor({
        store: gw.store,
        modelCalls: gw.gateway.services.modelCalls,
        logger: gw.gateway.services.logger,
        metrics: gw.gateway.services.metrics,
        config: gw.gateway.services.config,
        now: () => new Date(),
        active: gw.gateway.services.runEngine.active,
        owner: 'third-worker',
        leaseMs: 3000,
        tools: gw.gateway.services.tools.loop,
      });
      await executor.execute(second.id);
      assert.equal(upstream.calls.length, calls);
      assert.equal(await readFile(path.join(workspaces, 'acme', second.conversationId, 'p.txt'), 'utf8'), 'a');
      assert.equal(await readFile(path.join(workspaces, 'acme', second.conversationId, 'q.txt'), 'utf8'), 'b');
      assert.ok(turns >= 4);
    });

    it('an agent run downloads through the SSRF-guarded fetch and calls its MCP server, recording each call', async () => {
      upstream.script((body) => {
        const tools = toolMessages(body);
        if (tools.length === 0) {
          return {
            toolCalls: [
              { id: 'd1', name: 'svc_web_download', arguments: JSON.stringify({ url: siteUrl }) },
              { id: 'm1', name: 'calc__add', arguments: JSON.stringify({ a: 40, b: 2 }) },
            ],
          };
        }
        return { reply: `results: ${tools.map((t) => String(t.content)).join(' / ')}` };
      });
      const calls = mcpServer.methods.filter((method) => method === 'tools/call').length;
      const run = await triggerRun(gw, NET_AGENT, []);
      const done = await waitForStatus(gw.store, run.id, 'terminal', 20_000);
      assert.equal(done.status, 'success', JSON.stringify(done));
      assert.match(String(done.result), /42/);
      assert.equal(mcpServer.methods.filter((method) => method === 'tools/call').length, calls + 1);
      const offered = ((upstream.calls[0]!.body['tools'] as { function: { name: string } }[]) ?? []).map((t) => t.function.name);
      assert.deepEqual(offered, ['svc_web_download', 'calc__add']);
      const items = await gw.store.conversations.listItems(run.conversationId, { order: 'asc', limit: 100 });
      const results = items.filter((i) => i.type === 'svc_call');
      assert.equal(results.length, 2);
      assert.ok(
        results.every((i) => i.status === 'completed'),
        JSON.stringify(results.map((i) => i.data)),
      );
      const saved = await readFile(path.join(workspaces, 'acme', run.conversationId, 'downloads', 'report.txt'), 'utf8');
      assert.equal(saved, 'report body');
    });

    it('an agent invoked as a model (agent/<id>) streams its svc_call items live', async () => {
      upstream.script((body) =>
        toolMessages(body).length === 0
          ? { toolCalls: [{ id: 'inv1', name: 'svc_file_write', arguments: JSON.stringify({ path: 'inv.txt', content: 'streamed' }) }] }
          : { reply: 'written' },
      );
      const res = await post(`${gw.url}/v1/responses`, { model: `agent/${agentId}`, input: 'go', stream: true }, gw.auth('admin'));
      assert.equal(res.status, 200);
      const frames = parseSseFrames(await res.text());
      assertResponsesFraming(frames);
      const types = typesOf(frames);
      const added = frames.find((f) => f.data['type'] === 'response.output_item.added' && (f.data['item'] as Json)['type'] === 'svc_call');
      assert.ok(added, types.join(', '));
      assert.ok(types.includes('response.svc_call_arguments.done'), types.join(', '));
      const done = frames.find((f) => f.data['type'] === 'response.output_item.done' && (f.data['item'] as Json)['type'] === 'svc_call')!;
      assert.equal((done.data['item'] as Json)['status'], 'completed');
      assert.match(String((done.data['item'] as Json)['output']), /Wrote 8 bytes/);
      assert.equal(types.at(-1), 'response.completed');
    });

    it('a stored conversation keeps its svc_call items, shows them to the model next turn, and keeps its workspace', async () => {
      upstream.script((body) => {
        const messages = (body['messages'] as Message[]) ?? [];
        const last = messages.at(-1);
        const lastUser = [...messages].reverse().find((m) => m.role === 'user');
        if (String(lastUser?.content).includes('write') && last?.role === 'user') {
          return { toolCalls: [{ id: 'cw', name: 'svc_file_write', arguments: JSON.stringify({ path: 'memo.txt', content: 'remember me' }) }] };
        }
        if (String(lastUser?.content).includes('read') && last?.role === 'user') {
          return { toolCalls: [{ id: 'cr', name: 'svc_file_read', arguments: JSON.stringify({ path: 'memo.txt' }) }] };
        }
        return { reply: `ok: ${String(last?.content)}` };
      });
      const tools = [{ type: 'svc_file_write' }, { type: 'svc_file_read' }];
      const first = await jsonReply(await post(`${gw.url}/v1/responses`, { model: 'fake', store: true, input: 'please write', tools }, {}));
      assert.equal(first.status, 200, first.text);
      const conversation = (first.body['conversation'] as Json)['id'] as string;
      assert.equal((first.body['output'] as Json[])[0]!['type'], 'svc_call');
      const stored = await gw.store.conversations.listItems(conversation, { order: 'asc', limit: 100 });
      assert.ok(
        stored.some((i) => i.type === 'svc_call' && i.data['name'] === 'svc_file_write'),
        JSON.stringify(stored.map((i) => [i.type, i.data])),
      );
      const second = await jsonReply(
        await post(`${gw.url}/v1/responses`, { model: 'fake', previous_response_id: first.body['id'], input: 'now read', tools }, {}),
      );
      assert.equal(second.status, 200, second.text);
      const read = (second.body['output'] as Json[])[0]!;
      assert.equal(read['output'], 'remember me', 'the same workspace across turns');
      // The next turn's history showed the first turn's call and its result to the model.
      const turn = upstream.calls.find((c) => JSON.stringify(c.body['messages']).includes('now read'))!;
      const messages = turn.body['messages'] as Message[];
      assert.ok(messages.some((m) => m.tool_calls?.[0]?.function.name === 'svc_file_write'));
      assert.ok(messages.some((m) => m.role === 'tool' && String(m.content).includes('Wrote 11 bytes')));
    });
  });
}
