// The real OpenAI Agents SDK (`@openai/agents` 0.20) mixing, in one agent run, a local function tool
// (run by the SDK) with tools the gateway runs inside POST /v1/responses: a hosted MCP tool
// (`hostedMcpTool`, a real MCP server on 127.0.0.1) and a hosted `svc_*` tool. The SDK has no helper
// for our `svc_*` types, but a plain `HostedTool` ({type: 'hosted_tool', providerData}) is sent as its
// providerData (openaiResponsesModel.js convertTool), so `{type: 'svc_file_write'}` reaches us as is.
//
// The fake model calls the MCP tool (the gateway runs it: an `mcp_call` item), then the local
// function (returned to the SDK, which runs it and sends its output back), and the svc tool (the
// gateway runs it: a `svc_call` item), then answers from all three. Two ways of holding the run's
// history:
// - the SDK's own (`run(agent, input)` with `store: true`): each model call resends the whole history.
//   The SDK resends an `mcp_call` without its output (it trusts the server to know its own item), so
//   the gateway fills it in (server-call-outputs.ts). It drops items of types it does not know
//   (`svc_call`) from that history, so a svc call made before the SDK's last function round trip would
//   be lost to the model: here the svc tool runs after it.
// - the gateway's (`previousResponseId`): the SDK sends only what is new, the gateway loads the stored
//   conversation, svc and MCP calls with their results included: any order works.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, hostedMcpTool, OpenAIProvider, run, setTracingDisabled, tool, type HostedTool, type ModelResponse, type RunItem } from '@openai/agents';
import { z } from 'zod';
import { startMcpServer, type RunningMcpServer } from '../fixtures/mcp/mcp-servers';
import { runUpstreamConfig, startRunUpstream, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { startTestGateway, TEST_KEYS, type TestGateway } from '../helpers/gateway';

type Json = Record<string, unknown>;
type Message = { role: string; content?: unknown; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string };
/** What a finished run (streamed or not) tells, as these tests read it. */
interface Finished {
  finalOutput?: unknown;
  newItems: RunItem[];
  rawResponses: ModelResponse[];
}

const messagesOf = (body: Json): Message[] => (body['messages'] as Message[] | undefined) ?? [];
/**
 * The results the model was shown, by the tool whose call they answer (not by call id: an `mcp_call`
 * item carries its own id, not the model's call id, so a resent one comes back under that).
 */
function resultsShown(body: Json): Record<string, string> {
  const messages = messagesOf(body);
  const toolOf = new Map(messages.flatMap((m) => (m.tool_calls ?? []).map((call) => [call.id, call.function.name] as const)));
  return Object.fromEntries(messages.flatMap((m) => (m.role === 'tool' ? [[toolOf.get(String(m.tool_call_id)) ?? '?', String(m.content)]] : [])));
}
const offered = (body: Json): string[] => ((body['tools'] as { function: { name: string } }[] | undefined) ?? []).map((t) => t.function.name).sort();

const ADD = { id: 'call_add', name: 'calc__add', arguments: JSON.stringify({ a: 2, b: 40 }) };
const SPELL = { id: 'call_spell', name: 'spell_number', arguments: JSON.stringify({ n: 42 }) };
const WRITE = { id: 'call_write', name: 'svc_file_write', arguments: JSON.stringify({ path: 'answer.txt', content: '42 is forty-two' }) };
const WROTE = 'Wrote 15 bytes to answer.txt.';

/** A request the process sent while a test ran. */
interface Sent {
  url: string;
  method: string;
  body: Json | null;
}

/** Every file under `dir`, relative path → content. */
async function filesUnder(dir: string): Promise<Record<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files: Record<string, string> = {};
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    files[path.relative(dir, full)] = await readFile(full, 'utf8');
  }
  return files;
}

/** The files of `after` not in `before`, as [file name, content] (a workspace's directory is the conversation's). */
const newFiles = (before: Record<string, string>, after: Record<string, string>): [string, string][] =>
  Object.entries(after).flatMap(([file, content]) => (file in before ? [] : [[path.basename(file), content] as [string, string]]));

describe('@openai/agents: a local function tool and hosted MCP and svc tools in one run', function () {
  this.timeout(60_000);
  let upstream: RunUpstream;
  let mcpServer: RunningMcpServer;
  let gw: TestGateway;
  let workspaces: string;
  let provider: OpenAIProvider;
  const sent: Sent[] = [];
  const realFetch = globalThis.fetch;
  /** The numbers the local function was run with, in order. */
  const spelled: number[] = [];

  before(async function () {
    this.timeout(180_000); // the embedded store's first start is slow on a busy machine
    upstream = await startRunUpstream();
    mcpServer = await startMcpServer('streamable-http');
    workspaces = await mkdtemp(path.join(tmpdir(), 'agw-agents-'));
    gw = await startTestGateway({
      config: { ...runUpstreamConfig(upstream), tools: { workspaceDir: workspaces, maxRounds: 4, allowHosts: ['127.0.0.1'] } },
    });
    // Traces would go to api.openai.com: off. Every request this process makes is recorded from now on
    // (the gateway's own MCP client included: it runs in this process too).
    setTracingDisabled(true);
    globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const url = input instanceof Request ? input.url : String(input);
      const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
      sent.push({ url, method, body: typeof init?.body === 'string' ? (JSON.parse(init.body) as Json) : null });
      return realFetch(input, init);
    };
    provider = new OpenAIProvider({ baseURL: `${gw.url}/v1`, apiKey: TEST_KEYS.admin, useResponses: true });
  });
  after(async () => {
    globalThis.fetch = realFetch;
    await provider?.close();
    await gw?.close();
    await mcpServer?.close();
    await upstream?.close();
    await rm(workspaces, { recursive: true, force: true });
  });
  beforeEach(() => {
    upstream.calls.length = 0;
    upstream.script(null);
    sent.length = 0;
    spelled.length = 0;
  });
  afterEach(() => {
    // Nothing left this machine (no traces to api.openai.com), whatever the test did.
    assert.deepEqual(
      sent.filter((request) => !request.url.startsWith('http://127.0.0.1:')).map((request) => request.url),
      [],
    );
  });

  const spellNumber = tool({
    name: 'spell_number',
    description: 'Spells a number in English words.',
    parameters: z.object({ n: z.number() }),
    execute: ({ n }) => {
      spelled.push(n);
      return Promise.resolve(n === 42 ? 'forty-two' : 'a number');
    },
  });
  /** Our hosted tool, as the SDK's generic HostedTool: sent as its providerData. */
  const fileWrite: HostedTool = { type: 'hosted_tool', name: 'svc_file_write', providerData: { type: 'svc_file_write' } };

  const agent = async (): Promise<Agent> =>
    new Agent({
      name: 'Mixed tools agent',
      instructions: 'Add, spell and save numbers with your tools.',
      model: await provider.getModel('fake'),
      tools: [spellNumber, hostedMcpTool({ serverLabel: 'calc', serverUrl: mcpServer.url, requireApproval: 'never', allowedTools: ['add'] }), fileWrite],
      // MCP tools need the stateful path (a stateless request with one is a 400).
      modelSettings: { store: true },
    });

  /** The bodies the SDK POSTed to /v1/responses. */
  const sentToGateway = (): Json[] => sent.filter((r) => r.method === 'POST' && r.url === `${gw.url}/v1/responses`).map((r) => r.body ?? {});
  const toolCalls = (): number => mcpServer.methods.filter((method) => method === 'tools/call').length;

  /** Runs to the end, streamed or not; a streamed run is consumed event by event. */
  async function runAgent(input: string, stream: boolean, options: { previousResponseId?: string } = {}): Promise<Finished> {
    if (!stream) return run(await agent(), input, options);
    const streamed = await run(await agent(), input, { ...options, stream: true });
    /** The run's item events, as `event:tool` (`tool_output:<output>`), and the text deltas. */
    const items: string[] = [];
    const deltas: string[] = [];
    for await (const event of streamed) {
      if (event.type === 'run_item_stream_event') {
        const { item } = event;
        if (item.type === 'tool_call_item') items.push(`${event.name}:${'name' in item.rawItem ? String(item.rawItem.name) : item.rawItem.type}`);
        else if (item.type === 'tool_call_output_item') items.push(`${event.name}:${String(item.output)}`);
      } else if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') deltas.push(event.data.delta);
    }
    await streamed.completed;
    assert.equal(streamed.error, null);
    // The SDK announced the gateway's MCP call (a svc_call is an item it does not know: no event), ran its function.
    const calls = items.filter((entry) => /^tool_called:(mcp_call|spell_number)$|^tool_output:/.test(entry));
    assert.deepEqual(calls, ['tool_called:mcp_call', 'tool_called:spell_number', 'tool_output:forty-two'], items.join(', '));
    assert.equal(deltas.join(''), streamed.finalOutput, 'every text delta arrived');
    return streamed;
  }

  /** The raw output items of the model calls the SDK made, by type. */
  const rawTypes = (result: Finished): string[][] =>
    result.rawResponses.map((response) =>
      response.output.map((item) => String(item.type === 'hosted_tool_call' ? item.name : item.type === 'unknown' ? item.providerData?.['type'] : item.type)),
    );

  for (const stream of [false, true]) {
    const how = stream ? 'run(…, { stream: true })' : 'run()';

    it(`${how}, the SDK holding the history: the gateway runs the MCP call, the SDK the function, the gateway the svc tool; the model answers from all three`, async () => {
      upstream.script((body) => {
        const shown = resultsShown(body);
        if (!('calc__add' in shown)) return { toolCalls: [ADD] };
        if (!('spell_number' in shown)) return { toolCalls: [SPELL] };
        if (!('svc_file_write' in shown)) return { toolCalls: [WRITE] };
        return { reply: `2 + 40 = ${shown['calc__add']} (${shown['spell_number']}). ${shown['svc_file_write']}` };
      });
      const callsBefore = toolCalls();
      const filesBefore = await filesUnder(workspaces);
      const result = await runAgent('Add 2 and 40, spell the sum and save it.', stream);

      assert.equal(result.finalOutput, `2 + 40 = 42 (forty-two). ${WROTE}`);
      assert.deepEqual(spelled, [42], 'the SDK ran the local function once, with the model’s arguments');
      assert.equal(toolCalls() - callsBefore, 1, 'the MCP server saw one tools/call');

      // Two POSTs: the question; then the history with the function's output.
      const [ask, follow] = sentToGateway();
      assert.ok(ask && follow && sentToGateway().length === 2, `two POST /v1/responses, not ${sentToGateway().length}`);
      for (const body of [ask, follow]) {
        assert.equal(body['store'], true);
        assert.equal(body['stream'], stream);
        assert.deepEqual(
          (body['tools'] as Json[]).map((t) => t['type']),
          ['function', 'mcp', 'svc_file_write'],
        );
      }
      // The SDK resends its history: the question, the gateway's items it knows (not a svc_call: an item
      // type it does not know is not kept), the function call and its output.
      assert.deepEqual(
        (follow['input'] as Json[]).map((item) => item['type'] ?? item['role']),
        ['user', 'mcp_list_tools', 'mcp_call', 'function_call', 'function_call_output'],
      );
      // The MCP call comes without its output: the gateway knows it (see the model's turns below).
      const resent = (follow['input'] as Json[]).find((item) => item['type'] === 'mcp_call');
      assert.ok(resent, JSON.stringify(follow['input']));
      assert.equal(resent['output'], undefined);
      assert.deepEqual(
        (follow['input'] as Json[]).slice(-2).map((item) => [item['type'], item['call_id'], item['output'] ?? item['arguments']]),
        [
          ['function_call', 'call_spell', SPELL.arguments],
          ['function_call_output', 'call_spell', 'forty-two'],
        ],
      );

      // Four model turns: MCP call, function call (returned to the SDK), svc call, answer; each offered all three tools.
      assert.equal(upstream.calls.length, 4);
      for (const call of upstream.calls) assert.deepEqual(offered(call.body), ['calc__add', 'spell_number', 'svc_file_write']);
      const [, second, third, last] = upstream.calls.map((call) => call.body);
      assert.deepEqual(resultsShown(second!), { calc__add: '42' });
      assert.deepEqual(resultsShown(third!), { calc__add: '42', spell_number: 'forty-two' }, 'after the SDK’s round trip the model still sees the MCP result');
      assert.deepEqual(resultsShown(last!), { calc__add: '42', spell_number: 'forty-two', svc_file_write: WROTE });

      // What the SDK saw: the gateway's calls as items (mcp_call with its output), its own call and output.
      const mcpCall = result.newItems.find(
        (item) => item.type === 'tool_call_item' && item.rawItem.type === 'hosted_tool_call' && item.rawItem.name === 'mcp_call',
      );
      assert.ok(mcpCall && mcpCall.rawItem.type === 'hosted_tool_call');
      assert.equal(mcpCall.rawItem.output, '42');
      assert.deepEqual(
        result.newItems.flatMap((item) => (item.type === 'tool_call_output_item' ? [item.output] : [])),
        ['forty-two'],
      );
      assert.deepEqual(rawTypes(result), [
        ['mcp_list_tools', 'mcp_call', 'function_call'],
        // Each POST without previous_response_id starts a conversation of its own: its MCP tools are listed again.
        ['mcp_list_tools', 'svc_call', 'message'],
      ]);
      const svcCall = result.rawResponses[1]!.output.find((item) => item.type === 'unknown');
      assert.equal(svcCall?.providerData?.['output'], WROTE);
      assert.deepEqual(newFiles(filesBefore, await filesUnder(workspaces)), [['answer.txt', '42 is forty-two']], 'the svc tool wrote the file');
    });

    it(`${how} chained with previousResponseId, the gateway holding the history: svc and MCP calls before the SDK’s function round trip stay in it`, async () => {
      upstream.script(() => ({ reply: 'Hello, I can add, spell and save.' }));
      const opening = await run(await agent(), 'Hi');
      assert.equal(opening.finalOutput, 'Hello, I can add, spell and save.');
      sent.length = 0;
      upstream.calls.length = 0;

      upstream.script((body) => {
        const shown = resultsShown(body);
        // One turn with two gateway calls, then the SDK's function.
        if (!('calc__add' in shown)) return { toolCalls: [ADD, { ...WRITE, arguments: JSON.stringify({ path: 'chained.txt', content: 'sum pending' }) }] };
        if (!('spell_number' in shown)) return { toolCalls: [SPELL] };
        return { reply: `${shown['calc__add']}, ${shown['spell_number']}; ${shown['svc_file_write']}` };
      });
      const callsBefore = toolCalls();
      const filesBefore = await filesUnder(workspaces);
      const result = await runAgent('Add 2 and 40, note it, spell the sum.', stream, { previousResponseId: opening.lastResponseId! });

      assert.equal(result.finalOutput, '42, forty-two; Wrote 11 bytes to chained.txt.');
      assert.deepEqual(spelled, [42]);
      assert.equal(toolCalls() - callsBefore, 1);
      assert.deepEqual(newFiles(filesBefore, await filesUnder(workspaces)), [['chained.txt', 'sum pending']]);
      const [ask, follow] = sentToGateway();
      assert.ok(ask && follow && sentToGateway().length === 2);
      assert.equal(ask['previous_response_id'], opening.lastResponseId);
      // The SDK sends only what is new: the function's output, chained on the response that asked for it.
      assert.equal(follow['previous_response_id'], result.rawResponses[0]!.responseId);
      assert.deepEqual(
        (follow['input'] as Json[]).map((item) => [item['type'], item['call_id'], item['output']]),
        [['function_call_output', 'call_spell', 'forty-two']],
      );
      assert.equal(upstream.calls.length, 3);
      const last = upstream.calls.at(-1)!.body;
      assert.deepEqual(resultsShown(last), { calc__add: '42', svc_file_write: 'Wrote 11 bytes to chained.txt.', spell_number: 'forty-two' });
      assert.deepEqual(
        messagesOf(last)
          .filter((m) => m.role === 'user')
          .map((m) => m.content),
        ['Hi', 'Add 2 and 40, note it, spell the sum.'],
        'the stored history came first',
      );
      assert.deepEqual(rawTypes(result), [
        ['mcp_list_tools', 'mcp_call', 'svc_call', 'function_call'],
        ['mcp_list_tools', 'message'],
      ]);
      const mcpCall = result.newItems.find(
        (item) => item.type === 'tool_call_item' && item.rawItem.type === 'hosted_tool_call' && item.rawItem.name === 'mcp_call',
      );
      assert.ok(mcpCall && mcpCall.rawItem.type === 'hosted_tool_call');
      assert.equal(mcpCall.rawItem.output, '42');
    });
  }
});
