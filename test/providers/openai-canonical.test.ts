// The openai provider on the canonical model: generate()/stream() against a fake OpenAI-format
// upstream (real HTTP, real chat-completions wire). Request side: each mapping asserted on the body
// the upstream received; reply side: JSON replies and SSE streams (reasoning fields of vLLM, Ollama
// and DeepSeek, tool calls by index, usage after the finish chunk) to canonical replies and parts.
import assert from 'node:assert/strict';
import { assembleResponse } from '../../src/canonical/assemble';
import type { Message, ModelRequest, StreamPart } from '../../src/canonical/model';
import { GatewayError } from '../../src/http/errors';
import { OpenAiProvider } from '../../src/providers/openai/openai-provider';
import { chatStreamEvents, startFakeOpenAiUpstream, type FakeOpenAiUpstream } from '../fixtures/upstreams/openai-upstream';
import { rejection } from '../helpers/rejection';
import { collect, streamOf } from '../helpers/async-iterables';
import { user } from '../helpers/canonical';

const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

function request(messages: Message[], rest: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'alias', messages, tools: [], options: {}, ...rest };
}

const hi = (): Message[] => [user('hi')];

const chunk = (fields: Record<string, unknown>): string =>
  `data: ${JSON.stringify({ id: 'chatcmpl-s1', object: 'chat.completion.chunk', created: 1_700_000_123, model: 'served-model', ...fields })}\n\n`;
const delta = (value: Record<string, unknown>, finish: string | null = null): string => chunk({ choices: [{ index: 0, delta: value, finish_reason: finish }] });

describe('openai provider: canonical generate()/stream()', () => {
  let upstream: FakeOpenAiUpstream;
  let provider: OpenAiProvider;

  beforeEach(async () => {
    upstream = await startFakeOpenAiUpstream();
    provider = new OpenAiProvider('oai', {
      type: 'openai',
      baseUrl: `${upstream.baseUrl}?api-version=2024-10-21`,
      apiKey: 'sk-upstream',
      headers: { 'api-key': 'azure-key', 'OpenAI-Organization': 'org-1' },
      retries: { max: 1, baseDelayMs: 5 },
    });
  });
  afterEach(async () => {
    await provider.close();
    await upstream.close();
  });

  /** Calls generate() and returns the body the upstream received. */
  async function sent(req: ModelRequest): Promise<Record<string, unknown>> {
    const before = upstream.requests.length;
    await provider.generate(req, 'gpt-real', {});
    return upstream.requests[before]!.json();
  }

  describe('the provider', () => {
    it('declares the chat format for extras and every option but topK as honoured', () => {
      assert.equal(provider.extrasOf, 'chat');
      assert.ok(provider.honours.has('maxOutputTokens') && provider.honours.has('promptCacheKey') && provider.honours.has('reasoning'));
      for (const name of ['topK', 'n', 'logprobs', 'topLogprobs'] as const) assert.equal(provider.honours.has(name), false, name);
    });

    it('forwards Responses to /responses only when the upstream is configured `responses: native`', async () => {
      assert.deepEqual(provider.forwards, ['chat', 'completions'], 'translate is the default');
      const native = new OpenAiProvider('oai-native', { type: 'openai', baseUrl: upstream.baseUrl, apiKey: 'sk-n', responses: 'native', retries: { max: 0 } });
      try {
        assert.ok(native.forwards.includes('responses'));
        upstream.script({ kind: 'json', body: { id: 'resp_1', object: 'response', status: 'completed', output: [] } });
        const reply = await native.forward('responses', JSON.stringify({ model: 'gpt-real', input: 'hi' }), { stream: false });
        assert.deepEqual(await reply.json(), { id: 'resp_1', object: 'response', status: 'completed', output: [] });
        const seen = upstream.requests.at(-1)!;
        assert.equal(seen.path, '/v1/responses');
        assert.equal(seen.headers['authorization'], 'Bearer sk-n');
        assert.deepEqual(seen.json(), { model: 'gpt-real', input: 'hi' });
      } finally {
        await native.close();
      }
    });
  });

  describe('generate(): the request', () => {
    it('sends the upstream model, key and extra headers, keeps the base URL query, merges chat extras and never asks for a stream', async () => {
      const response = await provider.generate(
        request(hi(), { extra: { format: 'chat', fields: { x_extra: 1, stream: true, model: 'not-this' } } }),
        'gpt-real',
        {},
      );
      assert.deepEqual(response.content, [{ type: 'text', text: 'Hello from upstream' }]);
      const seen = upstream.requests[0]!;
      assert.equal(seen.path, '/v1/chat/completions?api-version=2024-10-21');
      assert.equal(seen.headers['authorization'], 'Bearer sk-upstream');
      assert.equal(seen.headers['api-key'], 'azure-key');
      assert.equal(seen.headers['openai-organization'], 'org-1');
      assert.deepEqual(seen.json(), { x_extra: 1, model: 'gpt-real', messages: [{ role: 'user', content: 'hi' }] });
    });

    it('drops extras of another wire format', async () => {
      const body = await sent(request(hi(), { extra: { format: 'messages', fields: { top_k: 3, metadata: { user_id: 'u' } } } }));
      assert.deepEqual(body, { model: 'gpt-real', messages: [{ role: 'user', content: 'hi' }] });
    });

    it('maps system/developer messages, user parts, assistant text and tool calls, and tool results', async () => {
      const body = await sent(
        request([
          { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
          {
            role: 'system',
            developer: true,
            content: [
              { type: 'text', text: 'Answer ' },
              { type: 'text', text: 'in French.' },
            ],
          },
          {
            role: 'user',
            name: 'alice',
            content: [
              { type: 'text', text: 'Compare' },
              { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG_BASE64 }, detail: 'low' },
              { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.webp' } },
              { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' }, filename: 'a.pdf' },
              { type: 'file', source: { kind: 'file-id', fileId: 'file-abc' } },
              { type: 'document', source: { kind: 'text', mediaType: 'text/plain', data: 'Plain notes.' }, title: 'Notes' },
              { type: 'document', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi1=' }, title: 'report.pdf' },
              { type: 'native', format: 'chat', value: { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'They want weather.' },
              { type: 'text', text: 'Let me ' },
              { type: 'text', text: 'check.' },
              { type: 'tool-call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
              { type: 'tool-call', id: 'call_2', name: 'get_time', arguments: '{}' },
            ],
          },
          {
            role: 'tool',
            content: [
              { type: 'tool-result', callId: 'call_1', output: 'sunny' },
              {
                type: 'tool-result',
                callId: 'call_2',
                output: [
                  { type: 'text', text: 'noon' },
                  { type: 'image', source: { kind: 'url', url: 'https://example.com/clock.png' } },
                ],
                isError: false,
              },
            ],
          },
          { role: 'assistant', content: [{ type: 'tool-call', id: 'call_3', name: 'f', arguments: '{}' }] },
        ]),
      );
      assert.deepEqual(body['messages'], [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'developer',
          content: [
            { type: 'text', text: 'Answer ' },
            { type: 'text', text: 'in French.' },
          ],
        },
        {
          role: 'user',
          name: 'alice',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}`, detail: 'low' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.webp' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
            { type: 'file', file: { file_id: 'file-abc' } },
            { type: 'text', text: 'Plain notes.' },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi1=', filename: 'report.pdf' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          ],
        },
        // Reasoning is model output: chat completions has no field to send it back in.
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        {
          role: 'tool',
          tool_call_id: 'call_2',
          content: [
            { type: 'text', text: 'noon' },
            { type: 'image_url', image_url: { url: 'https://example.com/clock.png' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      ]);
    });

    it('leaves out an assistant turn that holds only reasoning (chat refuses an empty assistant message)', async () => {
      const body = await sent(request([...hi(), { role: 'assistant', content: [{ type: 'reasoning', text: 'hmm', signature: 's' }] }, ...hi()]));
      assert.deepEqual(body['messages'], [
        { role: 'user', content: 'hi' },
        { role: 'user', content: 'hi' },
      ]);
    });

    it('sends a native chat part of an assistant message as a content part beside its text', async () => {
      const body = await sent(
        request([
          ...hi(),
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'No.' },
              { type: 'native', format: 'chat', value: { type: 'refusal', refusal: 'I cannot help with that.' } },
            ],
          },
        ]),
      );
      assert.deepEqual((body['messages'] as unknown[])[1], {
        role: 'assistant',
        content: [
          { type: 'text', text: 'No.' },
          { type: 'refusal', refusal: 'I cannot help with that.' },
        ],
      });
    });

    it('maps function tools (strict included), passes native chat tools verbatim, and maps every tool choice form', async () => {
      const tools: ModelRequest['tools'] = [
        {
          kind: 'function',
          name: 'get_weather',
          description: 'Weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: true,
        },
        { kind: 'function', name: 'now' },
        { kind: 'native', format: 'chat', type: 'custom', definition: { type: 'custom', custom: { name: 'grammar_tool' } } },
      ];
      const body = await sent(request(hi(), { tools, toolChoice: { kind: 'auto' } }));
      assert.deepEqual(body['tools'], [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true },
        },
        { type: 'function', function: { name: 'now' } },
        { type: 'custom', custom: { name: 'grammar_tool' } },
      ]);
      assert.equal(body['tool_choice'], 'auto');
      assert.equal((await sent(request(hi(), { tools, toolChoice: { kind: 'none' } })))['tool_choice'], 'none');
      assert.equal((await sent(request(hi(), { tools, toolChoice: { kind: 'required' } })))['tool_choice'], 'required');
      assert.deepEqual((await sent(request(hi(), { tools, toolChoice: { kind: 'tool', name: 'now' } })))['tool_choice'], {
        type: 'function',
        function: { name: 'now' },
      });
      assert.deepEqual(
        (await sent(request(hi(), { tools, toolChoice: { kind: 'allowed', mode: 'required', names: ['get_weather', 'now'] } })))['tool_choice'],
        {
          type: 'allowed_tools',
          allowed_tools: {
            mode: 'required',
            tools: [
              { type: 'function', function: { name: 'get_weather' } },
              { type: 'function', function: { name: 'now' } },
            ],
          },
        },
      );
      const plain = await sent(request(hi()));
      assert.equal('tools' in plain || 'tool_choice' in plain, false, 'no tools, no tool fields');
    });

    it('maps every generation option to its chat-completions field', async () => {
      const body = await sent(
        request(hi(), {
          options: {
            maxOutputTokens: 256,
            temperature: 0.3,
            topP: 0.9,
            stop: ['END'],
            seed: 7,
            presencePenalty: 0.5,
            frequencyPenalty: -0.5,
            n: 2,
            logprobs: true,
            topLogprobs: 3,
            responseFormat: { type: 'json_schema', name: 'verdict', schema: { type: 'object' }, description: 'A verdict', strict: true },
            reasoning: { effort: 'high', summary: 'auto' },
            parallelToolCalls: false,
            user: 'end-user-1',
            verbosity: 'low',
            serviceTier: 'flex',
            promptCacheKey: 'tenant-1',
          },
        }),
      );
      const { model: _model, messages: _messages, ...fields } = body;
      assert.deepEqual(fields, {
        max_completion_tokens: 256,
        temperature: 0.3,
        top_p: 0.9,
        stop: ['END'],
        seed: 7,
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
        n: 2,
        logprobs: true,
        top_logprobs: 3,
        response_format: { type: 'json_schema', json_schema: { name: 'verdict', schema: { type: 'object' }, description: 'A verdict', strict: true } },
        reasoning_effort: 'high',
        parallel_tool_calls: false,
        user: 'end-user-1',
        verbosity: 'low',
        service_tier: 'flex',
        prompt_cache_key: 'tenant-1',
      });
      assert.deepEqual((await sent(request(hi(), { options: { responseFormat: { type: 'json_object' } } })))['response_format'], { type: 'json_object' });
      assert.deepEqual((await sent(request(hi(), { options: { responseFormat: { type: 'text' } } })))['response_format'], { type: 'text' });
    });

    it('turns a reasoning budget without an effort into the nearest effort, and sends nothing for disabled thinking', async () => {
      const effort = async (reasoning: NonNullable<ModelRequest['options']['reasoning']>): Promise<unknown> =>
        (await sent(request(hi(), { options: { reasoning } })))['reasoning_effort'];
      assert.equal(await effort({ budgetTokens: 1024 }), 'low');
      assert.equal(await effort({ budgetTokens: 4000 }), 'medium');
      assert.equal(await effort({ budgetTokens: 20000 }), 'high');
      assert.equal(await effort({ disabled: true }), undefined);
      assert.equal(await effort({ effort: 'minimal', budgetTokens: 20000 }), 'minimal', 'an explicit effort wins');
    });

    it('never modifies the caller request', async () => {
      const req = request(
        [
          { role: 'system', content: [{ type: 'text', text: 'S' }] },
          { role: 'user', content: [{ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG_BASE64 } }] },
          { role: 'assistant', content: [{ type: 'tool-call', id: 'c', name: 'f', arguments: '{"a":1}' }] },
          { role: 'tool', content: [{ type: 'tool-result', callId: 'c', output: 'r' }] },
        ],
        {
          tools: [{ kind: 'function', name: 'f', parameters: { type: 'object' } }],
          options: { stop: ['x'], responseFormat: { type: 'json_schema', name: 'x', schema: { type: 'object' } } },
          extra: { format: 'chat', fields: { stream_options: { include_obfuscation: false } } },
        },
      );
      const copy = structuredClone(req);
      await sent(req);
      await collect(provider.stream(req, 'gpt-real', {}));
      assert.deepEqual(req, copy);
    });

    it('refuses what chat completions cannot carry with a 400 naming it, before calling upstream', async () => {
      const cases: [ModelRequest, string, RegExp, string][] = [
        [
          request([{ role: 'user', content: [{ type: 'native', format: 'messages', value: { type: 'search_result', source: 'x' } }] }]),
          'bad_request',
          /search_result/,
          'messages[0].content[0]',
        ],
        [
          request([...hi(), { role: 'assistant', content: [{ type: 'native', format: 'messages', value: { type: 'server_tool_use' } }] }]),
          'bad_request',
          /server_tool_use/,
          'messages[1].content[0]',
        ],
        [
          request([{ role: 'user', content: [{ type: 'file', source: { kind: 'url', url: 'https://example.com/a.pdf' } }] }]),
          'bad_request',
          /URL/,
          'messages[0].content[0]',
        ],
        [
          request([{ role: 'user', content: [{ type: 'image', source: { kind: 'file-id', fileId: 'file-1' } }] }]),
          'bad_request',
          /file id/,
          'messages[0].content[0]',
        ],
        [request(hi(), { tools: [{ kind: 'hosted', type: 'svc_web_search', config: {} }] }), 'unsupported_tool_type', /svc_web_search/, 'tools[0]'],
        [request(hi(), { tools: [{ kind: 'mcp', serverLabel: 'deepwiki', config: {} }] }), 'unsupported_tool_type', /MCP/, 'tools[0]'],
        [
          request(hi(), { tools: [{ kind: 'native', format: 'responses', type: 'web_search_preview', definition: { type: 'web_search_preview' } }] }),
          'unsupported_tool_type',
          /web_search_preview/,
          'tools[0]',
        ],
      ];
      for (const [req, code, message, param] of cases) {
        const err = await rejection(provider.generate(req, 'gpt-real', {}));
        assert.equal(err.code, code);
        assert.equal(err.status, 400);
        assert.match(err.message, message);
        assert.equal(err.param, param);
        const streamed = await rejection(collect(provider.stream(req, 'gpt-real', {})));
        assert.equal(streamed.code, code);
      }
      assert.equal(upstream.requests.length, 0, 'nothing reached the upstream');
    });
  });

  describe('generate(): the reply', () => {
    it('maps text, the upstream id/model/created, finish reason and usage with cached and reasoning tokens', async () => {
      upstream.script({
        kind: 'json',
        body: {
          id: 'chatcmpl-r1',
          object: 'chat.completion',
          created: 1_700_000_321,
          model: 'gpt-real-2025',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hi!', refusal: null }, finish_reason: 'length' }],
          usage: {
            prompt_tokens: 20,
            completion_tokens: 9,
            total_tokens: 29,
            prompt_tokens_details: { cached_tokens: 16 },
            completion_tokens_details: { reasoning_tokens: 4 },
          },
        },
      });
      const response = await provider.generate(request(hi()), 'gpt-real', {});
      assert.deepEqual(response, {
        id: 'chatcmpl-r1',
        model: 'gpt-real-2025',
        created: 1_700_000_321,
        content: [{ type: 'text', text: 'Hi!' }],
        finishReason: 'length',
        usage: { inputTokens: 20, outputTokens: 9, cachedInputTokens: 16, reasoningTokens: 4 },
      });
    });

    it('reads reasoning from reasoning_content (DeepSeek, vLLM) or reasoning (Ollama, newer vLLM), before the text', async () => {
      for (const field of ['reasoning_content', 'reasoning']) {
        upstream.script({
          kind: 'json',
          body: {
            id: 'r',
            model: 'qwen3',
            created: 1,
            choices: [{ index: 0, message: { role: 'assistant', content: '4', [field]: 'Two plus two is four.' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 3, completion_tokens: 8, total_tokens: 11 },
          },
        });
        const response = await provider.generate(request(hi()), 'qwen3', {});
        assert.deepEqual(response.content, [
          { type: 'reasoning', text: 'Two plus two is four.' },
          { type: 'text', text: '4' },
        ]);
      }
    });

    it('maps tool calls (ids kept, a missing id generated), function_call and content_filter finishes, and a refusal as a refusal text part', async () => {
      upstream.script(
        {
          kind: 'json',
          body: {
            id: 'r',
            model: 'm',
            created: 1,
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content: null,
                  tool_calls: [
                    { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
                    { type: 'function', function: { name: 'get_time', arguments: '{}' } },
                    { id: 'call_c', type: 'custom', custom: { name: 'grammar_tool', input: 'x' } },
                  ],
                },
                finish_reason: 'tool_calls',
              },
            ],
          },
        },
        { kind: 'json', body: { id: 'r', choices: [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'function_call' }] } },
        {
          kind: 'json',
          body: {
            id: 'r',
            choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' }, finish_reason: 'content_filter' }],
          },
        },
      );
      const calls = await provider.generate(request(hi()), 'm', {});
      assert.equal(calls.finishReason, 'tool_calls');
      assert.equal(calls.rawFinishReason, undefined);
      assert.deepEqual(calls.usage, { inputTokens: 0, outputTokens: 0 }, 'a reply without usage counts nothing');
      assert.deepEqual(calls.content[0], { type: 'tool-call', id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' });
      const generated = calls.content[1]!;
      assert.ok(generated.type === 'tool-call' && /^call_[0-9a-f]{24}$/.test(generated.id) && generated.name === 'get_time');
      assert.deepEqual(calls.content[2], {
        type: 'native',
        format: 'chat',
        value: { id: 'call_c', type: 'custom', custom: { name: 'grammar_tool', input: 'x' } },
      });

      const legacy = await provider.generate(request(hi()), 'm', {});
      assert.equal(legacy.finishReason, 'tool_calls');
      assert.equal(legacy.rawFinishReason, 'function_call');
      assert.equal(legacy.model, 'm', 'no model in the reply: the upstream model name');

      const refused = await provider.generate(request(hi()), 'm', {});
      assert.deepEqual(refused.content, [{ type: 'text', text: 'I cannot help with that.', refusal: true }]);
      assert.equal(refused.finishReason, 'content_filter');
    });

    it('fails on a 200 reply carrying an error object, or one without a choice', async () => {
      upstream.script(
        { kind: 'json', body: { error: { message: 'model is loading', type: 'server_error' } } },
        { kind: 'json', body: { id: 'x', choices: [] } },
      );
      const failed = await rejection(provider.generate(request(hi()), 'm', {}));
      assert.equal(failed.code, 'upstream_error');
      assert.match(failed.message, /model is loading/);
      assert.match((await rejection(provider.generate(request(hi()), 'm', {}))).message, /without a choice/);
    });

    it('passes an upstream error status through', async () => {
      upstream.script({ kind: 'json', status: 400, body: { error: { message: "Unsupported parameter: 'max_tokens'", type: 'invalid_request_error' } } });
      const err = await rejection(provider.generate(request(hi()), 'm', {}));
      assert.equal(err.status, 400);
      assert.match(err.message, /Unsupported parameter/);
    });
  });

  describe('stream()', () => {
    it('yields start, one text block and one finish with the usage chunk that came after the finish_reason, and asks for that chunk', async () => {
      const parts = await collect(
        provider.stream(request(hi(), { extra: { format: 'chat', fields: { stream_options: { include_obfuscation: false } } } }), 'gpt-real', {}),
      );
      assert.deepEqual(parts, [
        { type: 'start', id: 'chatcmpl-fake2', model: 'gpt-real', created: 1_700_000_000 },
        { type: 'text-start', id: 'b0' },
        { type: 'text-delta', id: 'b0', delta: 'Hello' },
        { type: 'text-delta', id: 'b0', delta: ' world' },
        { type: 'text-end', id: 'b0' },
        { type: 'finish', finishReason: 'stop', usage: { inputTokens: 5, outputTokens: 2 } },
      ]);
      const seen = upstream.requests[0]!;
      assert.equal(seen.path, '/v1/chat/completions?api-version=2024-10-21');
      assert.equal(seen.headers['accept'], 'text/event-stream');
      const body = seen.json();
      assert.equal(body['stream'], true);
      assert.deepEqual(body['stream_options'], { include_obfuscation: false, include_usage: true });
    });

    it('streams refusal deltas as a text block of their own marked refusal', async () => {
      const base = { id: 'chatcmpl-r', object: 'chat.completion.chunk', created: 1, model: 'gpt-real' };
      const data = (delta: Record<string, unknown>, finish: string | null = null): string =>
        `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      upstream.script({
        kind: 'sse',
        chunks: [
          data({ role: 'assistant', content: null, refusal: '' }),
          data({ refusal: 'I cannot ' }),
          data({ refusal: 'help.' }),
          data({}, 'stop'),
          'data: [DONE]\n\n',
        ],
      });
      const parts = await collect(provider.stream(request(hi()), 'gpt-real', {}));
      assert.deepEqual(parts.slice(1, -1), [
        { type: 'text-start', id: 'b0', refusal: true },
        { type: 'text-delta', id: 'b0', delta: 'I cannot ' },
        { type: 'text-delta', id: 'b0', delta: 'help.' },
        { type: 'text-end', id: 'b0' },
      ]);
    });

    it('streams reasoning deltas as a reasoning block closed when the answer begins', async () => {
      upstream.script({
        kind: 'sse',
        chunks: [
          delta({ role: 'assistant', content: '' }),
          delta({ reasoning_content: 'Two plus ' }),
          delta({ reasoning: 'two.' }),
          delta({ content: '4' }),
          delta({}, 'stop'),
          chunk({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 6, total_tokens: 9, completion_tokens_details: { reasoning_tokens: 5 } } }),
          'data: [DONE]\n\n',
        ],
      });
      const parts = await collect(provider.stream(request(hi()), 'm', {}));
      assert.deepEqual(parts.slice(1), [
        { type: 'reasoning-start', id: 'b0' },
        { type: 'reasoning-delta', id: 'b0', delta: 'Two plus ' },
        { type: 'reasoning-delta', id: 'b0', delta: 'two.' },
        { type: 'reasoning-end', id: 'b0' },
        { type: 'text-start', id: 'b1' },
        { type: 'text-delta', id: 'b1', delta: '4' },
        { type: 'text-end', id: 'b1' },
        { type: 'finish', finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 6, reasoningTokens: 5 } },
      ]);
      assert.deepEqual(parts[0], { type: 'start', id: 'chatcmpl-s1', model: 'served-model', created: 1_700_000_123 });
    });

    it('groups tool-call deltas by index (id and name first, arguments in pieces) and ends with tool_calls; no call lost', async () => {
      upstream.script({
        kind: 'sse',
        chunks: [
          delta({ role: 'assistant', content: 'Checking.' }),
          delta({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
          delta({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
          delta({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
          // Ollama style: a whole call in one delta.
          delta({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } }] }),
          // A server that sends the arguments before the name: held until the name arrives.
          delta({ tool_calls: [{ index: 2, function: { arguments: '{}' } }] }),
          delta({ tool_calls: [{ index: 2, function: { name: 'get_news' } }] }),
          delta({}, 'tool_calls'),
          chunk({ choices: [], usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 } }),
          'data: [DONE]\n\n',
        ],
      });
      const parts = await collect(provider.stream(request(hi()), 'm', {}));
      const types = parts.map((part) => part.type);
      assert.equal(types.filter((type) => type === 'finish').length, 1);
      assert.equal(types.at(-1), 'finish');
      const starts = parts.filter((part): part is Extract<StreamPart, { type: 'tool-call-start' }> => part.type === 'tool-call-start');
      assert.deepEqual(
        starts.map((part) => part.name),
        ['get_weather', 'get_time', 'get_news'],
      );
      assert.deepEqual(
        starts.slice(0, 2).map((part) => part.callId),
        ['call_a', 'call_b'],
      );
      const response = await assembleResponse(streamOf(parts));
      assert.equal(response.finishReason, 'tool_calls');
      assert.deepEqual(response.usage, { inputTokens: 20, outputTokens: 9 });
      assert.deepEqual(
        response.content.map((part) => (part.type === 'tool-call' ? [part.name, part.arguments] : part.type === 'text' ? part.text : part.type)),
        ['Checking.', ['get_weather', '{"city":"Paris"}'], ['get_time', '{"tz":"CET"}'], ['get_news', '{}']],
      );
      const generatedId = starts[2]!.callId;
      assert.match(generatedId, /^call_[0-9a-f]{24}$/);
    });

    it('reads only the first choice when n > 1', async () => {
      upstream.script({
        kind: 'sse',
        chunks: [
          chunk({ choices: [{ index: 1, delta: { content: 'second' }, finish_reason: null }] }),
          chunk({ choices: [{ index: 0, delta: { content: 'first' }, finish_reason: null }] }),
          chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
          'data: [DONE]\n\n',
        ],
      });
      const response = await assembleResponse(provider.stream(request(hi(), { options: { n: 2 } }), 'm', {}));
      assert.deepEqual(response.content, [{ type: 'text', text: 'first' }]);
    });

    it('assembles to what generate() answers for the same reply', async () => {
      upstream.script(
        {
          kind: 'json',
          body: {
            id: 'chatcmpl-s1',
            created: 1_700_000_123,
            model: 'served-model',
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content: 'Sure.',
                  tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
                },
                finish_reason: 'tool_calls',
              },
            ],
            usage: { prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 },
          },
        },
        {
          kind: 'sse',
          chunks: [
            delta({ role: 'assistant', content: 'Sure.' }),
            delta({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }),
            delta({}, 'tool_calls'),
            chunk({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 } }),
            'data: [DONE]\n\n',
          ],
        },
      );
      const whole = await provider.generate(request(hi()), 'm', {});
      const streamed = await assembleResponse(provider.stream(request(hi()), 'm', {}));
      assert.deepEqual(streamed, whole);
    });

    it('accepts a stream that reached a finish_reason and ended without [DONE] (some servers omit it)', async () => {
      const events = chatStreamEvents('m', ['a', 'b']);
      upstream.script({ kind: 'sse', chunks: events.slice(0, -1) });
      const response = await assembleResponse(provider.stream(request(hi()), 'm', {}));
      assert.deepEqual(response.content, [{ type: 'text', text: 'ab' }]);
      assert.deepEqual(response.usage, { inputTokens: 5, outputTokens: 2 });
    });

    it('an error event mid-stream throws after the parts that came before it', async () => {
      const events = chatStreamEvents('m', ['a']);
      upstream.script({ kind: 'sse', chunks: [events[0]!, events[1]!, 'data: {"error":{"message":"model overloaded","type":"server_error"}}\n\n'] });
      const seen: StreamPart[] = [];
      await assert.rejects(
        (async () => {
          for await (const part of provider.stream(request(hi()), 'm', {})) seen.push(part);
        })(),
        (err: unknown) => err instanceof GatewayError && err.code === 'upstream_error' && /model overloaded/.test(err.message),
      );
      assert.deepEqual(
        seen.map((part) => part.type),
        ['start', 'text-start', 'text-delta'],
      );
    });

    it('a stream cut before any finish_reason is an error, cleanly ended or dropped', async () => {
      const events = chatStreamEvents('m', ['a']);
      upstream.script({ kind: 'sse', chunks: [events[0]!, events[1]!] }, { kind: 'sse', chunks: [events[0]!, events[1]!], failAfter: 2 });
      const ended = await rejection(collect(provider.stream(request(hi()), 'm', {})));
      assert.match(ended.message, /ended the stream before it finished/);
      const dropped = await rejection(collect(provider.stream(request(hi()), 'm', {})));
      assert.equal(dropped.status >= 500, true);
    });

    it('an event that is not JSON is an error', async () => {
      upstream.script({ kind: 'sse', chunks: [delta({ content: 'a' }), 'data: {not json\n\n'] });
      const err = await rejection(collect(provider.stream(request(hi()), 'm', {})));
      assert.match(err.message, /not JSON/);
    });

    it('releases the upstream when the caller aborts', async () => {
      upstream.script({ kind: 'sse', chunks: [delta({ content: 'first' }), delta({ content: 'late' })], gapMs: 5_000 });
      const controller = new AbortController();
      const iterator = provider.stream(request(hi()), 'm', { signal: controller.signal })[Symbol.asyncIterator]();
      assert.equal((await iterator.next()).value?.type, 'start');
      controller.abort();
      await upstream.waitForAborts(1);
      await assert.rejects(collect({ [Symbol.asyncIterator]: () => iterator }));
    });
  });
});
