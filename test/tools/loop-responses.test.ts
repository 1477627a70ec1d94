// The tool loop through POST /v1/responses (spec "Hosted tools", Events rule 1): a model that calls
// hosted tools gets them run by the gateway, turn after turn, each call an `svc_call` item (streamed
// with its argument events), failures shown to the model, function tools left to the caller, svc_tools
// expanded per organization, outputs under the organization's DLP policy, each call audited.
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { organizationsWithDlp } from '../helpers/config';
import { assertOpenResponsesEvent, assertOpenResponsesObject, assertOurEvent, assertOurResponseObject } from '../support/open-responses';
import { assertNestedError, assertResponsesFraming, jsonReply, parseSseFrames, typesOf } from '../responses/http-helpers';
import type { RunUpstream } from '../fixtures/upstreams/run-upstream';
import { messagesOf, offered, toolMessages, useToolGateway, type Json } from './tool-gateway';
import { BACKENDS } from '../helpers/backends';

/** Write a file, read it back, then answer with what was read. */
function writeThenRead(upstream: RunUpstream, file = 'notes/a.txt'): void {
  upstream.script((body) => {
    const tools = toolMessages(body);
    if (tools.length === 0) return { toolCalls: [{ id: 'call_w', name: 'svc_file_write', arguments: JSON.stringify({ path: file, content: 'hello tools' }) }] };
    if (tools.length === 1) return { toolCalls: [{ id: 'call_r', name: 'svc_file_read', arguments: JSON.stringify({ path: file }) }] };
    return { reply: `The file says: ${String(tools[1]!.content)}` };
  });
}

for (const backend of BACKENDS) {
  describe(`tool loop: hosted tools through POST /v1/responses (${backend})`, function () {
    this.timeout(60_000);
    const bed = useToolGateway(() => ({
      backend,
      tools: { maxRounds: 3 },
      config: {
        organizations: organizationsWithDlp({ enabled: true, detectors: ['email'] }).map((org) =>
          org['id'] === 'other' ? { ...org, models: ['*'], tools: { disabled: ['svc_file_write'] } } : org,
        ),
        plugins: { auth: { enabled: true }, dlp: { enabled: true }, audit: { enabled: true } },
      },
    }));

    const create = (body: Json, who: 'admin' | 'outsider' = 'admin'): Promise<Response> => bed.respond(body, who);

    it('runs the calls turn after turn and returns svc_call items, then the answer', async () => {
      writeThenRead(bed.upstream);
      const reply = await jsonReply(await create({ input: 'save and read a note', tools: [{ type: 'svc_file_write' }, { type: 'svc_file_read' }] }));
      assert.equal(reply.status, 200, reply.text);
      const output = reply.body['output'] as Json[];
      assert.deepEqual(
        output.map((item) => item['type']),
        ['svc_call', 'svc_call', 'message'],
      );
      const [write, read, message] = output as [Json, Json, Json];
      assert.equal(write['name'], 'svc_file_write');
      assert.equal(write['status'], 'completed');
      assert.match(String(write['output']), /Wrote 11 bytes to notes\/a\.txt/);
      assert.equal(write['error'], null);
      assert.equal(read['output'], 'hello tools');
      assert.deepEqual(JSON.parse(String(read['arguments'])), { path: 'notes/a.txt' });
      assert.match(JSON.stringify(message['content']), /The file says: hello tools/);
      // Valid by the Open Responses spec (svc_call, an extension, by our own document's schema for it).
      assertOpenResponsesObject(reply.body);
      assertOurResponseObject(reply.body);
      // Three model turns, each offered the hosted tools as functions with their schemas; the usage is their sum.
      assert.equal(bed.upstream.calls.length, 3);
      assert.deepEqual(offered(bed.upstream.calls[0]!.body), ['svc_file_write', 'svc_file_read']);
      const fn = (bed.upstream.calls[0]!.body['tools'] as { function: { parameters: Json } }[])[0]!.function;
      assert.deepEqual((fn.parameters['required'] as string[]).sort(), ['content', 'path']);
      assert.equal((reply.body['usage'] as Json)['input_tokens'], 30);
      // The second turn carried the first call and its result.
      const second = messagesOf(bed.upstream.calls[1]!.body);
      assert.equal(second.at(-2)?.tool_calls?.[0]?.function.name, 'svc_file_write');
      assert.equal(second.at(-1)?.tool_call_id, 'call_w');
    });

    it("a response kept nowhere (store: false) leaves no workspace behind; a stored one keeps its conversation's", async () => {
      writeThenRead(bed.upstream, 'gone.txt');
      const unstored = await jsonReply(await create({ input: 'save and read', store: false, tools: [{ type: 'svc_file_write' }, { type: 'svc_file_read' }] }));
      assert.equal(unstored.status, 200, unstored.text);
      assert.equal((unstored.body['output'] as Json[])[1]!['output'], 'hello tools');
      const left = await readdir(bed.workspaces, { recursive: true });
      assert.ok(!left.some((entry) => entry.includes(String(unstored.body['id']))), `workspace left: ${left.join(', ')}`);
      assert.ok(!left.some((entry) => entry.endsWith('gone.txt')), `file left: ${left.join(', ')}`);

      writeThenRead(bed.upstream, 'kept.txt');
      const stored = await jsonReply(await create({ input: 'save and read', store: true, tools: [{ type: 'svc_file_write' }, { type: 'svc_file_read' }] }));
      assert.equal(stored.status, 200, stored.text);
      const kept = await readdir(bed.workspaces, { recursive: true });
      assert.ok(
        kept.some((entry) => entry.endsWith('kept.txt')),
        `stored response's file: ${kept.join(', ')}`,
      );
    });

    it('streams each svc_call: added, argument deltas, arguments done, then done with its output', async () => {
      writeThenRead(bed.upstream, 'streamed.txt');
      const res = await create({ input: 'go', stream: true, tools: [{ type: 'svc_file_write' }, { type: 'svc_file_read' }] });
      assert.equal(res.status, 200);
      const frames = parseSseFrames(await res.text());
      assertResponsesFraming(frames);
      for (const frame of frames) {
        assertOpenResponsesEvent(frame.data);
        assertOurEvent(frame.data);
      }
      const types = typesOf(frames);
      const first = types.indexOf('response.output_item.added');
      assert.deepEqual(types.slice(0, 2), ['response.created', 'response.in_progress']);
      assert.equal((frames[first]!.data['item'] as Json)['type'], 'svc_call');
      assert.equal((frames[first]!.data['item'] as Json)['status'], 'in_progress');
      const deltaAt = types.indexOf('response.svc_call_arguments.delta');
      const argsDoneAt = types.indexOf('response.svc_call_arguments.done');
      const doneAt = types.indexOf('response.output_item.done');
      assert.ok(first < deltaAt && deltaAt < argsDoneAt && argsDoneAt < doneAt, types.join(', '));
      const done = frames[doneAt]!.data['item'] as Json;
      assert.equal(done['type'], 'svc_call');
      assert.equal(done['status'], 'completed');
      assert.match(String(done['output']), /Wrote 11 bytes/);
      assert.equal(frames[argsDoneAt]!.data['arguments'], JSON.stringify({ path: 'streamed.txt', content: 'hello tools' }));
      assert.equal(types.filter((t) => t === 'response.svc_call_arguments.done').length, 2);
      assert.equal(types.at(-1), 'response.completed');
      const completed = frames.at(-1)!.data['response'] as Json;
      assert.deepEqual(
        (completed['output'] as Json[]).map((item) => item['type']),
        ['svc_call', 'svc_call', 'message'],
      );
    });

    it('a failing call is an item with status failed whose message the model sees; the response completes', async () => {
      bed.upstream.script((body) =>
        toolMessages(body).length === 0
          ? { toolCalls: [{ id: 'call_x', name: 'svc_file_read', arguments: JSON.stringify({ path: '../../../etc/passwd' }) }] }
          : { reply: `seen: ${String(toolMessages(body)[0]!.content)}` },
      );
      const reply = await jsonReply(await create({ input: 'read outside', tools: [{ type: 'svc_file_read' }] }));
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.body['status'], 'completed');
      const call = (reply.body['output'] as Json[])[0]!;
      assert.equal(call['status'], 'failed');
      assert.equal(call['output'], null);
      assert.match(String(call['error']), /leaves the workspace/);
      assert.match(String(toolMessages(bed.upstream.calls[1]!.body)[0]!.content), /leaves the workspace/);
    });

    it('leaves function tools to the caller: their calls end the loop as function_call items', async () => {
      bed.upstream.script(() => ({ toolCalls: [{ id: 'call_f', name: 'lookup', arguments: '{"q":"x"}' }] }));
      const reply = await jsonReply(
        await create({ input: 'x', tools: [{ type: 'svc_file_list' }, { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }] }),
      );
      assert.equal(reply.status, 200, reply.text);
      const output = reply.body['output'] as Json[];
      assert.deepEqual(
        output.map((item) => [item['type'], item['name']]),
        [['function_call', 'lookup']],
      );
      assert.equal(bed.upstream.calls.length, 1, 'the function call was not executed, nor the model asked again');
    });

    it('svc_tools expands to the organization current set; a switched-off tool is not offered, and naming it is a 400', async () => {
      bed.upstream.script(() => ({ reply: 'ok' }));
      assert.equal((await create({ input: 'x', tools: [{ type: 'svc_tools' }] })).status, 200);
      const all = offered(bed.upstream.calls[0]!.body);
      for (const name of ['svc_file_read', 'svc_file_write', 'svc_file_list']) assert.ok(all.includes(name), `${name} in ${all.join(', ')}`);
      assert.ok(all.every((name) => name.startsWith('svc_')));
      assert.equal((await create({ input: 'x', tools: [{ type: 'svc_tools' }] }, 'outsider')).status, 200);
      const theirs = offered(bed.upstream.calls[1]!.body);
      assert.ok(!theirs.includes('svc_file_write'), theirs.join(', '));
      assert.ok(theirs.includes('svc_file_read'));
      const refused = await jsonReply(await create({ input: 'x', tools: [{ type: 'svc_file_write' }] }, 'outsider'));
      assertNestedError(refused, 400, 'unsupported_tool_type', 'tools[0]');
      const unknown = await jsonReply(await create({ input: 'x', tools: [{ type: 'svc_teleport' }] }));
      assertNestedError(unknown, 400, 'unsupported_tool_type', 'tools[0]');
    });

    it('stops offering tools after tools.maxRounds turns (tool_choice none), so a looping model must answer', async () => {
      bed.upstream.script((body) =>
        body['tool_choice'] === 'none'
          ? { reply: 'giving up' }
          : { toolCalls: [{ id: `c${bed.upstream.calls.length}`, name: 'svc_file_list', arguments: '{}' }] },
      );
      const reply = await jsonReply(await create({ input: 'loop', tools: [{ type: 'svc_file_list' }] }));
      assert.equal(reply.status, 200, reply.text);
      assert.equal(bed.upstream.calls.length, 4, 'three rounds with tools, then one without');
      assert.equal(bed.upstream.calls[3]!.body['tool_choice'], 'none');
      assert.equal((reply.body['output'] as Json[]).filter((item) => item['type'] === 'svc_call').length, 3);
    });

    it('a forced tool_choice applies to the first turn only', async () => {
      bed.upstream.script((body) =>
        toolMessages(body).length === 0 ? { toolCalls: [{ id: 'c1', name: 'svc_file_list', arguments: '{}' }] } : { reply: 'listed' },
      );
      const reply = await jsonReply(await create({ input: 'x', tools: [{ type: 'svc_file_list' }], tool_choice: { type: 'svc_file_list' } }));
      assert.equal(reply.status, 200, reply.text);
      assert.deepEqual(bed.upstream.calls[0]!.body['tool_choice'], { type: 'function', function: { name: 'svc_file_list' } });
      assert.equal(bed.upstream.calls[1]!.body['tool_choice'], 'auto');
    });

    it('tool outputs pass the organization DLP policy before the model sees them', async () => {
      bed.upstream.script((body) => {
        const tools = toolMessages(body);
        if (tools.length === 0)
          return { toolCalls: [{ id: 'w', name: 'svc_file_write', arguments: JSON.stringify({ path: 'c.txt', content: 'mail bob@example.com' }) }] };
        if (tools.length === 1) return { toolCalls: [{ id: 'r', name: 'svc_file_read', arguments: JSON.stringify({ path: 'c.txt' }) }] };
        return { reply: 'done' };
      });
      const reply = await jsonReply(await create({ input: 'x', tools: [{ type: 'svc_file_write' }, { type: 'svc_file_read' }] }));
      assert.equal(reply.status, 200, reply.text);
      const seen = String(toolMessages(bed.upstream.calls[2]!.body)[1]!.content);
      assert.ok(!seen.includes('bob@example.com'), seen);
      assert.match(seen, /\[REDACTED:email\]/);
      assert.match(String((reply.body['output'] as Json[])[1]!['output']), /\[REDACTED:email\]/);
    });

    it('each call is in the audit trail (tool, duration, status) without its arguments or output', async () => {
      writeThenRead(bed.upstream, 'audited.txt');
      const reply = await jsonReply(await create({ input: 'x', tools: [{ type: 'svc_file_write' }, { type: 'svc_file_read' }] }));
      const responseId = String(reply.body['id']);
      let records: Json[] = [];
      for (let i = 0; i < 50 && records.length < 2; i += 1) {
        records = (await bed.gw.store.audit.list({ orgId: 'acme', since: null, limit: 500, after: null })).filter(
          (r) => (r as unknown as Json)['operationId'] === 'toolCall' && (r.resourceIds as Json)['responseId'] === responseId,
        ) as unknown as Json[];
        if (records.length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.deepEqual(records.map((r) => r['route']).sort(), ['tool:svc_file_read', 'tool:svc_file_write']);
      assert.ok(records.every((r) => r['status'] === 200 && typeof r['latencyMs'] === 'number'));
      assert.ok(!JSON.stringify(records).includes('hello tools'), 'no output in the audit trail');
      const metrics = await (await fetch(`${bed.gw.url}/metrics`)).text();
      assert.match(metrics, /agw_tool_calls_total\{tool="svc_file_write",status="completed"\} \d+/);
    });
  });
}
