// The stateful stream translator on its own: edge cases that are awkward to script through a server.
import assert from 'node:assert/strict';
import { AnthropicStreamToChunks } from '../../src/providers/anthropic/anthropic-stream-to-chunks';
import type { AnthropicStreamEvent } from '../../src/providers/anthropic/anthropic-wire-types';
import type { ChatCompletionChunk } from '../../src/providers/types';
import { reassemble } from '../fixtures/upstreams/anthropic-events';

const start: AnthropicStreamEvent = {
  type: 'message_start',
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'c',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 1 },
  },
};

function run(
  events: AnthropicStreamEvent[],
  context: ConstructorParameters<typeof AnthropicStreamToChunks>[0] = { model: 'm', jsonTool: null },
): ChatCompletionChunk[] {
  const translator = new AnthropicStreamToChunks(context);
  const out: ChatCompletionChunk[] = [];
  for (const event of events) out.push(...translator.push(event));
  out.push(...translator.finish());
  return out;
}

describe('providers/anthropic stream translator', () => {
  it('maps thinking deltas to reasoning_content and ignores pings and signature deltas', () => {
    const chunks = run([
      start,
      { type: 'ping' },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me think' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQB...' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: '42' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ]);
    const reasoning = chunks.map((c) => c.choices[0]?.delta['reasoning_content']).filter((r) => r !== undefined);
    assert.deepEqual(reasoning, ['Let me think']);
    const result = reassemble(chunks);
    assert.equal(result.content, '42');
    assert.equal(result.finish, 'length');
    assert.deepEqual(result.usage, { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 });
  });

  it('flushes a tool block that never got content_block_stop when the stream ends after message_delta', () => {
    const chunks = run([
      start,
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } } },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 4 } },
    ]);
    assert.deepEqual(reassemble(chunks).toolCalls, [{ id: 't1', name: 'f', arguments: '{"a":1}' }]);
    assert.equal(reassemble(chunks).finish, 'tool_calls');
  });

  it('in forced JSON mode drops stray text so the content stays pure JSON', () => {
    const chunks = run(
      [
        start,
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Here you go: ' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '```json' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'j', name: 'json_response', input: {} } },
        { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"x":1}' } },
        { type: 'content_block_stop', index: 1 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use' } },
        { type: 'message_stop' },
      ],
      { model: 'm', jsonTool: { name: 'json_response', wrappedKey: null, forced: true } },
    );
    assert.equal(reassemble(chunks).content, '{"x":1}');
    assert.equal(reassemble(chunks).finish, 'stop');
  });

  it('refuses to finish a stream that never said why it stopped', () => {
    const translator = new AnthropicStreamToChunks({ model: 'm', jsonTool: null });
    translator.push(start);
    assert.throws(() => translator.finish(), /ended before the message was complete/);
  });
});
