// The run engine's pure parts: input acceptance, prompt rendering, verdict parsing, items to chat history.
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/http/errors';
import { acceptInputs, renderPrompt } from '../../src/runs/inputs';
import { itemsToMessages, runResult } from '../../src/runs/items';
import { parseVerdict } from '../../src/runs/judge';
import type { ModelResponse } from '../../src/canonical/model';
import type { ConversationItemRecord } from '../../src/store/types';

const labels = [
  { label: 'Invoice', required: true },
  { label: 'Notes', required: false },
];

function completion(content: string | null): Pick<ModelResponse, 'content'> {
  return { content: content === null ? [] : [{ type: 'text', text: content }] };
}

describe('run inputs and prompts', () => {
  it('keeps known labels (first of duplicates), drops unknown ones, names one missing label in the singular', () => {
    assert.deepEqual(
      acceptInputs(labels, [
        { name: 'Invoice', value: '1' },
        { name: 'Invoice', value: '2' },
        { name: 'Other', value: 'x' },
      ]),
      [{ name: 'Invoice', value: '1' }],
    );
    assert.throws(
      () => acceptInputs(labels, [{ name: 'Notes', value: 'n' }]),
      (err: unknown) => err instanceof GatewayError && err.status === 422 && err.message === "Missing required input: 'Invoice'.",
    );
  });

  it('replaces {{Label}} (spaces allowed), empties a known label not given, leaves unknown placeholders', () => {
    assert.equal(
      renderPrompt('Check {{Invoice}} / {{ Notes }} / {{Nope}} / {{invoice}}', [{ name: 'Invoice', value: 'INV-7' }], labels),
      'Check INV-7 /  / {{Nope}} / {{invoice}}',
    );
  });
});

describe('step verdict parsing', () => {
  it('accepts the step_verdict shape and gives unknown for anything else', () => {
    assert.deepEqual(parseVerdict(completion('{"verdict":"fail","explanation":"no"}')), { result: 'fail', explanation: 'no' });
    assert.deepEqual(parseVerdict(completion('{"verdict":"unknown","explanation":"?"}')), { result: 'unknown', explanation: '?' });
    for (const bad of ['pass', '{"verdict":"maybe","explanation":"x"}', '{"verdict":"pass"}', '[]', null]) {
      assert.equal(parseVerdict(completion(bad)).result, 'unknown', String(bad));
    }
  });
});

describe('conversation items', () => {
  const item = (type: string, role: string | null, data: Record<string, unknown>): ConversationItemRecord => ({
    id: 'i',
    conversationId: 'c',
    position: 0,
    type,
    role,
    data,
    status: 'completed',
    idempotencyKey: null,
    responseId: null,
    createdAt: '',
  });

  it('become canonical history with function calls folded into the assistant turn and outputs into one tool turn', () => {
    assert.deepEqual(
      itemsToMessages([
        item('message', 'user', { content: [{ type: 'input_text', text: 'hi' }] }),
        item('message', 'assistant', { content: [{ type: 'output_text', text: 'let me look', annotations: [] }] }),
        item('function_call', null, { call_id: 'call_1', name: 'lookup', arguments: '{}' }),
        item('function_call', null, { call_id: 'call_2', name: 'fetch', arguments: '{"a":1}' }),
        item('function_call_output', null, { call_id: 'call_1', output: 'none' }),
        item('function_call_output', null, { call_id: 'call_2', output: 'page' }),
        item('message', 'assistant', { content: [{ type: 'output_text', text: 'done', annotations: [] }] }),
      ]),
      [
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'let me look' },
            { type: 'tool-call', id: 'call_1', name: 'lookup', arguments: '{}' },
            { type: 'tool-call', id: 'call_2', name: 'fetch', arguments: '{"a":1}' },
          ],
        },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', callId: 'call_1', output: 'none' },
            { type: 'tool-result', callId: 'call_2', output: 'page' },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
      ],
    );
  });

  it('result: the JSON-encoded assistant message, null without text', () => {
    assert.deepEqual(JSON.parse(runResult('ok')!), { role: 'assistant', parts: [{ type: 'text', text: 'ok' }] });
    assert.equal(runResult(''), null);
    assert.equal(runResult(null), null);
  });
});
