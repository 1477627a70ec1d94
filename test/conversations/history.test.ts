// How a stored conversation is sent to the model (src/conversations/history.ts).
import assert from 'node:assert/strict';
import { historyInput, statefulInput } from '../../src/conversations/history';
import type { ConversationItemRecord } from '../../src/store/types';

function record(position: number, type: string, role: string | null, data: Record<string, unknown>): ConversationItemRecord {
  return {
    id: `it_${position}`,
    conversationId: 'conv_1',
    position,
    type,
    role,
    data,
    status: 'completed',
    idempotencyKey: null,
    responseId: 'resp_1',
    createdAt: '2026-01-01T00:00:00.000Z',
  };
}

const summary = { text: 'They talked about tea.', through: 4, itemId: 'cmp_1' };

describe('conversation history as model input', () => {
  it('stored items lose their ids, reasoning and compaction items; images lose detail, file parts are dropped', () => {
    const input = historyInput({ summary: null }, [
      record(1, 'message', 'user', {
        content: [
          { type: 'input_text', text: 'look' },
          { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'high' },
          { type: 'input_file', file_id: 'file_1' },
        ],
      }),
      record(2, 'reasoning', null, { summary: [] }),
      record(3, 'function_call', null, { call_id: 'c1', name: 'f', arguments: '{}' }),
      record(4, 'function_call_output', null, { call_id: 'c1', output: 'ok' }),
      record(5, 'message', 'assistant', { content: [{ type: 'output_text', text: 'done' }] }),
      record(6, 'compaction', null, { summary: 'x', through: 1 }),
    ]);
    assert.deepEqual(input, [
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'look' },
          { type: 'input_image', image_url: 'https://example.com/a.png' },
        ],
      },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'ok' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] },
    ]);
  });

  it('the summary comes first: as a developer message before a user turn, as the opening user message when the kept history starts with the model’s side', () => {
    const fromUser = historyInput({ summary }, [record(5, 'message', 'user', { content: [{ type: 'input_text', text: 'more tea?' }] })]);
    assert.equal(fromUser[0]!['role'], 'developer');
    assert.match(String(fromUser[0]!['content']), /They talked about tea/);
    const fromAssistant = historyInput({ summary }, [record(5, 'message', 'assistant', { content: [{ type: 'output_text', text: 'Yes.' }] })]);
    assert.equal(fromAssistant[0]!['role'], 'user');
    const fromOutput = historyInput({ summary }, [record(5, 'function_call_output', null, { call_id: 'c1', output: 'ok' })]);
    assert.equal(fromOutput[0]!['role'], 'user');
  });

  it('the new turn: a string is a user message; item_reference to history is dropped, to another conversation item resolved', () => {
    assert.deepEqual(statefulInput('hi', new Map(), new Set()), [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }]);
    const resolved = new Map([['it_9', { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'old' }] }]]);
    const turn = statefulInput(
      [
        { type: 'item_reference', id: 'it_1' },
        { type: 'item_reference', id: 'it_9' },
        { id: 'msg_x', type: 'message', role: 'user', content: 'now', status: 'completed' },
      ],
      resolved,
      new Set(['it_1']),
    );
    assert.deepEqual(turn, [
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'old' }] },
      { type: 'message', role: 'user', content: 'now' },
    ]);
  });
});
