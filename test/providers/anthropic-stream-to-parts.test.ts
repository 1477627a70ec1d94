// The stateful stream translator on its own: edge cases that are awkward to script through a server.
import assert from 'node:assert/strict';
import type { StreamPart } from '../../src/canonical/model';
import { GatewayError } from '../../src/http/errors';
import { AnthropicStreamToParts, type StreamPartsContext } from '../../src/providers/anthropic/anthropic-stream-to-parts';
import type { AnthropicStreamEvent } from '../../src/providers/anthropic/anthropic-wire-types';
import { streamedText } from '../helpers/canonical';

const start: AnthropicStreamEvent = {
  type: 'message_start',
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-up',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 1 },
  },
};

function run(events: AnthropicStreamEvent[], context: StreamPartsContext = { model: 'm', jsonTool: null, now: () => 1_700_000_000_000 }): StreamPart[] {
  const translator = new AnthropicStreamToParts(context);
  const out: StreamPart[] = [];
  for (const event of events) out.push(...translator.push(event));
  translator.end();
  return out;
}

describe('providers/anthropic stream translator (canonical parts)', () => {
  it('maps thinking deltas to reasoning (signature on reasoning-end), ignores pings, keeps text and a max_tokens finish', () => {
    const parts = run([
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
    assert.deepEqual(parts, [
      { type: 'start', id: 'msg_1', model: 'claude-up', created: 1_700_000_000 },
      { type: 'reasoning-start', id: 'b0' },
      { type: 'reasoning-delta', id: 'b0', delta: 'Let me think' },
      { type: 'reasoning-end', id: 'b0', signature: 'EqQB...' },
      { type: 'text-start', id: 'b1' },
      { type: 'text-delta', id: 'b1', delta: '42' },
      { type: 'text-end', id: 'b1' },
      { type: 'finish', finishReason: 'length', rawFinishReason: 'max_tokens', usage: { inputTokens: 3, outputTokens: 9 } },
    ]);
  });

  it('closes a tool block that never got content_block_stop at message_stop, with the input it started with', () => {
    const parts = run([
      start,
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } } },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 4 } },
      { type: 'message_stop' },
    ]);
    assert.deepEqual(parts.slice(1), [
      { type: 'tool-call-start', id: 'b0', callId: 't1', name: 'f' },
      { type: 'tool-call-delta', id: 'b0', delta: '{"a":1}' },
      { type: 'tool-call-end', id: 'b0' },
      { type: 'finish', finishReason: 'tool_calls', rawFinishReason: 'tool_use', usage: { inputTokens: 3, outputTokens: 4 } },
    ]);
  });

  it('in forced JSON mode drops stray text so the reply stays pure JSON, and reports a plain stop', () => {
    const parts = run(
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
    assert.equal(streamedText(parts), '{"x":1}');
    assert.equal(parts.filter((p) => p.type === 'text-start').length, 1);
    assert.deepEqual(parts.at(-1), { type: 'finish', finishReason: 'stop', rawFinishReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 1 } });
  });

  it('gives the JSON tool’s input as text when it came whole in content_block_start (no deltas)', () => {
    const parts = run(
      [
        start,
        { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'j', name: 'out', input: { value: [1, 2] } } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use' } },
        { type: 'message_stop' },
      ],
      { model: 'm', jsonTool: { name: 'out', wrappedKey: 'value', forced: true } },
    );
    assert.deepEqual(parts.slice(1, 4), [
      { type: 'text-start', id: 'b0' },
      { type: 'text-delta', id: 'b0', delta: '[1,2]' },
      { type: 'text-end', id: 'b0' },
    ]);
  });

  it('refuses to finish a stream that never reached message_stop', () => {
    const translator = new AnthropicStreamToParts({ model: 'm', jsonTool: null });
    translator.push(start);
    translator.push({ type: 'message_delta', delta: { stop_reason: 'end_turn' } });
    assert.throws(
      () => translator.end(),
      (err: unknown) => err instanceof GatewayError && err.code === 'upstream_error' && /ended before the message was complete/.test(err.message),
    );
  });

  it('maps an error event to a thrown GatewayError (overloaded → server_error type, others upstream_error)', () => {
    for (const [type, expected] of [
      ['overloaded_error', 'server_error'],
      ['api_error', 'upstream_error'],
    ] as const) {
      const translator = new AnthropicStreamToParts({ model: 'm', jsonTool: null });
      translator.push(start);
      assert.throws(
        () => translator.push({ type: 'error', error: { type, message: 'boom' } }),
        (err: unknown) => err instanceof GatewayError && err.code === 'upstream_error' && err.type === expected && err.message.includes(`(${type}): boom`),
      );
    }
  });

  it('survives a stream without message_start: start is synthesized with the requested model', () => {
    const parts = run(
      [
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'hi' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'end_turn' } },
        { type: 'message_stop' },
      ],
      { model: 'claude-requested', jsonTool: null, now: () => 5_000 },
    );
    assert.deepEqual(parts[0], { type: 'start', id: 'msg_5', model: 'claude-requested', created: 5 });
    assert.equal(streamedText(parts), 'hi');
    assert.deepEqual(parts.at(-1), { type: 'finish', finishReason: 'stop', rawFinishReason: 'end_turn', usage: { inputTokens: 0, outputTokens: 0 } });
  });

  it('ignores events after message_stop', () => {
    const translator = new AnthropicStreamToParts({ model: 'm', jsonTool: null });
    translator.push(start);
    translator.push({ type: 'message_delta', delta: { stop_reason: 'end_turn' } });
    assert.equal(translator.push({ type: 'message_stop' }).at(-1)?.type, 'finish');
    assert.deepEqual(translator.push({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'late' } }), []);
    assert.deepEqual(translator.push({ type: 'message_stop' }), []);
  });
});
