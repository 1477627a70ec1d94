// The anthropic provider's chat()/chatStream() against a fake Anthropic Messages API: every translation
// asserted on both sides (the body the upstream received, the completion or chunks the caller got). The
// canonical interface and the pass-through: anthropic-canonical-request/-reply.test.ts.
import assert from 'node:assert/strict';
import type { ProviderConfig } from '../../src/config/types';
import { GatewayError } from '../../src/http/errors';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider';
import type { AnthropicFamilyProvider } from '../../src/providers/anthropic/anthropic-family-provider';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../src/providers/types';
import { jsonToolEvents, reassemble, textMessage, textThenToolEvents } from '../fixtures/upstreams/anthropic-events';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from '../fixtures/upstreams/anthropic-upstream';

async function collect(source: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const chunk of source) out.push(chunk);
  return out;
}

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

describe('providers/anthropic', () => {
  let upstream: FakeAnthropic;
  let provider: AnthropicFamilyProvider;

  before(async () => {
    upstream = await startFakeAnthropic();
    const config: ProviderConfig = { type: 'anthropic', baseUrl: upstream.baseUrl, apiKey: FAKE_ANTHROPIC_KEY, retries: { max: 0 } };
    provider = createAnthropicProvider('claude', config);
  });
  after(async () => {
    await provider.close();
    await upstream.close();
  });
  beforeEach(() => upstream.requests.splice(0));

  describe('request translation (seen upstream)', () => {
    it('maps system/developer, multimodal content, tool calls, merged tool results and sampling fields; headers and model set', async () => {
      upstream.script({ kind: 'json', body: textMessage('ok') });
      const request: ChatCompletionRequest = {
        model: 'claude-gw',
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Weather here and there?' },
              { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/AAAA' } },
              { type: 'image_url', image_url: { url: 'https://example.com/map.png', detail: 'high' } },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'toolu_a', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
              { id: 'toolu_b', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Oslo"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'toolu_a', content: '21C' },
          { role: 'tool', tool_call_id: 'toolu_b', content: [{ type: 'text', text: '-3C' }] },
        ],
        tools: [weatherTool],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        parallel_tool_calls: false,
        stop: 'STOP',
        temperature: 0.3,
        top_p: 0.8,
        user: 'user-42',
        frequency_penalty: 0.5, // no Anthropic equivalent: not sent (Anthropic rejects unknown fields)
      };
      const frozen = structuredClone(request);
      await provider.chat(request, 'claude-sonnet-4-20250514', {});
      assert.deepEqual(request, frozen, 'the canonical request is not mutated (retries resend it)');

      const seen = upstream.requests[0];
      assert.ok(seen);
      assert.equal(seen.path, '/v1/messages');
      assert.equal(seen.headers['x-api-key'], FAKE_ANTHROPIC_KEY);
      assert.equal(seen.headers['anthropic-version'], '2023-06-01');
      assert.deepEqual(seen.body, {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Weather here and there?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/AAAA' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/map.png' } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { location: 'Paris' } },
              { type: 'tool_use', id: 'toolu_b', name: 'get_weather', input: { location: 'Oslo' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_a', content: '21C' },
              { type: 'tool_result', tool_use_id: 'toolu_b', content: [{ type: 'text', text: '-3C' }] },
            ],
          },
        ],
        max_tokens: 4096,
        system: 'You are terse.\n\nUse metric units.',
        stop_sequences: ['STOP'],
        temperature: 0.3,
        top_p: 0.8,
        metadata: { user_id: 'user-42' },
        tools: [
          {
            name: 'get_weather',
            input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
            description: 'Current weather',
          },
        ],
        tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
        model: 'claude-sonnet-4-20250514',
      });
    });

    it('maps max_completion_tokens, stop arrays and the string tool_choice values', async () => {
      const base: ChatCompletionRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [weatherTool] };
      const cases: [Record<string, unknown>, Record<string, unknown>][] = [
        [
          { tool_choice: 'auto', max_completion_tokens: 77, stop: ['a', 'b'] },
          { tool_choice: { type: 'auto' }, max_tokens: 77, stop_sequences: ['a', 'b'] },
        ],
        [
          { tool_choice: 'none', max_tokens: 12 },
          { tool_choice: { type: 'none' }, max_tokens: 12 },
        ],
        [{ tool_choice: 'required' }, { tool_choice: { type: 'any' }, max_tokens: 4096 }],
      ];
      for (const [extra, expected] of cases) {
        upstream.script({ kind: 'json', body: textMessage('ok') });
        await provider.chat({ ...base, ...extra }, 'claude', {});
        const body = upstream.requests.at(-1)?.body ?? {};
        for (const [key, value] of Object.entries(expected)) assert.deepEqual(body[key], value, key);
      }
    });

    it('refuses tool-call arguments that are not a JSON object with a 400 naming the field (nothing sent)', async () => {
      await assert.rejects(
        provider.chat(
          {
            model: 'm',
            messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: 'not json' } }] }],
          },
          'claude',
          {},
        ),
        (err: unknown) => err instanceof GatewayError && err.status === 400 && err.param === 'messages[0].tool_calls[0].function.arguments',
      );
      assert.equal(upstream.requests.length, 0);
    });
  });

  describe('replies', () => {
    it('maps text, tool calls (JSON-string arguments), finish reason and usage', async () => {
      upstream.script({
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
      const completion = await provider.chat({ model: 'claude-gw', messages: [{ role: 'user', content: 'hi' }], tools: [weatherTool] }, 'claude', {});
      assert.equal(completion.object, 'chat.completion');
      assert.equal(completion.model, 'claude-gw');
      assert.deepEqual(completion.choices[0]?.message.tool_calls, [
        { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
        { id: 'toolu_2', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Oslo"}' } },
      ]);
      assert.equal(completion.choices[0]?.message.content, 'Checking both.');
      assert.equal(completion.choices[0]?.finish_reason, 'tool_calls');
      assert.deepEqual(completion.usage, { prompt_tokens: 125, completion_tokens: 40, total_tokens: 165, prompt_tokens_details: { cached_tokens: 20 } });
    });

    it('maps every stop reason', async () => {
      const expected: Record<string, string> = { end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', refusal: 'content_filter' };
      for (const [stopReason, finish] of Object.entries(expected)) {
        upstream.script({ kind: 'json', body: textMessage('x', { stop_reason: stopReason }) });
        const completion = await provider.chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, 'claude', {});
        assert.equal(completion.choices[0]?.finish_reason, finish, stopReason);
        assert.equal(completion.choices[0]?.message.content, 'x');
        assert.deepEqual(completion.usage, { prompt_tokens: 25, completion_tokens: 7, total_tokens: 32 });
      }
    });
  });

  describe('streams', () => {
    it('translates events split across TCP writes: role first, text, tool call id/name then fragments, finish, usage', async () => {
      upstream.script({ kind: 'sse', events: textThenToolEvents(), chunkBytes: 5 });
      const chunks = await collect(
        provider.chatStream(
          { model: 'claude-gw', messages: [{ role: 'user', content: 'weather?' }], tools: [weatherTool], stream_options: { include_usage: true } },
          'claude',
          {},
        ),
      );
      assert.equal(upstream.requests[0]?.body['stream_options'], undefined);
      assert.equal(upstream.requests[0]?.body['stream'], true);
      assert.equal(upstream.requests[0]?.headers['accept'], 'text/event-stream');
      const result = reassemble(chunks);
      assert.deepEqual(result.firstDelta, { role: 'assistant', content: '' });
      assert.equal(result.content, 'Okay, let me check.');
      assert.deepEqual(result.toolCalls, [{ id: 'toolu_01Weather', name: 'get_weather', arguments: '{"location": "San Francisco, CA"}' }]);
      assert.equal(result.finish, 'tool_calls');
      assert.deepEqual(result.usage, { prompt_tokens: 482, completion_tokens: 89, total_tokens: 571, prompt_tokens_details: { cached_tokens: 10 } });
      // The tool call's first delta names it; later ones carry only argument fragments.
      const toolChunks = chunks.filter((c) => c.choices[0]?.delta.tool_calls);
      assert.deepEqual(toolChunks[0]?.choices[0]?.delta.tool_calls, [
        { index: 0, id: 'toolu_01Weather', type: 'function', function: { name: 'get_weather', arguments: '' } },
      ]);
      assert.equal(toolChunks.length, 4);
      // include_usage: the usage chunk is last, with no choices (OpenAI's shape).
      assert.deepEqual(chunks.at(-1)?.choices, []);
      assert.equal(chunks.at(-2)?.choices[0]?.finish_reason, 'tool_calls');
      assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === 'msg_01Stream' && c.model === 'claude-gw'));
    });

    it('without include_usage, every chunk has a choice and the usage rides on the finish chunk', async () => {
      upstream.script({ kind: 'sse', events: textThenToolEvents(), chunkBytes: 64 });
      const chunks = await collect(provider.chatStream({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, 'claude', {}));
      assert.ok(chunks.every((c) => c.choices.length === 1));
      const last = chunks.at(-1);
      assert.equal(last?.choices[0]?.finish_reason, 'tool_calls');
      assert.deepEqual(last?.usage, { prompt_tokens: 482, completion_tokens: 89, total_tokens: 571, prompt_tokens_details: { cached_tokens: 10 } });
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
      upstream.script({ kind: 'sse', events, chunkBytes: 3 });
      const result = reassemble(await collect(provider.chatStream({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, 'claude', {})));
      assert.deepEqual(result.toolCalls, [
        { id: 'toolu_01Weather', name: 'get_weather', arguments: '{"location":"Lyon"}' },
        { id: 'toolu_second', name: 'get_time', arguments: '{"tz":"CET"}' },
      ]);
    });

    it('ends with an error (not a silent end) on a mid-stream error event, after the chunks already produced', async () => {
      const events = textThenToolEvents().slice(0, 4);
      events.push({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
      upstream.script({ kind: 'sse', events });
      const seen: ChatCompletionChunk[] = [];
      await assert.rejects(
        (async () => {
          for await (const chunk of provider.chatStream({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, 'claude', {})) seen.push(chunk);
        })(),
        (err: unknown) => err instanceof GatewayError && /overloaded_error/.test(err.message) && /Overloaded/.test(err.message),
      );
      assert.equal(reassemble(seen).content, 'Okay, let me ');
    });

    it('aborting the call (client gone) closes the upstream connection mid-stream', async () => {
      upstream.script({ kind: 'hang', events: textThenToolEvents().slice(0, 4) });
      const controller = new AbortController();
      const gone = upstream.clientGone();
      const seen: ChatCompletionChunk[] = [];
      await assert.rejects(async () => {
        for await (const chunk of provider.chatStream({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, 'claude', { signal: controller.signal })) {
          seen.push(chunk);
          if (reassemble(seen).content !== '') controller.abort();
        }
      });
      await gone;
      assert.equal(reassemble(seen).content, 'Okay, let me ');
    });

    it('ends with an error when the upstream cuts the stream before the message is complete', async () => {
      upstream.script({ kind: 'sse', events: textThenToolEvents().slice(0, 6), endAbruptly: true });
      await assert.rejects(
        collect(provider.chatStream({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, 'claude', {})),
        (err: unknown) => err instanceof GatewayError && err.code !== 'internal',
      );
    });
  });

  describe('response_format (rule 4: raw JSON content, no code fence)', () => {
    it('json_object forces a JSON tool with an object schema; the content is the raw JSON of its input', async () => {
      upstream.script({
        kind: 'json',
        body: textMessage('', {
          content: [{ type: 'tool_use', id: 'toolu_j', name: 'json_response', input: { city: 'Paris', temp: 21 } }],
          stop_reason: 'tool_use',
        }),
      });
      const completion = await provider.chat(
        { model: 'm', messages: [{ role: 'user', content: 'as JSON' }], response_format: { type: 'json_object' } },
        'claude',
        {},
      );
      const body = upstream.requests[0]?.body ?? {};
      assert.deepEqual(body['tool_choice'], { type: 'tool', name: 'json_response' });
      assert.deepEqual((body['tools'] as { input_schema: unknown }[])[0]?.input_schema, { type: 'object' });
      assert.equal(body['response_format'], undefined);
      assert.equal(completion.choices[0]?.message.content, '{"city":"Paris","temp":21}');
      assert.equal(completion.choices[0]?.message.tool_calls, undefined);
      assert.equal(completion.choices[0]?.finish_reason, 'stop');
    });

    it('json_schema sends the schema as the tool input_schema, streaming the input fragments as content', async () => {
      const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
      upstream.script({ kind: 'sse', events: jsonToolEvents('answer_schema', ['{"ans', 'wer": "4', '2"}']), chunkBytes: 4 });
      const chunks = await collect(
        provider.chatStream(
          {
            model: 'm',
            messages: [{ role: 'user', content: 'q' }],
            response_format: { type: 'json_schema', json_schema: { name: 'answer_schema', schema, strict: true } },
          },
          'claude',
          {},
        ),
      );
      const body = upstream.requests[0]?.body ?? {};
      assert.deepEqual(body['tool_choice'], { type: 'tool', name: 'answer_schema' });
      assert.deepEqual((body['tools'] as { input_schema: unknown }[])[0]?.input_schema, schema);
      const result = reassemble(chunks);
      assert.equal(result.content, '{"answer": "42"}');
      assert.doesNotMatch(result.content, /```/);
      assert.deepEqual(result.toolCalls, []);
      assert.equal(result.finish, 'stop');
    });

    it('json_schema with a non-object top level is wrapped upstream and unwrapped for the caller', async () => {
      const schema = { type: 'array', items: { type: 'integer' } };
      upstream.script({ kind: 'sse', events: jsonToolEvents('json_response', ['{"value": [1,', ' 2, 3]}']) });
      const result = reassemble(
        await collect(
          provider.chatStream(
            { model: 'm', messages: [{ role: 'user', content: 'q' }], response_format: { type: 'json_schema', json_schema: { schema } } },
            'claude',
            {},
          ),
        ),
      );
      const tool = (upstream.requests[0]?.body['tools'] as { input_schema: unknown }[])[0];
      assert.deepEqual(tool?.input_schema, { type: 'object', properties: { value: schema }, required: ['value'] });
      assert.equal(result.content, '[1,2,3]');
    });

    it('rule 5: json_object with tools or with thinking is not forced (tools stay usable)', async () => {
      upstream.script({ kind: 'json', body: textMessage('{"a":1}') }, { kind: 'json', body: textMessage('{"a":1}') });
      await provider.chat(
        { model: 'm', messages: [{ role: 'user', content: 'q' }], tools: [weatherTool], response_format: { type: 'json_object' } },
        'claude',
        {},
      );
      await provider.chat(
        {
          model: 'm',
          messages: [{ role: 'user', content: 'q' }],
          thinking: { type: 'enabled', budget_tokens: 1024 },
          response_format: { type: 'json_object' },
        },
        'claude',
        {},
      );
      const [withTools, withThinking] = upstream.requests;
      assert.equal(withTools?.body['tool_choice'], undefined);
      assert.deepEqual(
        (withTools?.body['tools'] as { name: string }[]).map((t) => t.name),
        ['get_weather'],
      );
      assert.equal(withThinking?.body['tools'], undefined);
      assert.deepEqual(withThinking?.body['thinking'], { type: 'enabled', budget_tokens: 1024 });
    });

    it("json_schema alongside the caller's tools lets the model pick a tool or the JSON tool (tool_choice any)", async () => {
      upstream.script({
        kind: 'json',
        body: textMessage('', { content: [{ type: 'tool_use', id: 't', name: 'get_weather', input: { location: 'Rome' } }], stop_reason: 'tool_use' }),
      });
      const completion = await provider.chat(
        {
          model: 'm',
          messages: [{ role: 'user', content: 'q' }],
          tools: [weatherTool],
          response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' } } },
        },
        'claude',
        {},
      );
      const body = upstream.requests[0]?.body ?? {};
      assert.deepEqual(body['tool_choice'], { type: 'any' });
      assert.deepEqual(
        (body['tools'] as { name: string }[]).map((t) => t.name),
        ['get_weather', 'out'],
      );
      assert.equal(completion.choices[0]?.finish_reason, 'tool_calls');
      assert.equal(completion.choices[0]?.message.tool_calls?.[0]?.function.name, 'get_weather');
    });
  });

  describe('errors', () => {
    it("passes the upstream status with Anthropic's error type and message", async () => {
      upstream.script({
        kind: 'error',
        status: 400,
        body: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: must be at most 8192' } },
      });
      await assert.rejects(provider.chat({ model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 99999 }, 'claude', {}), (err: unknown) => {
        assert.ok(err instanceof GatewayError);
        assert.equal(err.status, 400);
        assert.equal(err.type, 'invalid_request_error');
        assert.match(err.message, /HTTP 400 \(invalid_request_error\): max_tokens: must be at most 8192/);
        return true;
      });
    });

    it('reports a rejected key as the upstream 401 with its message, and a 429 with Retry-After', async () => {
      const bad = createAnthropicProvider('claude-bad', {
        type: 'anthropic',
        baseUrl: upstream.baseUrl,
        apiKey: 'wrong',
        retries: { max: 0 },
      });
      try {
        await assert.rejects(bad.chat({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, 'claude', {}), (err: unknown) => {
          return err instanceof GatewayError && err.status === 401 && /invalid x-api-key/.test(err.message) && err.type === 'authentication_error';
        });
      } finally {
        await bad.close();
      }
      upstream.script({
        kind: 'error',
        status: 429,
        headers: { 'retry-after': '30' },
        body: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' } },
      });
      await assert.rejects(provider.chat({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, 'claude', {}), (err: unknown) => {
        return err instanceof GatewayError && err.status === 429 && err.headers['retry-after'] === '30' && err.type === 'rate_limit_error';
      });
    });
  });
});
