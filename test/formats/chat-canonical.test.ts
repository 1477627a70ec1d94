// The chat completions format ⇄ canonical converters on their own: every mapping, the errors naming
// the field, and the reply and stream shapes the chat route must keep producing for translated
// providers (test/providers/anthropic-gateway.test.ts and test/gateway/chat-completions.test.ts drive
// the same shapes through HTTP).
import assert from 'node:assert/strict';
import type { ModelResponse, StreamPart } from '../../src/canonical/model';
import { responseToParts } from '../../src/canonical/assemble';
import { ChatChunkStream, canonicalToChatChunks, canonicalToChatCompletion, chatRequestToCanonical } from '../../src/formats/chat';
import type { ChatCompletionChunk } from '../../src/formats/chat';
import { collect, streamOf } from '../helpers/async-iterables';
import { renderAll } from '../helpers/canonical';
import { throwsNaming } from '../helpers/rejection';
import { openAiFinalCompletion } from '../helpers/sdk-streams';

const base = { model: 'claude-x', messages: [{ role: 'user', content: 'hi' }] };

function reply(overrides: Partial<ModelResponse> = {}): ModelResponse {
  return {
    id: 'msg_01',
    model: 'claude-sonnet-4',
    created: 1_700_000_000,
    content: [{ type: 'text', text: 'Hello' }],
    finishReason: 'stop',
    usage: { inputTokens: 10, outputTokens: 3 },
    ...overrides,
  };
}

describe('formats/chat ⇄ canonical', () => {
  describe('chatRequestToCanonical: messages', () => {
    it('maps system/developer, user string and parts, assistant text + tool calls, and tool results; the body is not mutated', () => {
      const body = {
        model: 'claude-x',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Use metric units.', cache_control: { type: 'ephemeral' } }] },
          {
            role: 'user',
            name: 'ann',
            content: [
              { type: 'text', text: 'Look:' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'high' } },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
              { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' } },
              { type: 'file', file: { file_id: 'file-123' } },
              { type: 'file', file: { file_data: 'JVBERi0x', filename: 'raw.PDF' } },
              { type: 'input_audio', input_audio: { data: 'UklG', format: 'wav' } },
            ],
          },
          {
            role: 'assistant',
            content: 'Checking.',
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
          {
            role: 'tool',
            tool_call_id: 'call_2',
            content: [
              { type: 'text', text: 'a' },
              { type: 'image_url', image_url: 'https://example.com/b.png' },
            ],
          },
        ],
      };
      const frozen = structuredClone(body);
      const { request } = chatRequestToCanonical(body);
      assert.deepEqual(body, frozen, 'the caller body is not mutated');
      assert.equal(request.model, 'claude-x');
      assert.deepEqual(request.messages, [
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
        { role: 'system', developer: true, content: [{ type: 'text', text: 'Use metric units.', cacheControl: { type: 'ephemeral' } }] },
        {
          role: 'user',
          name: 'ann',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' }, detail: 'high' },
            { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } },
            { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBE' }, filename: 'a.pdf' },
            { type: 'file', source: { kind: 'file-id', fileId: 'file-123' } },
            { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0x' }, filename: 'raw.PDF' },
            { type: 'native', format: 'chat', value: { type: 'input_audio', input_audio: { data: 'UklG', format: 'wav' } } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool-call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          ],
        },
        { role: 'tool', content: [{ type: 'tool-result', callId: 'call_1', output: 'sunny' }] },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              callId: 'call_2',
              output: [
                { type: 'text', text: 'a' },
                { type: 'image', source: { kind: 'url', url: 'https://example.com/b.png' } },
              ],
            },
          ],
        },
      ]);
      assert.deepEqual(request.tools, []);
      assert.equal(request.toolChoice, undefined);
      assert.equal(request.extra, undefined);
    });

    it('maps assistant reasoning_content, thinking_blocks (signatures kept), refusal, null content and custom tool calls', () => {
      const { request } = chatRequestToCanonical({
        model: 'm',
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: null,
            reasoning_content: 'let me think',
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }],
          },
          {
            role: 'assistant',
            content: [{ type: 'text', text: 'x' }],
            reasoning_content: 'ignored: the blocks carry it',
            thinking_blocks: [
              { type: 'thinking', thinking: 'hmm', signature: 'sig' },
              { type: 'redacted_thinking', data: 'opaque' },
            ],
          },
          { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot.' }], refusal: null },
          { role: 'assistant', content: null, refusal: 'No.' },
          { role: 'assistant', content: '', tool_calls: [{ id: 'c2', type: 'custom', custom: { name: 'grammar', input: 'x' } }] },
        ],
      });
      assert.deepEqual(request.messages.slice(1), [
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'let me think' },
            { type: 'tool-call', id: 'c1', name: 'f', arguments: '' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'hmm', signature: 'sig' },
            { type: 'reasoning', text: '', redactedData: 'opaque' },
            { type: 'text', text: 'x' },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'I cannot.' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'No.' }] },
        { role: 'assistant', content: [{ type: 'native', format: 'chat', value: { id: 'c2', type: 'custom', custom: { name: 'grammar', input: 'x' } } }] },
      ]);
    });

    it("a tool call's Gemini thought signature (extra_content.google.thought_signature) becomes a signature-only reasoning part right before it", () => {
      const { request } = chatRequestToCanonical({
        model: 'm',
        messages: [
          {
            role: 'assistant',
            content: 'Looking.',
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' }, extra_content: { google: { thought_signature: 'U0lH' } } },
              { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } },
            ],
          },
        ],
      });
      assert.deepEqual(request.messages[0]?.content, [
        { type: 'text', text: 'Looking.' },
        { type: 'reasoning', text: '', signature: 'U0lH' },
        { type: 'tool-call', id: 'c1', name: 'f', arguments: '{}' },
        { type: 'tool-call', id: 'c2', name: 'g', arguments: '{}' },
      ]);
    });

    it('an empty string content is no part; a tool message without content is an empty output', () => {
      const { request } = chatRequestToCanonical({
        model: 'm',
        messages: [
          { role: 'system', content: '' },
          { role: 'user', content: '' },
          { role: 'tool', tool_call_id: 't', content: null },
        ],
      });
      assert.deepEqual(request.messages, [
        { role: 'system', content: [] },
        { role: 'user', content: [] },
        { role: 'tool', content: [{ type: 'tool-result', callId: 't', output: '' }] },
      ]);
    });

    it('rejects what it cannot carry with a 400 naming the field', () => {
      const msg = (message: unknown) => () => chatRequestToCanonical({ model: 'm', messages: [message] });
      throwsNaming(() => chatRequestToCanonical({ messages: [] }), 'model');
      throwsNaming(() => chatRequestToCanonical({ model: 'm', messages: 'hi' }), 'messages');
      throwsNaming(msg({ role: 'function', content: 'x' }), 'messages[0].role');
      throwsNaming(msg('hi'), 'messages[0]');
      throwsNaming(msg({ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x' } }] }), 'messages[0].content[0].type');
      throwsNaming(msg({ role: 'user', content: [{ text: 'no type' }] }), 'messages[0].content[0].type');
      throwsNaming(msg({ role: 'user', content: [{ type: 'text', text: 5 }] }), 'messages[0].content[0].text');
      throwsNaming(
        msg({ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png,notbase64' } }] }),
        'messages[0].content[0].image_url.url',
      );
      throwsNaming(msg({ role: 'user', content: [{ type: 'image_url', image_url: {} }] }), 'messages[0].content[0].image_url.url');
      throwsNaming(msg({ role: 'user', content: [{ type: 'file', file: {} }] }), 'messages[0].content[0].file');
      throwsNaming(msg({ role: 'user', content: [{ type: 'file', file: { file_data: 'data:text/plain,abc' } }] }), 'messages[0].content[0].file.file_data');
      throwsNaming(msg({ role: 'user', content: 5 }), 'messages[0].content');
      throwsNaming(msg({ role: 'tool', content: 'r' }), 'messages[0].tool_call_id');
      throwsNaming(msg({ role: 'tool', tool_call_id: 't', content: [{ type: 'input_audio', input_audio: {} }] }), 'messages[0].content[0].type');
      throwsNaming(msg({ role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'f' } }] }), 'messages[0].tool_calls[0].id');
      throwsNaming(msg({ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: {} }] }), 'messages[0].tool_calls[0].function.name');
      throwsNaming(
        msg({ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: 5 } }] }),
        'messages[0].tool_calls[0].function.arguments',
      );
      throwsNaming(msg({ role: 'assistant', tool_calls: {} }), 'messages[0].tool_calls');
      throwsNaming(msg({ role: 'assistant', thinking_blocks: [{ type: 'text', text: 'x' }] }), 'messages[0].thinking_blocks[0]');
      throwsNaming(msg({ role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }), 'messages[0].function_call');
      throwsNaming(msg({ role: 'user', content: 'x', name: 7 }), 'messages[0].name');
    });
  });

  describe('chatRequestToCanonical: tools, tool_choice, options, extra', () => {
    it('maps function tools (strict, cache_control) and keeps other tool types native', () => {
      const { request } = chatRequestToCanonical({
        ...base,
        tools: [
          {
            type: 'function',
            function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' }, strict: true },
            cache_control: { type: 'ephemeral' },
          },
          { type: 'function', function: { name: 'bare' } },
          { type: 'custom', custom: { name: 'grammar' } },
        ],
      });
      assert.deepEqual(request.tools, [
        { kind: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object' }, strict: true, cacheControl: { type: 'ephemeral' } },
        { kind: 'function', name: 'bare' },
        { kind: 'native', format: 'chat', type: 'custom', definition: { type: 'custom', custom: { name: 'grammar' } } },
      ]);
      throwsNaming(() => chatRequestToCanonical({ ...base, tools: {} }), 'tools');
      throwsNaming(() => chatRequestToCanonical({ ...base, tools: [{ function: { name: 'f' } }] }), 'tools[0].type');
      throwsNaming(() => chatRequestToCanonical({ ...base, tools: [{ type: 'function', function: {} }] }), 'tools[0].function.name');
      throwsNaming(
        () => chatRequestToCanonical({ ...base, tools: [{ type: 'function', function: { name: 'f', parameters: 'x' } }] }),
        'tools[0].function.parameters',
      );
    });

    it('maps every tool_choice form', () => {
      const choice = (toolChoice: unknown) => chatRequestToCanonical({ ...base, tool_choice: toolChoice }).request.toolChoice;
      assert.deepEqual(choice('auto'), { kind: 'auto' });
      assert.deepEqual(choice('none'), { kind: 'none' });
      assert.deepEqual(choice('required'), { kind: 'required' });
      assert.deepEqual(choice({ type: 'function', function: { name: 'f' } }), { kind: 'tool', name: 'f' });
      assert.deepEqual(choice({ type: 'custom', custom: { name: 'g' } }), { kind: 'tool', name: 'g' });
      assert.deepEqual(
        choice({
          type: 'allowed_tools',
          allowed_tools: {
            mode: 'required',
            tools: [
              { type: 'function', function: { name: 'a' } },
              { type: 'function', function: { name: 'b' } },
            ],
          },
        }),
        { kind: 'allowed', mode: 'required', names: ['a', 'b'] },
      );
      assert.equal(choice(null), undefined);
      throwsNaming(() => choice('any'), 'tool_choice');
      throwsNaming(() => choice({ type: 'function' }), 'tool_choice');
      throwsNaming(() => choice({ type: 'allowed_tools', allowed_tools: { mode: 'any', tools: [] } }), 'tool_choice.allowed_tools.mode');
      throwsNaming(
        () => choice({ type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function' }] } }),
        'tool_choice.allowed_tools.tools[0]',
      );
      throwsNaming(() => choice({ type: 'allowed_tools' }), 'tool_choice.allowed_tools');
    });

    it('maps every option and names each by the field the caller used; the rest is extra (format chat)', () => {
      const { request, fieldNames } = chatRequestToCanonical({
        ...base,
        stream: true,
        stream_options: { include_usage: true },
        max_completion_tokens: 100,
        max_tokens: 50,
        temperature: 0.2,
        top_p: 0.9,
        top_k: 40,
        stop: 'END',
        seed: 7,
        presence_penalty: 0.1,
        frequency_penalty: -0.1,
        n: 2,
        logprobs: true,
        top_logprobs: 3,
        response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true, description: 'd' } },
        reasoning_effort: 'high',
        parallel_tool_calls: false,
        user: 'u-1',
        verbosity: 'low',
        service_tier: 'flex',
        prompt_cache_key: 'k',
        logit_bias: { '50256': -100 },
        prediction: { type: 'content', content: 'x' },
        modalities: ['text'],
        metadata: null,
      });
      assert.deepEqual(request.options, {
        maxOutputTokens: 100,
        temperature: 0.2,
        topP: 0.9,
        topK: 40,
        stop: ['END'],
        seed: 7,
        presencePenalty: 0.1,
        frequencyPenalty: -0.1,
        n: 2,
        logprobs: true,
        topLogprobs: 3,
        responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, description: 'd', strict: true },
        reasoning: { effort: 'high' },
        parallelToolCalls: false,
        user: 'u-1',
        verbosity: 'low',
        serviceTier: 'flex',
        promptCacheKey: 'k',
      });
      assert.deepEqual(fieldNames, {
        maxOutputTokens: 'max_completion_tokens',
        temperature: 'temperature',
        topP: 'top_p',
        topK: 'top_k',
        stop: 'stop',
        seed: 'seed',
        presencePenalty: 'presence_penalty',
        frequencyPenalty: 'frequency_penalty',
        n: 'n',
        logprobs: 'logprobs',
        topLogprobs: 'top_logprobs',
        responseFormat: 'response_format',
        reasoning: 'reasoning_effort',
        parallelToolCalls: 'parallel_tool_calls',
        user: 'user',
        verbosity: 'verbosity',
        serviceTier: 'service_tier',
        promptCacheKey: 'prompt_cache_key',
      });
      // null fields are unset (SDKs send them so), not extra; stream and stream_options are the route's.
      assert.deepEqual(request.extra, {
        format: 'chat',
        fields: { logit_bias: { '50256': -100 }, prediction: { type: 'content', content: 'x' }, modalities: ['text'] },
      });
    });

    it('max_tokens alone, stop arrays, json_object / text formats, and Anthropic thinking on a chat body', () => {
      const one = chatRequestToCanonical({ ...base, max_tokens: 20, stop: ['a', 'b'], response_format: { type: 'json_object' } });
      assert.deepEqual(one.request.options, { maxOutputTokens: 20, stop: ['a', 'b'], responseFormat: { type: 'json_object' } });
      assert.equal(one.fieldNames.maxOutputTokens, 'max_tokens');
      assert.deepEqual(chatRequestToCanonical({ ...base, response_format: { type: 'text' }, stop: [] }).request.options, { responseFormat: { type: 'text' } });
      const thinking = chatRequestToCanonical({ ...base, thinking: { type: 'enabled', budget_tokens: 1024 } });
      assert.deepEqual(thinking.request.options.reasoning, { budgetTokens: 1024 });
      assert.equal(thinking.fieldNames.reasoning, 'thinking');
      assert.deepEqual(chatRequestToCanonical({ ...base, thinking: { type: 'disabled' } }).request.options.reasoning, { disabled: true });
      const adaptive = chatRequestToCanonical({ ...base, thinking: { type: 'adaptive' } });
      assert.equal(adaptive.request.options.reasoning, undefined);
      assert.deepEqual(adaptive.request.extra, { format: 'chat', fields: { thinking: { type: 'adaptive' } } });
    });

    it('rejects options of the wrong type with a 400 naming the field', () => {
      const opt = (fields: Record<string, unknown>) => () => chatRequestToCanonical({ ...base, ...fields });
      throwsNaming(opt({ temperature: 'hot' }), 'temperature');
      throwsNaming(opt({ max_tokens: 1.5 }), 'max_tokens');
      throwsNaming(opt({ max_completion_tokens: '10' }), 'max_completion_tokens');
      throwsNaming(opt({ stop: [1] }), 'stop');
      throwsNaming(opt({ n: 1.2 }), 'n');
      throwsNaming(opt({ logprobs: 1 }), 'logprobs');
      throwsNaming(opt({ user: 5 }), 'user');
      throwsNaming(opt({ parallel_tool_calls: 'no' }), 'parallel_tool_calls');
      throwsNaming(opt({ reasoning_effort: 'max' }), 'reasoning_effort');
      throwsNaming(opt({ response_format: 'json' }), 'response_format');
      throwsNaming(opt({ response_format: { type: 'yaml' } }), 'response_format.type');
      throwsNaming(opt({ response_format: { type: 'json_schema', json_schema: { schema: {} } } }), 'response_format.json_schema.name');
      throwsNaming(opt({ thinking: { type: 'enabled' } }), 'thinking.budget_tokens');
      throwsNaming(opt({ thinking: 'on' }), 'thinking');
      throwsNaming(opt({ reasoning_effort: 'low', thinking: { type: 'enabled', budget_tokens: 1024 } }), 'thinking');
    });
  });

  describe('canonicalToChatCompletion', () => {
    it('maps text, tool calls, reasoning, finish reason and usage (cached and reasoning tokens in the details)', () => {
      const completion = canonicalToChatCompletion(
        reply({
          content: [
            { type: 'reasoning', text: 'thinking', signature: 'sig' },
            { type: 'text', text: 'Checking ' },
            { type: 'text', text: 'both.' },
            { type: 'tool-call', id: 'toolu_1', name: 'get_weather', arguments: '{"location":"Paris"}' },
            { type: 'native', format: 'messages', value: { type: 'server_tool_use', id: 's', name: 'web_search', input: {} } },
          ],
          finishReason: 'tool_calls',
          usage: { inputTokens: 125, outputTokens: 40, cachedInputTokens: 20, cacheCreationInputTokens: 5, reasoningTokens: 7 },
        }),
        'claude-gw',
      );
      assert.deepEqual(completion, {
        id: 'chatcmpl-msg_01',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'claude-gw',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Checking both.',
              refusal: null,
              tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
              reasoning_content: 'thinking',
            },
            finish_reason: 'tool_calls',
            logprobs: null,
          },
        ],
        usage: {
          prompt_tokens: 125,
          completion_tokens: 40,
          total_tokens: 165,
          prompt_tokens_details: { cached_tokens: 20 },
          completion_tokens_details: { reasoning_tokens: 7 },
        },
      });
    });

    it('content is null for a reply of tool calls only; a stop with tool calls is tool_calls; details only when non-zero', () => {
      const completion = canonicalToChatCompletion(
        reply({
          id: 'chatcmpl-keep',
          content: [{ type: 'tool-call', id: 'c', name: 'f', arguments: '{}' }],
          usage: { inputTokens: 25, outputTokens: 7, cachedInputTokens: 0 },
        }),
        'm',
      );
      assert.equal(completion.id, 'chatcmpl-keep');
      assert.equal(completion.choices[0]?.message.content, null);
      assert.equal(completion.choices[0]?.finish_reason, 'tool_calls');
      assert.deepEqual(completion.usage, { prompt_tokens: 25, completion_tokens: 7, total_tokens: 32 });
      assert.equal('reasoning_content' in (completion.choices[0]?.message ?? {}), false);
    });

    it('a signature-only reasoning part right before a tool call goes on it as extra_content.google.thought_signature; thinking with text does not', () => {
      const completion = canonicalToChatCompletion(
        reply({
          content: [
            { type: 'reasoning', text: '', signature: 'GEM1' },
            { type: 'tool-call', id: 'c1', name: 'f', arguments: '{}' },
            { type: 'reasoning', text: 'anthropic thinking', signature: 'ANT' },
            { type: 'tool-call', id: 'c2', name: 'g', arguments: '{}' },
            { type: 'reasoning', text: '', signature: 'ON_TEXT' },
            { type: 'text', text: 'x' },
            { type: 'tool-call', id: 'c3', name: 'h', arguments: '{}' },
          ],
        }),
        'm',
      );
      assert.deepEqual(completion.choices[0]?.message.tool_calls, [
        { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' }, extra_content: { google: { thought_signature: 'GEM1' } } },
        { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } },
        { id: 'c3', type: 'function', function: { name: 'h', arguments: '{}' } },
      ]);
      assert.equal(completion.choices[0]?.message.reasoning_content, 'anthropic thinking');
      // Round trip: the call sent back carries the signature to the same place.
      const { request } = chatRequestToCanonical({
        model: 'm',
        messages: [{ role: 'assistant', content: null, tool_calls: completion.choices[0]?.message.tool_calls?.slice(0, 1) }],
      });
      assert.deepEqual(request.messages[0]?.content, [
        { type: 'reasoning', text: '', signature: 'GEM1' },
        { type: 'tool-call', id: 'c1', name: 'f', arguments: '{}' },
      ]);
    });

    it('maps every finish reason; a tool_calls finish without calls (JSON mode) is stop; a missing id and created are minted', () => {
      const expected = { stop: 'stop', length: 'length', content_filter: 'content_filter', tool_calls: 'stop', error: 'stop', other: 'stop' } as const;
      for (const [finishReason, finish] of Object.entries(expected)) {
        const completion = canonicalToChatCompletion(reply({ finishReason: finishReason as ModelResponse['finishReason'] }), 'm');
        assert.equal(completion.choices[0]?.finish_reason, finish, finishReason);
      }
      const minted = canonicalToChatCompletion(reply({ id: '', created: 0, content: [] }), 'm', () => 5_000);
      assert.match(minted.id, /^chatcmpl-[0-9a-f]{24}$/);
      assert.equal(minted.created, 5);
      assert.equal(minted.choices[0]?.message.content, null);
    });
  });

  describe('ChatChunkStream', () => {
    const toolReply = reply({
      id: 'msg_01Stream',
      content: [
        { type: 'reasoning', text: 'hmm', signature: 'sig' },
        { type: 'text', text: 'Okay, let me check.' },
        { type: 'tool-call', id: 'toolu_01Weather', name: 'get_weather', arguments: '{"location": "San Francisco, CA"}' },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 482, outputTokens: 89, cachedInputTokens: 10 },
    });
    const usage = { prompt_tokens: 482, completion_tokens: 89, total_tokens: 571, prompt_tokens_details: { cached_tokens: 10 } };

    function run(parts: Iterable<StreamPart>, includeUsage?: boolean): ChatCompletionChunk[] {
      return renderAll(new ChatChunkStream(includeUsage === undefined ? { model: 'claude-gw' } : { model: 'claude-gw', includeUsage }), parts);
    }

    it('role first, reasoning and text deltas, tool call id/name then fragments, finish, usage last with include_usage', () => {
      const chunks = run(
        responseToParts(toolReply, (text) => text.match(/.{1,6}/gs) ?? []),
        true,
      );
      assert.ok(
        chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === 'chatcmpl-msg_01Stream' && c.model === 'claude-gw' && c.created === 1_700_000_000),
      );
      assert.deepEqual(chunks[0]?.choices, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
      assert.deepEqual(chunks[1]?.choices[0]?.delta, { reasoning_content: 'hmm' });
      const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
      assert.equal(content, 'Okay, let me check.');
      const toolChunks = chunks.filter((c) => c.choices[0]?.delta.tool_calls);
      assert.deepEqual(toolChunks[0]?.choices[0]?.delta.tool_calls, [
        { index: 0, id: 'toolu_01Weather', type: 'function', function: { name: 'get_weather', arguments: '' } },
      ]);
      assert.deepEqual(toolChunks[1]?.choices[0]?.delta.tool_calls, [{ index: 0, function: { arguments: '{"location": "San Francisco, CA"}' } }]);
      assert.deepEqual(chunks.at(-2)?.choices, [{ index: 0, delta: {}, finish_reason: 'tool_calls' }]);
      assert.deepEqual(chunks.at(-1)?.choices, []);
      assert.deepEqual(chunks.at(-1)?.usage, usage);
      assert.equal(
        chunks.slice(0, -1).some((c) => c.usage !== undefined),
        false,
      );
    });

    it('without include_usage every chunk has one choice and the usage rides on the finish chunk', () => {
      const chunks = run(responseToParts(toolReply));
      assert.ok(chunks.every((c) => c.choices.length === 1));
      assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, 'tool_calls');
      assert.deepEqual(chunks.at(-1)?.usage, usage);
    });

    it('keeps parallel tool calls apart by index when their fragments interleave; native parts are skipped', () => {
      const chunks = run([
        { type: 'start', id: 'chatcmpl-1', model: 'up', created: 1 },
        { type: 'tool-call-start', id: 'a', callId: 'call_a', name: 'f' },
        { type: 'tool-call-delta', id: 'a', delta: '{"a"' },
        { type: 'tool-call-start', id: 'b', callId: 'call_b', name: 'g' },
        { type: 'native', format: 'messages', value: { type: 'server_tool_use' } },
        { type: 'tool-call-delta', id: 'b', delta: '{"b":2}' },
        { type: 'tool-call-delta', id: 'a', delta: ':1}' },
        { type: 'tool-call-end', id: 'a' },
        { type: 'tool-call-end', id: 'b' },
        { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 2 } },
      ]);
      const calls: { id?: string; name?: string; arguments: string }[] = [];
      for (const chunk of chunks) {
        for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
          const slot = (calls[call.index] ??= { arguments: '' });
          if (call.id) slot.id = call.id;
          if (call.function?.name) slot.name = call.function.name;
          slot.arguments += call.function?.arguments ?? '';
        }
      }
      assert.deepEqual(calls, [
        { id: 'call_a', name: 'f', arguments: '{"a":1}' },
        { id: 'call_b', name: 'g', arguments: '{"b":2}' },
      ]);
      assert.equal(chunks.length, 1 + 2 + 3 + 1);
      assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, 'tool_calls', 'a stop after tool calls is tool_calls');
      assert.equal(chunks[0]?.id, 'chatcmpl-1');
    });

    it("a tool call right after a signature-only reasoning block carries the signature in its first delta (Gemini's thought signature)", () => {
      const chunks = run([
        { type: 'start', id: 'r1', model: 'up', created: 1 },
        { type: 'reasoning-start', id: 's' },
        { type: 'reasoning-end', id: 's', signature: 'U0lH' },
        { type: 'tool-call-start', id: 'a', callId: 'call_a', name: 'lookup' },
        { type: 'tool-call-delta', id: 'a', delta: '{"q":"gateway"}' },
        { type: 'tool-call-end', id: 'a' },
        { type: 'reasoning-start', id: 't' },
        { type: 'reasoning-delta', id: 't', delta: 'thought' },
        { type: 'reasoning-end', id: 't', signature: 'ANT' },
        { type: 'tool-call-start', id: 'b', callId: 'call_b', name: 'other' },
        { type: 'tool-call-end', id: 'b' },
        { type: 'finish', finishReason: 'stop', usage: { inputTokens: 9, outputTokens: 4 } },
      ]);
      const starts = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).filter((t) => t.id !== undefined);
      assert.deepEqual(starts, [
        { index: 0, id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '' }, extra_content: { google: { thought_signature: 'U0lH' } } },
        { index: 1, id: 'call_b', type: 'function', function: { name: 'other', arguments: '' } },
      ]);
    });

    it('throws the error of an error part after the chunks already produced, and refuses a stream cut before finish', async () => {
      const boom = new Error('upstream broke');
      const seen: ChatCompletionChunk[] = [];
      await assert.rejects(async () => {
        for await (const chunk of canonicalToChatChunks(
          streamOf<StreamPart>([
            { type: 'start', id: 'x', model: 'm', created: 1 },
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'partial' },
            { type: 'error', error: boom },
          ]),
          { model: 'm' },
        )) {
          seen.push(chunk);
        }
      }, /upstream broke/);
      assert.deepEqual(
        seen.map((c) => c.choices[0]?.delta),
        [{ role: 'assistant', content: '' }, { content: 'partial' }],
      );
      await assert.rejects(
        collect(canonicalToChatChunks(streamOf<StreamPart>([{ type: 'start', id: 'x', model: 'm', created: 1 }]), { model: 'm' })),
        (err: unknown) => (err as { status: number }).status === 502 && /ended before the reply was complete/.test((err as Error).message),
      );
    });

    it('round trip: the chunks a client reassembles equal canonicalToChatCompletion of the same reply', async () => {
      const chunks = await collect(canonicalToChatChunks(streamOf(responseToParts(toolReply)), { model: 'claude-gw' }));
      const completion = canonicalToChatCompletion(toolReply, 'claude-gw');
      const message = completion.choices[0]!.message;
      assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), message.content);
      assert.equal(chunks.map((c) => c.choices[0]?.delta.reasoning_content ?? '').join(''), message.reasoning_content);
      const args = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).map((t) => t.function?.arguments ?? '');
      assert.equal(args.join(''), message.tool_calls?.[0]?.function.arguments);
      assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, completion.choices[0]?.finish_reason);
      assert.deepEqual(chunks.at(-1)?.usage, completion.usage);
      assert.equal(chunks[0]?.id, completion.id);
    });

    it('the OpenAI SDK assembles from the chunks the completion canonicalToChatCompletion answers for the same reply', async () => {
      for (const includeUsage of [true, false]) {
        const chunks = await collect(
          canonicalToChatChunks(streamOf(responseToParts(toolReply, (t) => t.match(/.{1,4}/gs) ?? [])), { model: 'claude-gw', includeUsage }),
        );
        const assembled = (await openAiFinalCompletion(chunks)) as unknown as Record<string, unknown>;
        const expected = canonicalToChatCompletion(toolReply, 'claude-gw');
        for (const key of ['id', 'object', 'created', 'model', 'usage'] as const) assert.deepEqual(assembled[key], expected[key], key);
        const choice = (assembled['choices'] as { message: Record<string, unknown>; finish_reason: string }[])[0];
        assert.equal(choice?.finish_reason, 'tool_calls');
        assert.equal(choice?.message['content'], expected.choices[0]?.message.content);
        assert.deepEqual(choice?.message['tool_calls'], expected.choices[0]?.message.tool_calls);
        assert.equal(choice?.message['reasoning_content'], 'hmm');
      }
    });
  });
});
