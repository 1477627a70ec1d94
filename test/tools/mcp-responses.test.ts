// MCP tools through POST /v1/responses, end to end: a real MCP server made with the official SDK, a
// fake model upstream that calls the server's tool, and the gateway between them listing the server's
// tools (an `mcp_list_tools` item), running the call (an `mcp_call` item) and feeding the result back.
import assert from 'node:assert/strict';
import { startMcpServer, type RunningMcpServer } from '../fixtures/mcp/mcp-servers';
import { assertResponsesFraming, jsonReply, parseSseFrames, post, typesOf } from '../responses/http-helpers';
import { messagesOf, offered, toolMessages, useToolGateway, type Json } from './tool-gateway';
import { BACKENDS } from '../helpers/backends';

for (const backend of BACKENDS) {
  describe(`MCP tools through POST /v1/responses (${backend})`, function () {
    this.timeout(60_000);
    let mcpServer: RunningMcpServer;
    const bed = useToolGateway(async () => {
      mcpServer = await startMcpServer('streamable-http');
      // Hosted tools get 200 ms; MCP calls their own, longer bound.
      return {
        backend,
        tools: { maxRounds: 3, allowHosts: ['127.0.0.1'], timeoutMs: 200, mcp: { callTimeoutMs: 10_000 } },
        teardown: () => mcpServer?.close(),
      };
    });

    const mcpTool = (patch: Json = {}): Json => ({
      type: 'mcp',
      server_label: 'calc',
      server_url: mcpServer.url,
      headers: { 'X-Api-Key': 'k-e2e' },
      allowed_tools: ['add', 'fail'],
      require_approval: 'never',
      ...patch,
    });

    it('lists the allowed tools, runs the model’s call on the server and answers with its result', async () => {
      bed.upstream.script((body) => {
        const tools = toolMessages(body);
        if (tools.length === 0) return { toolCalls: [{ id: 'call_add', name: 'calc__add', arguments: JSON.stringify({ a: 2, b: 40 }) }] };
        return { reply: `The sum is ${String(tools[0]!.content)}.` };
      });
      const reply = await jsonReply(
        await post(`${bed.gw.url}/v1/responses`, { model: 'fake', input: 'add 2 and 40', store: true, tools: [mcpTool()] }, bed.gw.auth('admin')),
      );
      assert.equal(reply.status, 200, reply.text);
      const output = reply.body['output'] as Json[];
      assert.deepEqual(
        output.map((item) => item['type']),
        ['mcp_list_tools', 'mcp_call', 'message'],
      );
      const [list, call, message] = output as [Json, Json, Json];
      assert.equal(list['server_label'], 'calc');
      assert.deepEqual(
        (list['tools'] as Json[]).map((tool) => tool['name']),
        ['add', 'fail'],
      );
      assert.equal(call['name'], 'add');
      assert.equal(call['output'], '42');
      assert.match(JSON.stringify(message['content']), /The sum is 42\./);
      // The model was offered only the allowed tools, named <server_label>__<tool>.
      assert.deepEqual(offered(bed.upstream.calls.at(-2)!.body), ['calc__add', 'calc__fail']);
      assert.ok(mcpServer.headers.some((headers) => headers['x-api-key'] === 'k-e2e'));
    });

    it('shows the server’s error result to the model as a failed call, not a failed response', async () => {
      bed.upstream.script((body) => {
        const tools = toolMessages(body);
        if (tools.length === 0) return { toolCalls: [{ id: 'call_fail', name: 'calc__fail', arguments: '{}' }] };
        return { reply: `It failed: ${String(tools[0]!.content)}` };
      });
      const reply = await jsonReply(
        await post(`${bed.gw.url}/v1/responses`, { model: 'fake', input: 'try it', store: true, tools: [mcpTool()] }, bed.gw.auth('admin')),
      );
      assert.equal(reply.status, 200, reply.text);
      const call = (reply.body['output'] as Json[]).find((item) => item['type'] === 'mcp_call')!;
      assert.match(String(call['error']), /the widget is broken/);
      assert.match(JSON.stringify((reply.body['output'] as Json[]).at(-1)), /the widget is broken/);
    });

    it('bounds an MCP call by tools.mcp.callTimeoutMs, not the hosted tools’ tools.timeoutMs', async () => {
      bed.upstream.script((body) => {
        const tools = toolMessages(body);
        if (tools.length === 0) return { toolCalls: [{ id: 'call_slow', name: 'calc__slow', arguments: JSON.stringify({ ms: 600 }) }] };
        return { reply: String(tools[0]!.content) };
      });
      const reply = await jsonReply(
        await post(
          `${bed.gw.url}/v1/responses`,
          { model: 'fake', input: 'wait', store: true, tools: [mcpTool({ allowed_tools: ['slow'] })] },
          bed.gw.auth('admin'),
        ),
      );
      assert.equal(reply.status, 200, reply.text);
      const call = (reply.body['output'] as Json[]).find((item) => item['type'] === 'mcp_call')!;
      assert.equal(call['output'], 'slept 600 ms', JSON.stringify(call));
    });

    it('asks for approval by default (require_approval absent) and does not call the server', async () => {
      bed.upstream.script(() => ({ toolCalls: [{ id: 'call_add2', name: 'calc__add', arguments: JSON.stringify({ a: 1, b: 1 }) }] }));
      const calls = mcpServer.methods.filter((method) => method === 'tools/call').length;
      const tool = mcpTool();
      delete tool['require_approval'];
      const reply = await jsonReply(
        await post(`${bed.gw.url}/v1/responses`, { model: 'fake', input: 'add', store: true, tools: [tool] }, bed.gw.auth('admin')),
      );
      assert.equal(reply.status, 200, reply.text);
      const request = (reply.body['output'] as Json[]).find((item) => item['type'] === 'mcp_approval_request');
      assert.ok(request, JSON.stringify(reply.body['output']));
      assert.equal(request['name'], 'add');
      assert.equal(request['server_label'], 'calc');
      assert.equal(mcpServer.methods.filter((method) => method === 'tools/call').length, calls);
    });

    it('an approved request runs on the next turn (mcp_approval_response), a denied one is shown to the model as denied', async () => {
      const tool = mcpTool();
      delete tool['require_approval'];
      bed.upstream.script((body) => {
        const tools = toolMessages(body);
        if (tools.length === 0) return { toolCalls: [{ id: 'call_ok', name: 'calc__add', arguments: JSON.stringify({ a: 20, b: 22 }) }] };
        return { reply: `Result: ${String(tools.at(-1)!.content)}` };
      });
      const first = await jsonReply(
        await post(`${bed.gw.url}/v1/responses`, { model: 'fake', input: 'add', store: true, tools: [tool] }, bed.gw.auth('admin')),
      );
      const request = (first.body['output'] as Json[]).find((item) => item['type'] === 'mcp_approval_request')!;
      const calls = mcpServer.methods.filter((method) => method === 'tools/call').length;
      const approved = await post(
        `${bed.gw.url}/v1/responses`,
        {
          model: 'fake',
          previous_response_id: first.body['id'],
          input: [{ type: 'mcp_approval_response', approval_request_id: request['id'], approve: true }],
          tools: [tool],
          stream: true,
        },
        bed.gw.auth('admin'),
      );
      assert.equal(approved.status, 200);
      const frames = parseSseFrames(await approved.text());
      assertResponsesFraming(frames);
      const types = typesOf(frames);
      const added = frames.find((f) => f.data['type'] === 'response.output_item.added' && (f.data['item'] as Json)['type'] === 'mcp_call')!;
      assert.ok(added, types.join(', '));
      assert.ok(types.includes('response.mcp_call_arguments.done'), types.join(', '));
      const final = frames.at(-1)!.data['response'] as Json;
      const call = (final['output'] as Json[]).find((item) => item['type'] === 'mcp_call')!;
      assert.equal(call['status'], 'completed');
      assert.equal(call['output'], '42');
      assert.equal(mcpServer.methods.filter((method) => method === 'tools/call').length, calls + 1, 'the approved call ran once');
      assert.match(JSON.stringify(final['output']), /Result: 42/);

      const second = await jsonReply(
        await post(`${bed.gw.url}/v1/responses`, { model: 'fake', input: 'add again', store: true, tools: [tool] }, bed.gw.auth('admin')),
      );
      const again = (second.body['output'] as Json[]).find((item) => item['type'] === 'mcp_approval_request')!;
      const denied = await jsonReply(
        await post(
          `${bed.gw.url}/v1/responses`,
          {
            model: 'fake',
            previous_response_id: second.body['id'],
            input: [{ type: 'mcp_approval_response', approval_request_id: again['id'], approve: false, reason: 'not today' }],
            tools: [tool],
          },
          bed.gw.auth('admin'),
        ),
      );
      assert.equal(denied.status, 200, denied.text);
      const deniedCall = (denied.body['output'] as Json[]).find((item) => item['type'] === 'mcp_call')!;
      assert.equal(deniedCall['status'], 'failed');
      assert.match(String(deniedCall['error']), /denied this call: not today/);
      assert.equal(mcpServer.methods.filter((method) => method === 'tools/call').length, calls + 1, 'the denied call never reached the server');
      const unknown = await jsonReply(
        await post(
          `${bed.gw.url}/v1/responses`,
          {
            model: 'fake',
            previous_response_id: denied.body['id'],
            input: [{ type: 'mcp_approval_response', approval_request_id: 'mcpr_nope', approve: true }],
            tools: [tool],
          },
          bed.gw.auth('admin'),
        ),
      );
      assert.equal(unknown.status, 400, unknown.text);
      assert.equal((unknown.body['error'] as Json)['param'], 'input[0].approval_request_id');
    });

    /** A stored response in which the model called calc.add(2, 40): its mcp_call item. */
    async function storedAddCall(): Promise<{ response: Json; call: Json }> {
      bed.upstream.script((body) => {
        const tools = toolMessages(body);
        if (tools.length === 0) return { toolCalls: [{ id: 'call_add', name: 'calc__add', arguments: JSON.stringify({ a: 2, b: 40 }) }] };
        return { reply: `The sum is ${String(tools[0]!.content)}.` };
      });
      const reply = await jsonReply(
        await post(`${bed.gw.url}/v1/responses`, { model: 'fake', input: 'add', store: true, tools: [mcpTool()] }, bed.gw.auth('admin')),
      );
      assert.equal(reply.status, 200, reply.text);
      const call = (reply.body['output'] as Json[]).find((item) => item['type'] === 'mcp_call');
      assert.ok(call);
      return { response: reply.body, call };
    }

    it('a conversation holding an mcp_call continues (previous_response_id): the model is shown the call and its result', async () => {
      const { response, call } = await storedAddCall();
      bed.upstream.script(() => ({ reply: 'Still 42.' }));
      const next = await jsonReply(
        await post(`${bed.gw.url}/v1/responses`, { model: 'fake', previous_response_id: response['id'], input: 'and now?' }, bed.gw.auth('admin')),
      );
      assert.equal(next.status, 200, next.text);
      const messages = messagesOf(bed.upstream.calls.at(-1)!.body);
      const shown = messages.find((m) => m.role === 'tool');
      assert.deepEqual(shown, { role: 'tool', tool_call_id: call['id'], content: '42' });
    });

    it('an mcp_call sent back without its output (as @openai/agents does) is shown to the model with the output the gateway recorded', async () => {
      const { call } = await storedAddCall();
      bed.upstream.script(() => ({ reply: 'Noted.' }));
      const { output: _output, ...withoutOutput } = call;
      // A new conversation (store: true, no previous_response_id): the client sends its own history.
      const reply = await jsonReply(
        await post(
          `${bed.gw.url}/v1/responses`,
          {
            model: 'fake',
            store: true,
            input: [{ role: 'user', content: 'add' }, withoutOutput, { ...withoutOutput, id: 'mcp_notours' }, { role: 'user', content: 'thanks' }],
          },
          bed.gw.auth('admin'),
        ),
      );
      assert.equal(reply.status, 200, reply.text);
      const messages = messagesOf(bed.upstream.calls.at(-1)!.body);
      // The call the gateway ran gets its result; one it never ran has none to show and is left out.
      assert.deepEqual(
        messages.filter((m) => m.role === 'tool'),
        [{ role: 'tool', tool_call_id: call['id'], content: '42' }],
      );
      // The conversation keeps the completed call (under an id of its own, as every input item): a continuation shows it too.
      bed.upstream.script(() => ({ reply: 'Yes.' }));
      const next = await jsonReply(
        await post(`${bed.gw.url}/v1/responses`, { model: 'fake', previous_response_id: reply.body['id'], input: 'sure?' }, bed.gw.auth('admin')),
      );
      assert.equal(next.status, 200, next.text);
      const continued = messagesOf(bed.upstream.calls.at(-1)!.body);
      const [result] = continued.filter((m) => m.role === 'tool');
      assert.equal(result?.content, '42');
      const asked = continued.find((m) => m.tool_calls?.some((c) => c.id === result.tool_call_id));
      assert.deepEqual(
        asked?.tool_calls?.map((c) => [c.function.name, c.function.arguments]),
        [['calc__add', '{"a":2,"b":40}']],
      );
    });

    it('refuses a server URL the SSRF guard does not allow, naming the tool', async () => {
      const reply = await jsonReply(
        await post(
          `${bed.gw.url}/v1/responses`,
          { model: 'fake', input: 'x', store: true, tools: [mcpTool({ server_url: 'http://10.0.0.1/mcp' })] },
          bed.gw.auth('admin'),
        ),
      );
      assert.equal(reply.status, 400, reply.text);
      assert.match(reply.text, /MCP server calc is not reachable from this gateway/);
    });

    it('refuses a malformed mcp tool with a 400 naming the field', async () => {
      const reply = await jsonReply(
        await post(
          `${bed.gw.url}/v1/responses`,
          { model: 'fake', input: 'x', store: true, tools: [mcpTool({ server_url: 'ftp://example.com/' })] },
          bed.gw.auth('admin'),
        ),
      );
      assert.equal(reply.status, 400, reply.text);
      assert.equal(((reply.body['error'] as Json)['param'] as string) ?? '', 'tools[0].server_url');
    });
  });
}
