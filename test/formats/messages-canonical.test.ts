// The Anthropic Messages format ⇄ canonical converters on their own: every mapping, errors naming the
// field, the reply object and the event sequence, and the stream assembled by the real Anthropic SDK
// equal to the JSON reply. The converter-level cases of anthropic-messages.test.ts (the chat-shaped
// converters) are ported here; test/gateway/messages-completions.test.ts and
// test/providers/anthropic-gateway.test.ts drive the same shapes through HTTP.
import assert from 'node:assert/strict';
import { responseToParts } from '../../src/canonical/assemble';
import type { ModelResponse, StreamPart } from '../../src/canonical/model';
import { MessageEventStream, canonicalToMessage, canonicalToMessageEvents, messagesRequestToCanonical } from '../../src/formats/anthropic-messages';
import type { MessageEvent } from '../../src/formats/anthropic-messages';
import { collect, streamOf } from '../helpers/async-iterables';
import { renderAll } from '../helpers/canonical';
import { throwsNaming } from '../helpers/rejection';
import { anthropicFinalMessage } from '../helpers/sdk-streams';

function run(parts: Iterable<StreamPart>, model = 'claude-x'): MessageEvent[] {
  return renderAll(new MessageEventStream(model), parts);
}

function reply(overrides: Partial<ModelResponse> = {}): ModelResponse {
  return {
    id: 'chatcmpl-9',
    model: 'up',
    created: 1,
    content: [{ type: 'text', text: 'Hi' }],
    finishReason: 'stop',
    usage: { inputTokens: 7, outputTokens: 3 },
    ...overrides,
  };
}

const base = { model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] };

describe('formats/anthropic-messages ⇄ canonical', () => {
  describe('messagesRequestToCanonical', () => {
    it('maps system, multimodal user blocks, tool_use and tool_result turns and the sampling fields; the body is not mutated', () => {
      const body = {
        model: 'claude-x',
        max_tokens: 300,
        system: [{ type: 'text', text: 'Be brief.' }],
        stop_sequences: ['END'],
        temperature: 0.2,
        top_p: 0.9,
        top_k: 5,
        metadata: { user_id: 'u-1' },
        stream: true,
        tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
        tool_choice: { type: 'any', disable_parallel_tool_use: true },
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look:' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'sunny' }] },
              { type: 'text', text: 'And tomorrow?' },
            ],
          },
        ],
      };
      const frozen = structuredClone(body);
      const { request, fieldNames } = messagesRequestToCanonical(body);
      assert.deepEqual(body, frozen, 'the caller body is not mutated');
      assert.deepEqual(request, {
        model: 'claude-x',
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look:' },
              { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } },
              { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Checking.' },
              { type: 'tool-call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            ],
          },
          { role: 'tool', content: [{ type: 'tool-result', callId: 'toolu_1', output: [{ type: 'text', text: 'sunny' }] }] },
          { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
        ],
        tools: [{ kind: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
        toolChoice: { kind: 'required' },
        options: { maxOutputTokens: 300, temperature: 0.2, topP: 0.9, topK: 5, stop: ['END'], user: 'u-1', parallelToolCalls: false },
      });
      assert.deepEqual(fieldNames, {
        maxOutputTokens: 'max_tokens',
        temperature: 'temperature',
        topP: 'top_p',
        topK: 'top_k',
        stop: 'stop_sequences',
        user: 'metadata.user_id',
        parallelToolCalls: 'tool_choice.disable_parallel_tool_use',
      });
    });

    it('maps tool_choice tool/auto/any/none', () => {
      const choice = (toolChoice: unknown) => messagesRequestToCanonical({ ...base, tool_choice: toolChoice }).request.toolChoice;
      assert.deepEqual(choice({ type: 'tool', name: 'f' }), { kind: 'tool', name: 'f' });
      assert.deepEqual(choice({ type: 'auto' }), { kind: 'auto' });
      assert.deepEqual(choice({ type: 'any' }), { kind: 'required' });
      assert.deepEqual(choice({ type: 'none' }), { kind: 'none' });
      assert.equal(
        messagesRequestToCanonical({ ...base, tool_choice: { type: 'auto', disable_parallel_tool_use: false } }).request.options.parallelToolCalls,
        undefined,
      );
      throwsNaming(() => choice({ type: 'tool' }), 'tool_choice.name');
      throwsNaming(() => choice({ type: 'required' }), 'tool_choice.type');
      throwsNaming(() => choice('auto'), 'tool_choice');
    });

    it('keeps what a thinking model continuing after a tool call needs: thinking with signature, redacted thinking, errors, documents', () => {
      const { request } = messagesRequestToCanonical({
        model: 'm',
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'document',
                source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' },
                title: 'Q3',
                context: 'finance',
                citations: { enabled: true },
              },
              { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' }, cache_control: { type: 'ephemeral' } },
              { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
              { type: 'document', source: { type: 'file', file_id: 'file_1' } },
              { type: 'image', source: { type: 'file', file_id: 'file_2' } },
              { type: 'text', text: 'Sum up', cache_control: { type: 'ephemeral', ttl: '1h' } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hmm', signature: 'sig' },
              { type: 'redacted_thinking', data: 'opaque' },
              { type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'boom', is_error: true, cache_control: { type: 'ephemeral' } }] },
        ],
      });
      assert.deepEqual(request.options, { maxOutputTokens: 2048, reasoning: { budgetTokens: 1024 } });
      assert.deepEqual(request.messages, [
        {
          role: 'user',
          content: [
            {
              type: 'document',
              source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBE' },
              title: 'Q3',
              context: 'finance',
              citations: { enabled: true },
            },
            { type: 'document', source: { kind: 'text', mediaType: 'text/plain', data: 'plain words' }, cacheControl: { type: 'ephemeral' } },
            { type: 'document', source: { kind: 'url', url: 'https://example.com/a.pdf' } },
            { type: 'document', source: { kind: 'file-id', fileId: 'file_1' } },
            { type: 'image', source: { kind: 'file-id', fileId: 'file_2' } },
            { type: 'text', text: 'Sum up', cacheControl: { type: 'ephemeral', ttl: '1h' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'hmm', signature: 'sig' },
            { type: 'reasoning', text: '', redactedData: 'opaque' },
            { type: 'tool-call', id: 't1', name: 'f', arguments: '{"a":1}' },
          ],
        },
        { role: 'tool', content: [{ type: 'tool-result', callId: 't1', output: 'boom', isError: true, cacheControl: { type: 'ephemeral' } }] },
      ]);
    });

    it('keeps blocks, tools and fields the canonical model does not describe native / extra (format messages)', () => {
      const serverToolUse = { type: 'server_tool_use', id: 'srv_1', name: 'web_search', input: { query: 'x' } };
      const searchResult = { type: 'search_result', source: 'https://x', title: 't', content: [{ type: 'text', text: 'r' }] };
      const contentDocument = { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'a' }] } };
      const bash = { type: 'bash_20250124', name: 'bash' };
      const deferred = { name: 'lookup', input_schema: { type: 'object' }, defer_loading: true };
      const { request } = messagesRequestToCanonical({
        model: 'm',
        max_tokens: 10,
        system: 'Be terse.',
        thinking: { type: 'adaptive' },
        metadata: { user_id: 'u', other: 1 },
        container: 'c_1',
        mcp_servers: [{ type: 'url', url: 'https://mcp' }],
        service_tier: 'auto',
        tools: [
          bash,
          { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
          deferred,
          { type: 'custom', name: 'c', input_schema: { type: 'object' } },
        ],
        messages: [
          { role: 'user', content: [searchResult, contentDocument, { type: 'container_upload', file_id: 'f' }] },
          { role: 'assistant', content: [serverToolUse, { type: 'text', text: 'done' }] },
          { role: 'user', content: 'thanks' },
        ],
      });
      assert.deepEqual(request.messages, [
        { role: 'system', content: [{ type: 'text', text: 'Be terse.' }] },
        {
          role: 'user',
          content: [
            { type: 'native', format: 'messages', value: searchResult },
            { type: 'native', format: 'messages', value: contentDocument },
            { type: 'native', format: 'messages', value: { type: 'container_upload', file_id: 'f' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'native', format: 'messages', value: serverToolUse },
            { type: 'text', text: 'done' },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
      ]);
      assert.deepEqual(request.tools, [
        { kind: 'native', format: 'messages', type: 'bash_20250124', definition: bash },
        { kind: 'native', format: 'messages', type: 'web_search_20250305', definition: { type: 'web_search_20250305', name: 'web_search', max_uses: 3 } },
        { kind: 'native', format: 'messages', type: 'custom', definition: deferred },
        { kind: 'function', name: 'c', parameters: { type: 'object' } },
      ]);
      assert.deepEqual(request.options, { maxOutputTokens: 10, user: 'u' });
      assert.deepEqual(request.extra, {
        format: 'messages',
        fields: {
          thinking: { type: 'adaptive' },
          metadata: { other: 1 },
          container: 'c_1',
          mcp_servers: [{ type: 'url', url: 'https://mcp' }],
          service_tier: 'auto',
        },
      });
      const disabled = messagesRequestToCanonical({ ...base, thinking: { type: 'disabled' }, system: '' });
      assert.deepEqual(disabled.request.options.reasoning, { disabled: true });
      assert.equal(disabled.fieldNames.reasoning, 'thinking');
      assert.equal(disabled.request.messages[0]?.role, 'user', 'an empty system prompt is no message');
    });

    it('rejects a system role inside messages, and other malformed input, with a 400 naming the field', () => {
      throwsNaming(() => messagesRequestToCanonical({ model: 'm', max_tokens: 1, messages: [{ role: 'system', content: 'x' }] }), 'messages[0].role');
      const msgs = (messages: unknown) => () => messagesRequestToCanonical({ model: 'm', max_tokens: 1, messages });
      throwsNaming(() => messagesRequestToCanonical({ max_tokens: 1, messages: [] }), 'model');
      throwsNaming(msgs({}), 'messages');
      throwsNaming(msgs([{ role: 'user', content: 5 }]), 'messages[0].content');
      throwsNaming(msgs([{ role: 'user', content: [{ text: 'no type' }] }]), 'messages[0].content[0].type');
      throwsNaming(msgs([{ role: 'user', content: [{ type: 'text' }] }]), 'messages[0].content[0].text');
      throwsNaming(msgs([{ role: 'user', content: [{ type: 'image', source: { type: 'base64', data: 'AA' } }] }]), 'messages[0].content[0].source.media_type');
      throwsNaming(msgs([{ role: 'user', content: [{ type: 'image' }] }]), 'messages[0].content[0].source');
      throwsNaming(msgs([{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }]), 'messages[0].content[0].tool_use_id');
      throwsNaming(
        msgs([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'search_result', source: 's' }] }] }]),
        'messages[0].content[0].content[0].type',
      );
      throwsNaming(msgs([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 5 }] }]), 'messages[0].content[0].content');
      throwsNaming(msgs([{ role: 'assistant', content: [{ type: 'tool_use', name: 'f', input: {} }] }]), 'messages[0].content[0].id');
      throwsNaming(msgs([{ role: 'assistant', content: [{ type: 'tool_use', id: 't', input: {} }] }]), 'messages[0].content[0].name');
      throwsNaming(msgs([{ role: 'assistant', content: [{ type: 'thinking', signature: 's' }] }]), 'messages[0].content[0].thinking');
      throwsNaming(msgs([{ role: 'assistant', content: [{ type: 'redacted_thinking' }] }]), 'messages[0].content[0].data');
      throwsNaming(() => messagesRequestToCanonical({ ...base, system: [{ type: 'image' }] }), 'system[0].type');
      throwsNaming(() => messagesRequestToCanonical({ ...base, system: 5 }), 'system');
      throwsNaming(() => messagesRequestToCanonical({ ...base, tools: [{ input_schema: {} }] }), 'tools[0].name');
      throwsNaming(() => messagesRequestToCanonical({ ...base, tools: [{ name: 'f', input_schema: 'x' }] }), 'tools[0].input_schema');
      throwsNaming(() => messagesRequestToCanonical({ ...base, tools: {} }), 'tools');
      throwsNaming(() => messagesRequestToCanonical({ ...base, max_tokens: 'many' }), 'max_tokens');
      throwsNaming(() => messagesRequestToCanonical({ ...base, stop_sequences: [1] }), 'stop_sequences');
      throwsNaming(() => messagesRequestToCanonical({ ...base, metadata: 'u' }), 'metadata');
      throwsNaming(() => messagesRequestToCanonical({ ...base, metadata: { user_id: 5 } }), 'metadata.user_id');
      throwsNaming(() => messagesRequestToCanonical({ ...base, thinking: { type: 'enabled' } }), 'thinking.budget_tokens');
      throwsNaming(() => messagesRequestToCanonical({ ...base, top_k: 1.5 }), 'top_k');
    });
  });

  describe('canonicalToMessage', () => {
    it('maps text, tool calls, finish reason and usage (cache reads and writes reported apart)', () => {
      const message = canonicalToMessage(
        reply({
          content: [
            { type: 'text', text: 'Let me check.' },
            { type: 'tool-call', id: 'call_1', name: 'f', arguments: '{"x":1}' },
          ],
          finishReason: 'tool_calls',
          usage: { inputTokens: 12, outputTokens: 5, cachedInputTokens: 2 },
        }),
        'my-model',
      );
      assert.deepEqual(message, {
        id: 'msg_chatcmpl-9',
        type: 'message',
        role: 'assistant',
        model: 'my-model',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'call_1', name: 'f', input: { x: 1 } },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 2 },
      });
      const cached = canonicalToMessage(reply({ usage: { inputTokens: 125, outputTokens: 40, cachedInputTokens: 20, cacheCreationInputTokens: 5 } }), 'm');
      assert.deepEqual(cached.usage, { input_tokens: 100, output_tokens: 40, cache_read_input_tokens: 20, cache_creation_input_tokens: 5 });
    });

    it('maps length to max_tokens and an empty reply to one empty text block', () => {
      const message = canonicalToMessage(reply({ id: 'msg_abc', content: [], finishReason: 'length', usage: { inputTokens: 0, outputTokens: 0 } }), 'm');
      assert.equal(message.id, 'msg_abc');
      assert.equal(message.stop_reason, 'max_tokens');
      assert.deepEqual(message.content, [{ type: 'text', text: '' }]);
      assert.deepEqual(message.usage, { input_tokens: 0, output_tokens: 0 });
      assert.match(canonicalToMessage(reply({ id: '' }), 'm').id, /^msg_[0-9a-f]{24}$/);
    });

    it('keeps thinking with its signature, redacted thinking and native Messages blocks in order; drops other formats’ native parts', () => {
      const serverToolUse = { type: 'server_tool_use', id: 'srv_1', name: 'web_search', input: { query: 'x' } };
      const message = canonicalToMessage(
        reply({
          content: [
            { type: 'reasoning', text: 'hmm', signature: 'sig' },
            { type: 'reasoning', text: '', redactedData: 'opaque' },
            { type: 'reasoning', text: 'summary without signature' },
            { type: 'native', format: 'messages', value: serverToolUse },
            { type: 'native', format: 'responses', value: { type: 'web_search_call' } },
            { type: 'tool-call', id: 't', name: 'f', arguments: 'not json' },
            { type: 'tool-call', id: 'u', name: 'g', arguments: '' },
          ],
        }),
        'm',
      );
      assert.deepEqual(message.content, [
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'thinking', thinking: 'summary without signature', signature: '' },
        serverToolUse,
        { type: 'tool_use', id: 't', name: 'f', input: { _raw_arguments: 'not json' } },
        { type: 'tool_use', id: 'u', name: 'g', input: {} },
      ]);
      assert.equal(message.stop_reason, 'tool_use', 'a stop after tool calls is tool_use');
    });

    it("stop_reason: the upstream's Anthropic reason when it has one, otherwise mapped; stop_sequence echoed", () => {
      const stop = (overrides: Partial<ModelResponse>) => canonicalToMessage(reply(overrides), 'm');
      assert.equal(stop({ rawFinishReason: 'pause_turn' }).stop_reason, 'pause_turn');
      assert.equal(stop({ rawFinishReason: 'refusal', finishReason: 'content_filter' }).stop_reason, 'refusal');
      assert.equal(stop({ rawFinishReason: 'model_context_window_exceeded', finishReason: 'length' }).stop_reason, 'model_context_window_exceeded');
      assert.equal(stop({ rawFinishReason: 'tool_use' }).stop_reason, 'end_turn', 'tool_use without a tool call (a JSON tool unwrapped) is not claimed');
      assert.equal(stop({ rawFinishReason: 'STOP' }).stop_reason, 'end_turn', "another upstream's raw reason is not Anthropic's");
      assert.equal(stop({ finishReason: 'content_filter' }).stop_reason, 'refusal');
      assert.equal(stop({ finishReason: 'error' }).stop_reason, 'end_turn');
      const sequence = stop({ stopSequence: 'END' });
      assert.equal(sequence.stop_reason, 'stop_sequence');
      assert.equal(sequence.stop_sequence, 'END');
    });

    it('round trip: the reply sent back as an assistant turn gives back the same canonical parts', () => {
      const content: ModelResponse['content'] = [
        { type: 'reasoning', text: 'hmm', signature: 'sig' },
        { type: 'reasoning', text: '', redactedData: 'opaque' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool-call', id: 'toolu_1', name: 'f', arguments: '{"a":1}' },
        { type: 'native', format: 'messages', value: { type: 'server_tool_use', id: 's', name: 'web_search', input: {} } },
      ];
      const message = canonicalToMessage(reply({ content }), 'm');
      const { request } = messagesRequestToCanonical({ model: 'm', max_tokens: 5, messages: [{ role: 'assistant', content: message.content }] });
      assert.deepEqual(request.messages, [{ role: 'assistant', content }]);
    });
    it('a refusal the stop reason carries is not added as text (Messages has no refusal block); one it does not carry is text', () => {
      const content: ModelResponse['content'] = [
        { type: 'text', text: 'Hello..' },
        { type: 'text', text: 'Declined: cyber harm.', refusal: true },
      ];
      const refused = canonicalToMessage(reply({ content, finishReason: 'content_filter', rawFinishReason: 'refusal' }), 'm');
      assert.deepEqual(refused.content, [{ type: 'text', text: 'Hello..' }]);
      assert.equal(refused.stop_reason, 'refusal');
      // An OpenAI-format upstream's refusal ends with `stop`: the caller reads it as text.
      const chatRefusal = canonicalToMessage(reply({ content: [{ type: 'text', text: "I can't help.", refusal: true }], finishReason: 'stop' }), 'm');
      assert.deepEqual(chatRefusal.content, [{ type: 'text', text: "I can't help." }]);
      assert.equal(chatRefusal.stop_reason, 'end_turn');
    });
  });

  describe('MessageEventStream', () => {
    it('holds a refusal block until the finish: dropped under stop_reason refusal, sent as a text block otherwise', () => {
      const parts = (finish: StreamPart): StreamPart[] => [
        { type: 'start', id: 'msg_1', model: 'up', created: 1 },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hello..' },
        { type: 'text-end', id: 't' },
        { type: 'text-start', id: 'r', refusal: true },
        { type: 'text-delta', id: 'r', delta: 'Declined' },
        { type: 'text-delta', id: 'r', delta: '.' },
        { type: 'text-end', id: 'r' },
        finish,
      ];
      const usage = { inputTokens: 1, outputTokens: 1 };
      const refused = run(parts({ type: 'finish', finishReason: 'content_filter', rawFinishReason: 'refusal', usage }));
      assert.deepEqual(
        refused.filter((e) => e.event === 'content_block_start').map((e) => (e.data as { index: number }).index),
        [0],
      );
      assert.ok(!JSON.stringify(refused).includes('Declined'));
      assert.equal((refused.find((e) => e.event === 'message_delta')!.data as { delta: { stop_reason: string } }).delta.stop_reason, 'refusal');
      const stopped = run(parts({ type: 'finish', finishReason: 'stop', usage }));
      const texts = stopped.filter((e) => e.event === 'content_block_delta').map((e) => e.data as { index: number; delta: { text: string } });
      assert.deepEqual(
        texts.map((d) => [d.index, d.delta.text]),
        [
          [0, 'Hello..'],
          [1, 'Declined.'],
        ],
      );
      assert.deepEqual(stopped.map((e) => e.event).slice(-5), [
        'content_block_start',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
    });

    it('emits the Anthropic event sequence with text, parallel tool_use blocks (interleaved fragments) and usage', () => {
      const events = run([
        { type: 'start', id: 'chatcmpl-1', model: 'up', created: 1 },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hel' },
        { type: 'text-delta', id: 't', delta: 'lo' },
        { type: 'text-end', id: 't' },
        { type: 'tool-call-start', id: 'a', callId: 'call_a', name: 'f' },
        { type: 'tool-call-delta', id: 'a', delta: '{"a"' },
        { type: 'tool-call-start', id: 'b', callId: 'call_b', name: 'g' },
        { type: 'tool-call-delta', id: 'b', delta: '{"b":2}' },
        { type: 'tool-call-delta', id: 'a', delta: ':1}' },
        { type: 'tool-call-end', id: 'a' },
        { type: 'tool-call-end', id: 'b' },
        { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 7, outputTokens: 3 } },
      ]);
      assert.deepEqual(
        events.map((e) => e.event),
        [
          'message_start',
          'content_block_start',
          'content_block_delta',
          'content_block_delta',
          'content_block_stop',
          'content_block_start',
          'content_block_delta',
          'content_block_start',
          'content_block_delta',
          'content_block_delta',
          'content_block_stop',
          'content_block_stop',
          'message_delta',
          'message_stop',
        ],
      );
      assert.deepEqual(events[0]?.data, {
        type: 'message_start',
        message: {
          id: 'msg_chatcmpl-1',
          type: 'message',
          role: 'assistant',
          model: 'claude-x',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, output_tokens: 0 },
        },
      });
      assert.deepEqual(events[5]?.data, { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_a', name: 'f', input: {} } });
      assert.deepEqual(events[9]?.data, { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: ':1}' } });
      assert.deepEqual(events[7]?.data['content_block'], { type: 'tool_use', id: 'call_b', name: 'g', input: {} });
      const inputs = new Map<number, string>();
      for (const e of events) {
        const delta = e.data['delta'] as { type?: string; partial_json?: string } | undefined;
        if (delta?.type === 'input_json_delta') inputs.set(e.data['index'] as number, (inputs.get(e.data['index'] as number) ?? '') + delta.partial_json);
      }
      assert.deepEqual(JSON.parse(inputs.get(1) ?? ''), { a: 1 });
      assert.deepEqual(JSON.parse(inputs.get(2) ?? ''), { b: 2 });
      assert.deepEqual(events[12]?.data, {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { input_tokens: 7, output_tokens: 3 },
      });
    });

    it('thinking blocks close with a signature_delta; redacted thinking and native Messages blocks come whole; other natives are skipped', () => {
      const serverToolUse = { type: 'server_tool_use', id: 'srv_1', name: 'web_search', input: { query: 'x' } };
      const events = run([
        { type: 'start', id: 'msg_1', model: 'up', created: 1 },
        { type: 'reasoning-start', id: 'r' },
        { type: 'reasoning-delta', id: 'r', delta: 'Let me think' },
        { type: 'reasoning-end', id: 'r', signature: 'EqQB' },
        { type: 'reasoning-start', id: 'x', redactedData: 'opaque' },
        { type: 'reasoning-end', id: 'x' },
        { type: 'native', format: 'messages', value: serverToolUse },
        { type: 'native', format: 'chat', value: { type: 'input_audio' } },
        {
          type: 'finish',
          finishReason: 'stop',
          rawFinishReason: 'pause_turn',
          usage: { inputTokens: 30, outputTokens: 9, cachedInputTokens: 10, cacheCreationInputTokens: 5 },
        },
      ]);
      assert.deepEqual(
        events.map((e) => e.data),
        [
          (events[0] as MessageEvent).data,
          { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me think' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQB' } },
          { type: 'content_block_stop', index: 0 },
          { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'opaque' } },
          { type: 'content_block_stop', index: 1 },
          { type: 'content_block_start', index: 2, content_block: serverToolUse },
          { type: 'content_block_stop', index: 2 },
          {
            type: 'message_delta',
            delta: { stop_reason: 'pause_turn', stop_sequence: null },
            usage: { input_tokens: 15, output_tokens: 9, cache_read_input_tokens: 10, cache_creation_input_tokens: 5 },
          },
          { type: 'message_stop' },
        ],
      );
      assert.equal((events[0]?.data['message'] as { id: string }).id, 'msg_1');
    });

    it('lets an upstream error propagate after the events already produced', async () => {
      const seen: string[] = [];
      await assert.rejects(async () => {
        for await (const e of canonicalToMessageEvents(
          streamOf<StreamPart>([
            { type: 'start', id: 'x', model: 'm', created: 1 },
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'partial' },
            { type: 'error', error: new Error('upstream broke') },
          ]),
          'm',
        )) {
          seen.push(e.event);
        }
      }, /upstream broke/);
      assert.deepEqual(seen, ['message_start', 'content_block_start', 'content_block_delta']);
    });

    it('opens and closes the message on a reply with no content, with end_turn; a stream cut before finish is an error', async () => {
      const events = run([
        { type: 'start', id: 'x', model: 'm', created: 1 },
        { type: 'finish', finishReason: 'stop', usage: { inputTokens: 0, outputTokens: 0 } },
      ]);
      assert.deepEqual(
        events.map((e) => e.event),
        ['message_start', 'message_delta', 'message_stop'],
      );
      assert.equal((events[1]?.data['delta'] as { stop_reason: string }).stop_reason, 'end_turn');
      await assert.rejects(
        collect(
          canonicalToMessageEvents(
            streamOf<StreamPart>([
              { type: 'start', id: 'x', model: 'm', created: 1 },
              { type: 'text-start', id: 't' },
            ]),
            'm',
          ),
        ),
        (err: unknown) => (err as { status: number }).status === 502 && /ended before the reply was complete/.test((err as Error).message),
      );
    });

    it('closes blocks the source left open before message_delta', () => {
      const events = run([
        { type: 'start', id: 'x', model: 'm', created: 1 },
        { type: 'tool-call-start', id: 'a', callId: 'c', name: 'f' },
        { type: 'tool-call-delta', id: 'a', delta: '{}' },
        { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 1, outputTokens: 1 } },
      ]);
      assert.deepEqual(
        events.map((e) => e.event),
        ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'],
      );
    });

    it('the Anthropic SDK assembles from the events the message canonicalToMessage answers for the same reply', async () => {
      const full = reply({
        id: 'msg_01Stream',
        content: [
          { type: 'reasoning', text: 'Let me think', signature: 'EqQB' },
          { type: 'text', text: 'Okay, let me check.' },
          { type: 'tool-call', id: 'toolu_01Weather', name: 'get_weather', arguments: '{"location": "San Francisco, CA"}' },
          { type: 'native', format: 'messages', value: { type: 'server_tool_use', id: 'srv_1', name: 'web_search', input: { query: 'x' } } },
        ],
        finishReason: 'tool_calls',
        usage: { inputTokens: 482, outputTokens: 89, cachedInputTokens: 10 },
      });
      const events = await collect(canonicalToMessageEvents(streamOf(responseToParts(full, (t) => t.match(/.{1,5}/gs) ?? [])), 'claude-x'));
      const assembled = (await anthropicFinalMessage(events)) as unknown as Record<string, unknown>;
      const expected = canonicalToMessage(full, 'claude-x');
      for (const key of ['id', 'type', 'role', 'model', 'content', 'stop_reason', 'stop_sequence'] as const)
        assert.deepEqual(assembled[key], expected[key], key);
      const usage = assembled['usage'] as Record<string, unknown>;
      assert.equal(usage['output_tokens'], 89);
      assert.equal(usage['input_tokens'], 472);
      assert.equal(usage['cache_read_input_tokens'], 10);
    });
  });
});
