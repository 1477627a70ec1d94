// The anthropic provider's canonical replies (generate) and streams (stream) against a fake Anthropic
// Messages API: recorded-shape replies and SSE streams split across TCP writes, mapped to ModelResponse
// and StreamPart on the caller's side, JSON mode included.
import assert from 'node:assert/strict';
import { assembleResponse } from '../../src/canonical/assemble';
import type { StreamPart, ToolDefinition } from '../../src/canonical/model';
import { GatewayError } from '../../src/http/errors';
import { UNEXPLAINED_REFUSAL } from '../../src/providers/anthropic/anthropic-to-canonical';
import { jsonToolEvents, messageStart, textMessage, textThenToolEvents } from '../fixtures/upstreams/anthropic-events';
import { useFakeAnthropicProvider } from '../fixtures/upstreams/anthropic-upstream';
import { collect, streamOf } from '../helpers/async-iterables';
import { modelRequest, streamedText } from '../helpers/canonical';

const weatherTool: ToolDefinition = {
  kind: 'function',
  name: 'get_weather',
  description: 'Current weather',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
};

describe('providers/anthropic canonical replies and streams', () => {
  const anthropic = useFakeAnthropicProvider();
  beforeEach(() => anthropic.fake.requests.splice(0));

  describe('replies (generate)', () => {
    it('maps text, tool calls (JSON-text arguments), finish reason and usage with cache reads and writes', async () => {
      anthropic.fake.script({
        kind: 'json',
        body: textMessage('', {
          content: [
            { type: 'text', text: 'Checking both.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { location: 'Oslo' } },
          ],
          stop_reason: 'tool_use',
          usage: { input_tokens: 100, output_tokens: 40, cache_read_input_tokens: 20, cache_creation_input_tokens: 5 },
        }),
      });
      const before = Math.floor(Date.now() / 1000);
      const response = await anthropic.provider.generate(modelRequest({ tools: [weatherTool] }), 'claude', {});
      assert.equal(response.id, 'msg_01TextReply');
      assert.equal(response.model, 'claude-sonnet-4-20250514', "the upstream's model name");
      assert.ok(response.created >= before && response.created <= before + 2);
      assert.deepEqual(response.content, [
        { type: 'text', text: 'Checking both.' },
        { type: 'tool-call', id: 'toolu_1', name: 'get_weather', arguments: '{"location":"Paris"}' },
        { type: 'tool-call', id: 'toolu_2', name: 'get_weather', arguments: '{"location":"Oslo"}' },
      ]);
      assert.equal(response.finishReason, 'tool_calls');
      assert.equal(response.rawFinishReason, 'tool_use');
      assert.equal(response.stopSequence, null);
      assert.deepEqual(response.usage, { inputTokens: 125, outputTokens: 40, cachedInputTokens: 20, cacheCreationInputTokens: 5 });
    });

    it('maps every stop reason, keeping the raw reason and the stop sequence', async () => {
      const expected: [string, string, string | null][] = [
        ['end_turn', 'stop', null],
        ['stop_sequence', 'stop', '###'],
        ['max_tokens', 'length', null],
        ['model_context_window_exceeded', 'length', null],
        ['tool_use', 'tool_calls', null],
        ['refusal', 'content_filter', null],
        ['pause_turn', 'other', null],
      ];
      for (const [stopReason, finish, stopSequence] of expected) {
        anthropic.fake.script({ kind: 'json', body: textMessage('x', { stop_reason: stopReason, stop_sequence: stopSequence }) });
        const response = await anthropic.provider.generate(modelRequest(), 'claude', {});
        assert.equal(response.finishReason, finish, stopReason);
        assert.equal(response.rawFinishReason, stopReason);
        assert.equal(response.stopSequence, stopSequence);
        // A refusal without stop_details still ends with a refusal part saying so.
        const refusal = stopReason === 'refusal' ? [{ type: 'text', text: UNEXPLAINED_REFUSAL, refusal: true }] : [];
        assert.deepEqual(response.content, [{ type: 'text', text: 'x' }, ...refusal]);
        assert.deepEqual(response.usage, { inputTokens: 25, outputTokens: 7 });
      }
    });

    it('maps thinking to reasoning with its signature, redacted thinking to redactedData, and server tool blocks to native parts', async () => {
      const serverToolUse = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'rome weather' } };
      const searchResult = {
        type: 'web_search_tool_result',
        tool_use_id: 'srvtoolu_1',
        content: [{ type: 'web_search_result', url: 'https://w.example', title: 'W' }],
      };
      anthropic.fake.script({
        kind: 'json',
        body: textMessage('', {
          content: [
            { type: 'thinking', thinking: 'Search first.', signature: 'EqQBsig' },
            { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' },
            serverToolUse,
            searchResult,
            { type: 'text', text: 'Sunny in Rome.' },
          ],
        }),
      });
      const response = await anthropic.provider.generate(modelRequest(), 'claude', {});
      assert.deepEqual(response.content, [
        { type: 'reasoning', text: 'Search first.', signature: 'EqQBsig' },
        { type: 'reasoning', text: '', redactedData: 'EmwKAhgBEgy3va' },
        { type: 'native', format: 'messages', value: serverToolUse },
        { type: 'native', format: 'messages', value: searchResult },
        { type: 'text', text: 'Sunny in Rome.' },
      ]);
    });
  });

  describe('streams', () => {
    it('translates events split across TCP writes: start, text block, tool call id/name then fragments, one finish with usage', async () => {
      anthropic.fake.script({ kind: 'sse', events: textThenToolEvents(), chunkBytes: 5 });
      const parts = await collect(anthropic.provider.stream(modelRequest({ tools: [weatherTool] }), 'claude', {}));
      const seen = anthropic.fake.requests[0];
      assert.equal(seen?.body['stream'], true);
      assert.equal(seen?.headers['accept'], 'text/event-stream');
      assert.deepEqual(parts[0], { type: 'start', id: 'msg_01Stream', model: 'claude-sonnet-4-20250514', created: (parts[0] as { created: number }).created });
      assert.deepEqual(parts.slice(1), [
        { type: 'text-start', id: 'b0' },
        { type: 'text-delta', id: 'b0', delta: 'Okay, let me ' },
        { type: 'text-delta', id: 'b0', delta: 'check.' },
        { type: 'text-end', id: 'b0' },
        { type: 'tool-call-start', id: 'b1', callId: 'toolu_01Weather', name: 'get_weather' },
        { type: 'tool-call-delta', id: 'b1', delta: '{"locati' },
        { type: 'tool-call-delta', id: 'b1', delta: 'on": "San Fra' },
        { type: 'tool-call-delta', id: 'b1', delta: 'ncisco, CA"}' },
        { type: 'tool-call-end', id: 'b1' },
        {
          type: 'finish',
          finishReason: 'tool_calls',
          rawFinishReason: 'tool_use',
          stopSequence: null,
          usage: { inputTokens: 482, outputTokens: 89, cachedInputTokens: 10 },
        },
      ]);
      const assembled = await assembleResponse(streamOf(parts));
      assert.deepEqual(assembled.content, [
        { type: 'text', text: 'Okay, let me check.' },
        { type: 'tool-call', id: 'toolu_01Weather', name: 'get_weather', arguments: '{"location": "San Francisco, CA"}' },
      ]);
    });

    it('a refusal (stop_reason and stop_details on message_delta) ends with a refusal block of its explanation after the text', async () => {
      const explanation = 'This request was declined because it could enable cyber harm.';
      anthropic.fake.script({
        kind: 'sse',
        events: [
          messageStart(),
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello..' } },
          { type: 'content_block_stop', index: 0 },
          { type: 'message_delta', delta: { stop_reason: 'refusal', stop_sequence: null, stop_details: { type: 'refusal', explanation } } },
          { type: 'message_stop' },
        ],
      });
      const parts = await collect(anthropic.provider.stream(modelRequest(), 'claude', {}));
      assert.deepEqual(parts.slice(1, -1), [
        { type: 'text-start', id: 'b0' },
        { type: 'text-delta', id: 'b0', delta: 'Hello..' },
        { type: 'text-end', id: 'b0' },
        { type: 'text-start', id: 'refusal', refusal: true },
        { type: 'text-delta', id: 'refusal', delta: explanation },
        { type: 'text-end', id: 'refusal' },
      ]);
      assert.equal((parts.at(-1) as { finishReason?: string }).finishReason, 'content_filter');
      const assembled = await assembleResponse(streamOf(parts));
      assert.deepEqual(assembled.content, [
        { type: 'text', text: 'Hello..' },
        { type: 'text', text: explanation, refusal: true },
      ]);
    });

    it('keeps a tool call whose input came whole in content_block_start, and parallel calls apart', async () => {
      const events = textThenToolEvents().filter((e) => !(e['type'] === 'content_block_delta' && e['index'] === 1));
      const toolStart = events.find((e) => e['type'] === 'content_block_start' && e['index'] === 1) as { content_block: { input: unknown } };
      toolStart.content_block.input = { location: 'Lyon' };
      events.splice(
        -2,
        0,
        { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_second', name: 'get_time', input: {} } },
        { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"tz":' } },
        { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"CET"}' } },
        { type: 'content_block_stop', index: 2 },
      );
      anthropic.fake.script({ kind: 'sse', events, chunkBytes: 3 });
      const parts = await collect(anthropic.provider.stream(modelRequest(), 'claude', {}));
      assert.deepEqual(
        parts.filter((p) => p.type === 'tool-call-delta'),
        [
          { type: 'tool-call-delta', id: 'b1', delta: '{"location":"Lyon"}' },
          { type: 'tool-call-delta', id: 'b2', delta: '{"tz":' },
          { type: 'tool-call-delta', id: 'b2', delta: '"CET"}' },
        ],
      );
      const assembled = await assembleResponse(streamOf(parts));
      assert.deepEqual(
        assembled.content.filter((p) => p.type === 'tool-call'),
        [
          { type: 'tool-call', id: 'toolu_01Weather', name: 'get_weather', arguments: '{"location":"Lyon"}' },
          { type: 'tool-call', id: 'toolu_second', name: 'get_time', arguments: '{"tz":"CET"}' },
        ],
      );
    });

    it('streams thinking as reasoning with the signature on reasoning-end, redacted thinking, server tool blocks as native parts, and the stop sequence', async () => {
      const searchResult = {
        type: 'web_search_tool_result',
        tool_use_id: 'srvtoolu_1',
        content: [{ type: 'web_search_result', url: 'https://w.example', title: 'W' }],
      };
      const events: Record<string, unknown>[] = [
        messageStart({ id: 'msg_01Canon', usage: { input_tokens: 50, output_tokens: 1, cache_creation_input_tokens: 200 } }),
        { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'I should ' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'search.' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBsig' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' } },
        { type: 'content_block_stop', index: 1 },
        { type: 'content_block_start', index: 2, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } },
        { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"query": "rome' } },
        { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: ' weather"}' } },
        { type: 'content_block_stop', index: 2 },
        { type: 'content_block_start', index: 3, content_block: searchResult },
        { type: 'content_block_stop', index: 3 },
        { type: 'content_block_start', index: 4, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 4, delta: { type: 'text_delta', text: 'Sunny ###' } },
        { type: 'content_block_stop', index: 4 },
        { type: 'message_delta', delta: { stop_reason: 'stop_sequence', stop_sequence: '###' }, usage: { output_tokens: 30, cache_read_input_tokens: 40 } },
        { type: 'message_stop' },
      ];
      anthropic.fake.script({ kind: 'sse', events, chunkBytes: 11 });
      const parts = await collect(anthropic.provider.stream(modelRequest(), 'claude', {}));
      assert.deepEqual(parts.slice(1), [
        { type: 'reasoning-start', id: 'b0' },
        { type: 'reasoning-delta', id: 'b0', delta: 'I should ' },
        { type: 'reasoning-delta', id: 'b0', delta: 'search.' },
        { type: 'reasoning-end', id: 'b0', signature: 'EqQBsig' },
        { type: 'reasoning-start', id: 'b1', redactedData: 'EmwKAhgBEgy3va' },
        { type: 'reasoning-end', id: 'b1' },
        { type: 'native', format: 'messages', value: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'rome weather' } } },
        { type: 'native', format: 'messages', value: searchResult },
        { type: 'text-start', id: 'b4' },
        { type: 'text-delta', id: 'b4', delta: 'Sunny ###' },
        { type: 'text-end', id: 'b4' },
        {
          type: 'finish',
          finishReason: 'stop',
          rawFinishReason: 'stop_sequence',
          stopSequence: '###',
          usage: { inputTokens: 290, outputTokens: 30, cachedInputTokens: 40, cacheCreationInputTokens: 200 },
        },
      ]);
      const assembled = await assembleResponse(streamOf(parts));
      assert.deepEqual(assembled.content.slice(0, 2), [
        { type: 'reasoning', text: 'I should search.', signature: 'EqQBsig' },
        { type: 'reasoning', text: '', redactedData: 'EmwKAhgBEgy3va' },
      ]);
    });

    it('ends with a thrown error (not a silent end) on a mid-stream error event, after the parts already produced', async () => {
      const events = textThenToolEvents().slice(0, 4);
      events.push({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
      anthropic.fake.script({ kind: 'sse', events });
      const seen: StreamPart[] = [];
      await assert.rejects(
        (async () => {
          for await (const part of anthropic.provider.stream(modelRequest(), 'claude', {})) seen.push(part);
        })(),
        (err: unknown) =>
          err instanceof GatewayError &&
          err.code === 'upstream_error' &&
          err.type === 'server_error' &&
          /overloaded_error/.test(err.message) &&
          /Overloaded/.test(err.message),
      );
      assert.equal(streamedText(seen), 'Okay, let me ');
      assert.equal(
        seen.some((p) => p.type === 'finish'),
        false,
      );
    });

    it('aborting the call (client gone) closes the upstream connection mid-stream', async () => {
      anthropic.fake.script({ kind: 'hang', events: textThenToolEvents().slice(0, 4) });
      const controller = new AbortController();
      const gone = anthropic.fake.clientGone();
      const seen: StreamPart[] = [];
      await assert.rejects(async () => {
        for await (const part of anthropic.provider.stream(modelRequest(), 'claude', { signal: controller.signal })) {
          seen.push(part);
          if (streamedText(seen) !== '') controller.abort();
        }
      });
      await gone;
      assert.equal(streamedText(seen), 'Okay, let me ');
    });

    it('ends with an upstream_error when the upstream cuts the connection mid-stream', async () => {
      anthropic.fake.script({ kind: 'sse', events: textThenToolEvents().slice(0, 6), endAbruptly: true });
      await assert.rejects(
        collect(anthropic.provider.stream(modelRequest(), 'claude', {})),
        (err: unknown) => err instanceof GatewayError && err.code === 'upstream_error',
      );
    });

    it('ends with an upstream_error when the stream ends cleanly but before message_stop, even after message_delta (no finish part)', async () => {
      anthropic.fake.script({ kind: 'sse', events: textThenToolEvents().slice(0, 13) });
      const seen: StreamPart[] = [];
      await assert.rejects(
        (async () => {
          for await (const part of anthropic.provider.stream(modelRequest(), 'claude', {})) seen.push(part);
        })(),
        (err: unknown) => err instanceof GatewayError && err.code === 'upstream_error' && /ended before the message was complete/.test(err.message),
      );
      assert.equal(seen.at(-1)?.type, 'tool-call-end');
    });
  });

  describe('response format (rule 4: raw JSON text, no code fence)', () => {
    it('json_object forces a JSON tool with an object schema; the reply is the raw JSON of its input', async () => {
      anthropic.fake.script({
        kind: 'json',
        body: textMessage('', {
          content: [
            { type: 'text', text: 'Here it is:' },
            { type: 'tool_use', id: 'toolu_j', name: 'json_response', input: { city: 'Paris', temp: 21 } },
          ],
          stop_reason: 'tool_use',
        }),
      });
      const response = await anthropic.provider.generate(modelRequest({ options: { responseFormat: { type: 'json_object' } } }), 'claude', {});
      const body = anthropic.fake.requests[0]?.body ?? {};
      assert.deepEqual(body['tool_choice'], { type: 'tool', name: 'json_response' });
      assert.deepEqual((body['tools'] as { input_schema: unknown }[])[0]?.input_schema, { type: 'object' });
      assert.equal(body['response_format'], undefined);
      assert.deepEqual(response.content, [{ type: 'text', text: '{"city":"Paris","temp":21}' }]);
      assert.equal(response.finishReason, 'stop');
      assert.equal(response.rawFinishReason, 'end_turn');
    });

    it('json_schema sends the schema as the tool input_schema, streaming the input fragments as text', async () => {
      const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
      anthropic.fake.script({ kind: 'sse', events: jsonToolEvents('answer_schema', ['{"ans', 'wer": "4', '2"}']), chunkBytes: 4 });
      const parts = await collect(
        anthropic.provider.stream(
          modelRequest({ options: { responseFormat: { type: 'json_schema', name: 'answer_schema', schema, strict: true } } }),
          'claude',
          {},
        ),
      );
      const body = anthropic.fake.requests[0]?.body ?? {};
      assert.deepEqual(body['tool_choice'], { type: 'tool', name: 'answer_schema' });
      assert.deepEqual((body['tools'] as { input_schema: unknown }[])[0]?.input_schema, schema);
      assert.deepEqual(parts.slice(1), [
        { type: 'text-start', id: 'b0' },
        { type: 'text-delta', id: 'b0', delta: '{"ans' },
        { type: 'text-delta', id: 'b0', delta: 'wer": "4' },
        { type: 'text-delta', id: 'b0', delta: '2"}' },
        { type: 'text-end', id: 'b0' },
        { type: 'finish', finishReason: 'stop', rawFinishReason: 'end_turn', stopSequence: null, usage: { inputTokens: 30, outputTokens: 20 } },
      ]);
      assert.doesNotMatch(streamedText(parts), /```/);
    });

    it('json_schema with a non-object top level is wrapped upstream and unwrapped for the caller', async () => {
      const schema = { type: 'array', items: { type: 'integer' } };
      anthropic.fake.script({ kind: 'sse', events: jsonToolEvents('json_response', ['{"value": [1,', ' 2, 3]}']) });
      const parts = await collect(
        anthropic.provider.stream(modelRequest({ options: { responseFormat: { type: 'json_schema', name: '', schema } } }), 'claude', {}),
      );
      const tool = (anthropic.fake.requests[0]?.body['tools'] as { input_schema: unknown }[])[0];
      assert.deepEqual(tool?.input_schema, { type: 'object', properties: { value: schema }, required: ['value'] });
      assert.equal(streamedText(parts), '[1,2,3]');
      assert.deepEqual(
        parts.filter((p) => p.type === 'text-start' || p.type === 'text-end').map((p) => p.type),
        ['text-start', 'text-end'],
      );
    });

    it('rule 5: json_object with tools, with a tool choice or with thinking is not forced (tools stay usable)', async () => {
      anthropic.fake.script(...[1, 2, 3].map(() => ({ kind: 'json' as const, body: textMessage('{"a":1}') })));
      await anthropic.provider.generate(modelRequest({ tools: [weatherTool], options: { responseFormat: { type: 'json_object' } } }), 'claude', {});
      await anthropic.provider.generate(
        modelRequest({ options: { reasoning: { budgetTokens: 1024 }, responseFormat: { type: 'json_object' } } }),
        'claude',
        {},
      );
      const response = await anthropic.provider.generate(
        modelRequest({ options: { reasoning: { effort: 'low' }, responseFormat: { type: 'json_object' } } }),
        'claude',
        {},
      );
      const [withTools, withBudget, withEffort] = anthropic.fake.requests;
      assert.equal(withTools?.body['tool_choice'], undefined);
      assert.deepEqual(
        (withTools?.body['tools'] as { name: string }[]).map((t) => t.name),
        ['get_weather'],
      );
      assert.equal(withBudget?.body['tools'], undefined);
      assert.deepEqual(withBudget?.body['thinking'], { type: 'enabled', budget_tokens: 1024 });
      assert.equal(withEffort?.body['tools'], undefined);
      assert.deepEqual(response.content, [{ type: 'text', text: '{"a":1}' }]);
    });

    it('json_schema with thinking offers the JSON tool without forcing it; the reply is its input alone', async () => {
      anthropic.fake.script({
        kind: 'json',
        body: textMessage('', {
          content: [
            { type: 'thinking', thinking: 'Compute.', signature: 'sig' },
            { type: 'text', text: 'Sure:' },
            { type: 'tool_use', id: 't', name: 'out', input: { n: 4 } },
          ],
          stop_reason: 'tool_use',
        }),
      });
      const response = await anthropic.provider.generate(
        modelRequest({ options: { reasoning: { effort: 'minimal' }, responseFormat: { type: 'json_schema', name: 'out', schema: { type: 'object' } } } }),
        'claude',
        {},
      );
      const body = anthropic.fake.requests[0]?.body ?? {};
      assert.equal(body['tool_choice'], undefined);
      assert.deepEqual(
        (body['tools'] as { name: string }[]).map((t) => t.name),
        ['out'],
      );
      assert.deepEqual(response.content, [
        { type: 'reasoning', text: 'Compute.', signature: 'sig' },
        { type: 'text', text: '{"n":4}' },
      ]);
      assert.equal(response.finishReason, 'stop');
    });

    it("json_schema alongside the caller's tools lets the model pick a tool or the JSON tool (tool_choice any); a forced tool of the caller's wins", async () => {
      anthropic.fake.script(
        {
          kind: 'json',
          body: textMessage('', { content: [{ type: 'tool_use', id: 't', name: 'get_weather', input: { location: 'Rome' } }], stop_reason: 'tool_use' }),
        },
        { kind: 'json', body: textMessage('ok') },
      );
      const responseFormat = { type: 'json_schema' as const, name: 'get_weather', schema: { type: 'object' } };
      const response = await anthropic.provider.generate(modelRequest({ tools: [weatherTool], options: { responseFormat } }), 'claude', {});
      const body = anthropic.fake.requests[0]?.body ?? {};
      assert.deepEqual(body['tool_choice'], { type: 'any' });
      assert.deepEqual(
        (body['tools'] as { name: string }[]).map((t) => t.name),
        ['get_weather', 'get_weather_'],
        'the JSON tool never takes a name of the caller’s tools',
      );
      assert.equal(response.finishReason, 'tool_calls');
      assert.deepEqual(response.content, [{ type: 'tool-call', id: 't', name: 'get_weather', arguments: '{"location":"Rome"}' }]);

      await anthropic.provider.generate(
        modelRequest({ tools: [weatherTool], toolChoice: { kind: 'tool', name: 'get_weather' }, options: { responseFormat } }),
        'claude',
        {},
      );
      assert.deepEqual(anthropic.fake.requests[1]?.body['tool_choice'], { type: 'tool', name: 'get_weather' });
    });
  });
});
