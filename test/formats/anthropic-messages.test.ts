import assert from 'node:assert/strict';
import { chatChunksToMessageEvents, chatCompletionToMessage, messagesRequestToChat } from '../../src/formats/anthropic-messages';
import { convertToAnthropicMessages } from '../../src/providers/anthropic/convert-to-anthropic-messages';
import type { ChatCompletion, ChatCompletionChunk } from '../../src/providers/types';

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

async function* from<T>(items: T[]): AsyncIterable<T> {
  for (const item of items) yield item;
}

const chunk = (
  delta: ChatCompletionChunk['choices'][number]['delta'],
  finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null,
): ChatCompletionChunk => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe('formats/anthropic-messages', () => {
  describe('messagesRequestToChat', () => {
    it('maps system, multimodal user blocks, tool_use and tool_result turns and the sampling fields', () => {
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
      const chat = messagesRequestToChat(body);
      assert.deepEqual(body, frozen, 'the caller body is not mutated');
      assert.deepEqual(chat, {
        model: 'claude-x',
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look:' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            ],
          },
          {
            role: 'assistant',
            content: 'Checking.',
            tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
          { role: 'user', content: 'And tomorrow?' },
        ],
        max_tokens: 300,
        stop: ['END'],
        temperature: 0.2,
        top_p: 0.9,
        top_k: 5,
        stream: true,
        tools: [
          {
            type: 'function',
            function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, description: 'Weather' },
          },
        ],
        tool_choice: 'required',
        parallel_tool_calls: false,
        user: 'u-1',
      });
    });

    it('maps tool_choice tool/auto/none', () => {
      const base = { model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] };
      assert.deepEqual(messagesRequestToChat({ ...base, tool_choice: { type: 'tool', name: 'f' } })['tool_choice'], {
        type: 'function',
        function: { name: 'f' },
      });
      assert.equal(messagesRequestToChat({ ...base, tool_choice: { type: 'auto' } })['tool_choice'], 'auto');
      assert.equal(messagesRequestToChat({ ...base, tool_choice: { type: 'none' } })['tool_choice'], 'none');
    });

    it('rejects a system role inside messages with a clear 400', () => {
      assert.throws(
        () => messagesRequestToChat({ model: 'm', max_tokens: 1, messages: [{ role: 'system', content: 'x' }] }),
        (err: unknown) => (err as { status: number; param: string }).status === 400 && (err as { param: string }).param === 'messages[0].role',
      );
    });

    it('round-trips through the Anthropic provider conversion without losing thinking, errors or documents', () => {
      const original = {
        model: 'm',
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [
          {
            role: 'user',
            content: [
              { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' } },
              { type: 'text', text: 'Sum up' },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hmm', signature: 'sig' },
              { type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'boom', is_error: true }] },
        ],
      };
      const { body } = convertToAnthropicMessages(messagesRequestToChat(original));
      assert.deepEqual(body.messages, original.messages);
      assert.deepEqual(body.thinking, original.thinking);
      assert.equal(body.max_tokens, 2048);
    });
  });

  describe('chatCompletionToMessage', () => {
    it('maps text, tool calls, finish reason and usage', () => {
      const completion: ChatCompletion = {
        id: 'chatcmpl-9',
        object: 'chat.completion',
        created: 1,
        model: 'gpt',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Let me check.',
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, prompt_tokens_details: { cached_tokens: 2 } },
      };
      assert.deepEqual(chatCompletionToMessage(completion, 'my-model'), {
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
    });

    it('maps length to max_tokens and an empty reply to one empty text block', () => {
      const completion: ChatCompletion = {
        id: 'msg_abc',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'length' }],
      };
      const message = chatCompletionToMessage(completion, 'm');
      assert.equal(message.id, 'msg_abc');
      assert.equal(message.stop_reason, 'max_tokens');
      assert.deepEqual(message.content, [{ type: 'text', text: '' }]);
      assert.deepEqual(message.usage, { input_tokens: 0, output_tokens: 0 });
    });
  });

  describe('chatChunksToMessageEvents', () => {
    it('emits the Anthropic event sequence with text, parallel tool_use blocks (interleaved fragments) and usage', async () => {
      const chunks: ChatCompletionChunk[] = [
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: 'Hel' }),
        chunk({ content: 'lo' }),
        chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] }),
        chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{"b":2}' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
        chunk({}, 'tool_calls'),
        { ...chunk({}), choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } },
      ];
      const events = await collect(chatChunksToMessageEvents(from(chunks), 'claude-x'));
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
      assert.equal((events[0]?.data['message'] as { model: string }).model, 'claude-x');
      assert.deepEqual(events[5]?.data, { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_a', name: 'f', input: {} } });
      assert.deepEqual(events[9]?.data, { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: ':1}' } });
      assert.deepEqual(events[7]?.data['content_block'], { type: 'tool_use', id: 'call_b', name: 'g', input: {} });
      // Reassemble the way a client does: every tool's input is complete.
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

    it('lets an upstream error propagate after the events already produced', async () => {
      async function* failing(): AsyncIterable<ChatCompletionChunk> {
        yield chunk({ content: 'partial' });
        throw new Error('upstream broke');
      }
      const seen: string[] = [];
      await assert.rejects(async () => {
        for await (const e of chatChunksToMessageEvents(failing(), 'm')) seen.push(e.event);
      }, /upstream broke/);
      assert.deepEqual(seen, ['message_start', 'content_block_start', 'content_block_delta']);
    });

    it('still opens and closes the message on an empty stream, with end_turn', async () => {
      const events = await collect(chatChunksToMessageEvents(from([]), 'm'));
      assert.deepEqual(
        events.map((e) => e.event),
        ['message_start', 'message_delta', 'message_stop'],
      );
      assert.equal((events[1]?.data['delta'] as { stop_reason: string }).stop_reason, 'end_turn');
    });
  });
});
