// The same tool loop for agent runs and stored conversations, on both deployments (embedded/inline,
// postgres/bullmq): an agent's hosted tools are offered and run, each call and result kept in the
// run's conversation; a step executed again after a crash reuses them (no call runs twice); a stored
// conversation keeps its svc_call items, shows them to the model on the next turn, and keeps its
// workspace across turns.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RunExecutor } from '../../src/runs/executor';
import { startMcpServer, type RunningMcpServer } from '../fixtures/mcp/mcp-servers';
import { BACKENDS } from '../helpers/backends';
import { assertResponsesFraming, jsonReply, parseSseFrames, post, typesOf } from '../responses/http-helpers';
import { triggerRun, waitForStatus } from '../runs/helpers';
import { messagesOf, offered, toolAgent, toolMessages, useToolGateway, type Json } from './tool-gateway';

const TOOL_AGENT = '5a1e0000-0000-4000-8000-000000000071';
/** An agent whose tools reach out: an MCP server and web downloads (request- and tool-supplied URLs). */
const NET_AGENT = '5a1e0000-0000-4000-8000-000000000072';

for (const backend of BACKENDS) {
  describe(`tool loop in runs and stored conversations (${backend})`, function () {
    this.timeout(60_000);
    let mcpServer: RunningMcpServer;
    let site: Server;
    let siteUrl: string;

    const bed = useToolGateway(async () => {
      mcpServer = await startMcpServer('streamable-http');
      site = createServer((_req, res) => res.end('report body'));
      await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
      siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/report.txt`;
      const mcp = { type: 'mcp', server_label: 'calc', server_url: mcpServer.url, allowed_tools: ['add'], require_approval: 'never' };
      return {
        backend,
        agents: [
          toolAgent(TOOL_AGENT, [{ type: 'svc_file_write' }, { type: 'svc_file_read' }, { type: 'function', name: 'ask_user' }], {
            instructions: 'Use the workspace.',
            steps: [{ name: 'File', prompt: 'File the report.' }],
          }),
          // Two steps: the second is shown the first's calls and results (the history), and the first is judged.
          toolAgent(NET_AGENT, [{ type: 'svc_web_download' }, mcp], {
            steps: [
              { name: 'Fetch', prompt: 'Fetch and add.', objective: 'The sum is given.' },
              { name: 'Report', prompt: 'Report what you found.' },
            ],
          }),
        ],
        tools: { allowHosts: ['127.0.0.1'] },
        teardown: async () => {
          await mcpServer?.close();
          await new Promise((resolve) => site?.close(resolve));
        },
      };
    });
    const workspaces = (): string => bed.workspaces;

    const agentId = TOOL_AGENT;

    it('an agent run offers its hosted tools (not its function tools), runs the calls and records each', async () => {
      bed.upstream.script((body) => {
        const tools = toolMessages(body);
        if (tools.length === 0) return { toolCalls: [{ id: 'w1', name: 'svc_file_write', arguments: JSON.stringify({ path: 'report.md', content: '# Q3' }) }] };
        if (tools.length === 1) return { toolCalls: [{ id: 'r1', name: 'svc_file_read', arguments: JSON.stringify({ path: 'report.md' }) }] };
        return { reply: `Filed: ${String(tools[1]!.content)}` };
      });
      const run = await triggerRun(bed.gw, agentId, []);
      const done = await waitForStatus(bed.gw.store, run.id, 'terminal', 20_000);
      assert.equal(done.status, 'success', JSON.stringify(done));
      assert.match(String(done.result), /Filed: # Q3/);
      assert.deepEqual(offered(bed.upstream.calls[0]!.body), ['svc_file_write', 'svc_file_read']);
      const items = await bed.gw.store.conversations.listItems(run.conversationId, { order: 'asc', limit: 100 });
      assert.deepEqual(
        items.map((i) => i.type),
        ['message', 'message', 'function_call', 'svc_call', 'function_call', 'svc_call', 'message'],
      );
      const write = items[3]!;
      assert.equal(write.status, 'completed');
      assert.equal(write.data['name'], 'svc_file_write');
      assert.match(String(write.data['output']), /Wrote 4 bytes/);
      // The run's workspace is its conversation's.
      const file = path.join(workspaces(), 'acme', run.conversationId, 'report.md');
      assert.equal(await readFile(file, 'utf8'), '# Q3');
    });

    it('a step executed again after a crash reuses the recorded calls: no tool call runs twice, no turn is asked again', async () => {
      let writes = 0;
      bed.upstream.script((body) => {
        const tools = toolMessages(body);
        if (tools.length === 0) {
          writes += 1;
          return { toolCalls: [{ id: 'a1', name: 'svc_file_write', arguments: JSON.stringify({ path: 'log.txt', content: 'x', append: true }) }] };
        }
        return { reply: 'appended' };
      });
      const run = await triggerRun(bed.gw, agentId, []);
      await waitForStatus(bed.gw.store, run.id, 'success', 20_000);
      const before = await bed.gw.store.conversations.listItems(run.conversationId, { order: 'asc', limit: 100 });
      // As if the worker died after the tool ran, before the step's reply: the reply item removed is
      // not possible (append-only), so the step is re-run from its start with the reply key unknown.
      const reset = await bed.gw.store.runs.update(run.id, { status: 'in_progress', stepsCompleted: 0, endedAt: null, result: null }, {});
      assert.ok(reset);
      const services = bed.gw.gateway.services;
      const executor = new RunExecutor({
        store: bed.gw.store,
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
      const calls = bed.upstream.calls.length;
      await executor.execute(run.id);
      assert.equal((await bed.gw.store.runs.get(run.id))?.status, 'success');
      assert.equal(bed.upstream.calls.length, calls, 'the recorded reply was reused');
      assert.equal(writes, 1);
      const file = path.join(workspaces(), 'acme', run.conversationId, 'log.txt');
      assert.equal(await readFile(file, 'utf8'), 'x', 'the append ran once');
      assert.equal((await bed.gw.store.conversations.listItems(run.conversationId, { order: 'asc', limit: 100 })).length, before.length);
    });

    it('re-executing a step whose round ran two calls at once runs neither again (each result recorded under its key)', async () => {
      let turns = 0;
      bed.upstream.script((body) => {
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
      const run = await triggerRun(bed.gw, agentId, []);
      await waitForStatus(bed.gw.store, run.id, 'success', 20_000);
      // Simulate the crash between the two results: a fresh run whose conversation holds the turn and
      // only the first result. Rebuild it from this run's items.
      const items = await bed.gw.store.conversations.listItems(run.conversationId, { order: 'asc', limit: 100 });
      const second = await triggerRun(bed.gw, agentId, []);
      await waitForStatus(bed.gw.store, second.id, 'success', 20_000);
      assert.ok(items.some((i) => i.idempotencyKey?.endsWith(':round0:call1:output')));
      const fresh = await bed.gw.store.runs.update(second.id, { status: 'in_progress', stepsCompleted: 0, endedAt: null, result: null }, {});
      assert.ok(fresh);
      const calls = bed.upstream.calls.length;
      const executor = new RunExecutor({
        store: bed.gw.store,
        modelCalls: bed.gw.gateway.services.modelCalls,
        logger: bed.gw.gateway.services.logger,
        metrics: bed.gw.gateway.services.metrics,
        config: bed.gw.gateway.services.config,
        now: () => new Date(),
        active: bed.gw.gateway.services.runEngine.active,
        owner: 'third-worker',
        leaseMs: 3000,
        tools: bed.gw.gateway.services.tools.loop,
      });
      await executor.execute(second.id);
      assert.equal(bed.upstream.calls.length, calls);
      assert.equal(await readFile(path.join(workspaces(), 'acme', second.conversationId, 'p.txt'), 'utf8'), 'a');
      assert.equal(await readFile(path.join(workspaces(), 'acme', second.conversationId, 'q.txt'), 'utf8'), 'b');
      assert.ok(turns >= 4);
    });

    it('an agent run downloads through the SSRF-guarded fetch and calls its MCP server: an svc_call and an mcp_call item, shown to the next step, judged', async () => {
      bed.upstream.script((body) => {
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
      const { run: done, items } = await bed.runAgent(NET_AGENT);
      assert.equal(done.status, 'success', JSON.stringify(done));
      assert.match(String(done.result), /42/);
      assert.equal(mcpServer.methods.filter((method) => method === 'tools/call').length, calls + 1);
      assert.deepEqual(offered(bed.upstream.calls[0]!.body), ['svc_web_download', 'calc__add']);
      // Each result as Responses writes the call's output item: svc_call for the hosted tool, mcp_call
      // (server label, the tool's own name) for the MCP tool; both after the model's function_call items.
      const results = items.filter((i) => i.type === 'svc_call' || i.type === 'mcp_call');
      const byType = Object.fromEntries(results.map((i) => [i.type, i]));
      assert.deepEqual(Object.keys(byType).sort(), ['mcp_call', 'svc_call'], JSON.stringify(results.map((i) => i.data)));
      assert.match(String(byType['svc_call']!.data['output']), /^Saved downloads\/report\.txt/);
      assert.equal(byType['mcp_call']!.status, 'completed');
      assert.deepEqual(byType['mcp_call']!.data, { call_id: 'm1', server_label: 'calc', name: 'add', arguments: '{"a":40,"b":2}', output: '42', error: null });
      assert.match(byType['mcp_call']!.id, /^mcp_/);
      const saved = await readFile(path.join(workspaces(), 'acme', done.conversationId, 'downloads', 'report.txt'), 'utf8');
      assert.equal(saved, 'report body');
      // The conversation items API lists it as such.
      const listed = await jsonReply(
        await fetch(`${bed.gw.url}/v1/conversations/${done.conversationId}/items?order=asc&limit=100`, { headers: bed.gw.auth('admin') }),
      );
      assert.equal(listed.status, 200, listed.text);
      const mcpItem = (listed.body['data'] as Json[]).find((i) => i['type'] === 'mcp_call');
      assert.ok(mcpItem, listed.text);
      assert.equal(mcpItem['server_label'], 'calc');
      assert.equal(mcpItem['output'], '42');
      // The second step's model sees the MCP call and its result in the run's history.
      const report = bed.upstream.calls.find((c) => !c.judge && c.prompt.includes('Report what you found'))!;
      const messages = messagesOf(report.body);
      assert.ok(messages.some((m) => m.role === 'assistant' && m.tool_calls?.some((t) => t.id === 'm1' && t.function.name === 'calc__add')));
      assert.ok(
        messages.some((m) => m.role === 'tool' && m.tool_call_id === 'm1' && m.content === '42'),
        JSON.stringify(messages),
      );
      // The first step was judged on what it produced (the sum among it).
      const judged = bed.upstream.calls.find((c) => c.judge)!;
      assert.match(JSON.stringify(judged.body['messages']), /42/);
      const steps = await bed.gw.store.steps.list(done.id);
      assert.equal(steps[0]!.result, 'pass');
    });

    it('an agent invoked as a model (agent/<id>) streams its svc_call items live', async () => {
      bed.upstream.script((body) =>
        toolMessages(body).length === 0
          ? { toolCalls: [{ id: 'inv1', name: 'svc_file_write', arguments: JSON.stringify({ path: 'inv.txt', content: 'streamed' }) }] }
          : { reply: 'written' },
      );
      const res = await post(`${bed.gw.url}/v1/responses`, { model: `agent/${agentId}`, input: 'go', stream: true }, bed.gw.auth('admin'));
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
      bed.upstream.script((body) => {
        const messages = messagesOf(body);
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
      const first = await jsonReply(await post(`${bed.gw.url}/v1/responses`, { model: 'fake', store: true, input: 'please write', tools }, {}));
      assert.equal(first.status, 200, first.text);
      const conversation = (first.body['conversation'] as Json)['id'] as string;
      assert.equal((first.body['output'] as Json[])[0]!['type'], 'svc_call');
      const stored = await bed.gw.store.conversations.listItems(conversation, { order: 'asc', limit: 100 });
      assert.ok(
        stored.some((i) => i.type === 'svc_call' && i.data['name'] === 'svc_file_write'),
        JSON.stringify(stored.map((i) => [i.type, i.data])),
      );
      const second = await jsonReply(
        await post(`${bed.gw.url}/v1/responses`, { model: 'fake', previous_response_id: first.body['id'], input: 'now read', tools }, {}),
      );
      assert.equal(second.status, 200, second.text);
      const read = (second.body['output'] as Json[])[0]!;
      assert.equal(read['output'], 'remember me', 'the same workspace across turns');
      // The next turn's history showed the first turn's call and its result to the model.
      const turn = bed.upstream.calls.find((c) => JSON.stringify(c.body['messages']).includes('now read'))!;
      const messages = messagesOf(turn.body);
      assert.ok(messages.some((m) => m.tool_calls?.[0]?.function.name === 'svc_file_write'));
      assert.ok(messages.some((m) => m.role === 'tool' && String(m.content).includes('Wrote 11 bytes')));
    });
  });
}
