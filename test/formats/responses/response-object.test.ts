import assert from 'node:assert/strict';
import type { ModelResponse } from '../../../src/canonical/model';
import { canonicalToResponseObject, type ResponseObject } from '../../../src/formats/responses';
import { responseResourceErrors } from './open-responses-schemas';

const NOW_MS = 1_750_000_123_456;

function reply(overrides: Partial<ModelResponse> = {}): ModelResponse {
  return {
    id: 'upstream-1',
    model: 'claude-sonnet-4',
    created: 1_750_000_000,
    content: [{ type: 'text', text: 'Hello there.' }],
    finishReason: 'stop',
    usage: { inputTokens: 120, outputTokens: 30, cachedInputTokens: 100, reasoningTokens: 12 },
    ...overrides,
  };
}

function assertValid(response: ResponseObject): void {
  assert.deepEqual(responseResourceErrors(response), [], JSON.stringify(response, null, 1).slice(0, 1500));
}

describe('formats/responses: canonicalToResponseObject', () => {
  it('writes every kind of output item, usage, and the request fields every response echoes (defaults where unset)', () => {
    const response = canonicalToResponseObject(
      reply({
        finishReason: 'tool_calls',
        content: [
          { type: 'reasoning', text: 'Think first.', encryptedContent: 'gAAAA-openai' },
          { type: 'text', text: 'Let me check.' },
          { type: 'tool-call', id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
          { type: 'tool-call', id: 'call_2', name: 'weather', arguments: '{"city":"Rome"}', itemId: 'fc_upstream' },
          { type: 'native', format: 'responses', value: { type: 'web_search_call', id: 'ws_1', status: 'completed' } },
          { type: 'native', format: 'messages', value: { type: 'server_tool_use', id: 'srvtoolu_1' } },
        ],
      }),
      { request: { model: 'my-model', input: 'hi' }, id: 'resp_fixed', now: () => NOW_MS },
    );
    const [reasoning, message, call1, call2, native, ...rest] = response.output;
    assert.deepEqual(rest, [], "another format's native part has no Responses item");
    assert.match(reasoning?.id as string, /^rs_[0-9a-f]{32}$/);
    assert.deepEqual(
      { ...reasoning, id: 'x' },
      { id: 'x', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Think first.' }], encrypted_content: 'gAAAA-openai' },
    );
    assert.match(message?.id as string, /^msg_[0-9a-f]{32}$/);
    assert.deepEqual(
      { ...message, id: 'x' },
      {
        id: 'x',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Let me check.', annotations: [], logprobs: [] }],
      },
    );
    assert.match(call1?.id as string, /^fc_[0-9a-f]{32}$/);
    assert.deepEqual(
      { ...call1, id: 'x' },
      { id: 'x', type: 'function_call', status: 'completed', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
    );
    assert.equal(call2?.id, 'fc_upstream');
    assert.deepEqual(native, { type: 'web_search_call', id: 'ws_1', status: 'completed' });

    const { output: _output, ...rest2 } = response;
    assert.deepEqual(rest2, {
      id: 'resp_fixed',
      object: 'response',
      // Made by the gateway now (the upstream's `created` says when the upstream made its reply).
      created_at: Math.floor(NOW_MS / 1000),
      completed_at: Math.floor(NOW_MS / 1000),
      status: 'completed',
      incomplete_details: null,
      error: null,
      model: 'my-model',
      usage: {
        input_tokens: 120,
        input_tokens_details: { cached_tokens: 100 },
        output_tokens: 30,
        output_tokens_details: { reasoning_tokens: 12 },
        total_tokens: 150,
      },
      previous_response_id: null,
      instructions: null,
      tools: [],
      tool_choice: 'auto',
      truncation: 'disabled',
      parallel_tool_calls: true,
      text: { format: { type: 'text' }, verbosity: 'medium' },
      top_p: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      top_logprobs: 0,
      temperature: 1,
      reasoning: { effort: null, summary: null },
      max_output_tokens: null,
      max_tool_calls: null,
      store: false,
      background: false,
      service_tier: 'default',
      metadata: {},
      safety_identifier: null,
      prompt_cache_key: null,
      user: null,
    });
    // The Open Responses ItemField has no web_search_call: check the object without it.
    assertValid({ ...response, output: response.output.filter((item) => item.type !== 'web_search_call') });
  });

  it('echoes the caller request fields as the schema types them', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    const response = canonicalToResponseObject(reply(), {
      request: {
        model: 'my-model',
        input: 'hi',
        instructions: 'Be brief.',
        tools: [
          { type: 'function', name: 'weather', parameters: schema },
          { type: 'function', name: 'strict_one', description: 'd', parameters: schema, strict: true },
        ],
        tool_choice: { type: 'allowed_tools', tools: [{ type: 'function', name: 'weather' }] },
        truncation: 'auto',
        parallel_tool_calls: false,
        text: { format: { type: 'json_schema', name: 'answer', schema }, verbosity: 'low' },
        temperature: 0.2,
        top_p: 0.5,
        top_logprobs: 2,
        reasoning: { effort: 'low', summary: 'concise' },
        max_output_tokens: 500,
        max_tool_calls: 4,
        store: true,
        background: false,
        service_tier: 'flex',
        metadata: { ticket: 'T-1' },
        safety_identifier: 'sid',
        prompt_cache_key: 'pck',
        user: 'u-1',
        previous_response_id: 'resp_prev',
      },
      conversationId: 'conv_1',
      model: 'alias-model',
      createdAt: 1_700_000_000,
    });
    assert.deepEqual(response.tools, [
      { type: 'function', name: 'weather', parameters: schema, description: null, strict: null },
      { type: 'function', name: 'strict_one', description: 'd', parameters: schema, strict: true },
    ]);
    assert.deepEqual(response.tool_choice, { type: 'allowed_tools', tools: [{ type: 'function', name: 'weather' }], mode: 'auto' });
    assert.deepEqual(response.text, { format: { type: 'json_schema', name: 'answer', schema, description: null, strict: false }, verbosity: 'low' });
    assert.deepEqual(response.reasoning, { effort: 'low', summary: 'concise' });
    assert.equal(response.model, 'alias-model');
    assert.equal(response.created_at, 1_700_000_000);
    assert.equal(response.instructions, 'Be brief.');
    assert.equal(response.previous_response_id, 'resp_prev');
    assert.deepEqual(response.conversation, { id: 'conv_1' });
    assert.deepEqual(response.metadata, { ticket: 'T-1' });
    assert.equal(response.store, true);
    assert.equal(response.truncation, 'auto');
    assert.equal(response.parallel_tool_calls, false);
    assert.equal(response.temperature, 0.2);
    assert.equal(response.top_p, 0.5);
    assert.equal(response.top_logprobs, 2);
    assert.equal(response.max_output_tokens, 500);
    assert.equal(response.max_tool_calls, 4);
    assert.equal(response.service_tier, 'flex');
    assert.equal(response.safety_identifier, 'sid');
    assert.equal(response.prompt_cache_key, 'pck');
    assert.equal(response.user, 'u-1');
    assert.match(response.id, /^resp_[0-9a-f]{32}$/);
    assertValid(response);
  });

  it('is incomplete when the reply hit the token limit or a content filter', () => {
    for (const [finishReason, reason] of [
      ['length', 'max_output_tokens'],
      ['content_filter', 'content_filter'],
    ] as const) {
      const response = canonicalToResponseObject(reply({ finishReason }), { request: { model: 'm', input: 'x' } });
      assert.equal(response.status, 'incomplete');
      assert.deepEqual(response.incomplete_details, { reason });
      assert.equal(response.completed_at, null);
      assert.equal(response.error, null);
      assertValid(response);
    }
  });

  it('is incomplete in the message or call generation stopped in (the last item), the items before it completed', () => {
    const content: ModelResponse['content'] = [
      { type: 'text', text: 'Let me check.' },
      { type: 'tool-call', id: 'call_1', name: 'weather', arguments: '{"city":"Par' },
    ];
    for (const finishReason of ['length', 'content_filter'] as const) {
      const response = canonicalToResponseObject(reply({ finishReason, content }), { request: { model: 'm', input: 'x' } });
      assert.deepEqual(
        response.output.map((item) => [item.type, (item as { status?: unknown }).status]),
        [
          ['message', 'completed'],
          ['function_call', 'incomplete'],
        ],
      );
      assertValid(response);
    }
    const cutText = canonicalToResponseObject(reply({ finishReason: 'length' }), { request: { model: 'm', input: 'x' } });
    assert.equal((cutText.output[0] as { status?: unknown }).status, 'incomplete');
    const whole = canonicalToResponseObject(reply({ finishReason: 'stop', content }), { request: { model: 'm', input: 'x' } });
    assert.deepEqual(
      whole.output.map((item) => (item as { status?: unknown }).status),
      ['completed', 'completed'],
    );
  });

  it('is failed, with an error, when the reply finished with an error', () => {
    const response = canonicalToResponseObject(reply({ finishReason: 'error' }), { request: { model: 'm', input: 'x' } });
    assert.equal(response.status, 'failed');
    assert.deepEqual(response.error, { code: 'server_error', message: 'The model stopped with an error before its reply was complete.' });
    assertValid(response);
  });

  it('writes redacted thinking as a reasoning item with no summary and the payload in encrypted_content', () => {
    const response = canonicalToResponseObject(reply({ content: [{ type: 'reasoning', text: '', redactedData: 'opaque' }] }), {
      request: { model: 'm', input: 'x' },
    });
    const [item] = response.output;
    assert.equal(item?.type, 'reasoning');
    assert.deepEqual((item as { summary: unknown }).summary, []);
    assert.match((item as { encrypted_content: string }).encrypted_content, /^agw-reasoning-v1:/);
    assertValid(response);
  });

  it('(the schema check itself rejects a missing required field, a wrong type and an unknown item)', () => {
    const response = canonicalToResponseObject(reply(), { request: { model: 'm', input: 'x' } });
    const { top_p: _topP, ...missing } = response;
    assert.notDeepEqual(responseResourceErrors(missing), []);
    assert.notDeepEqual(responseResourceErrors({ ...response, service_tier: null }), []);
    assert.notDeepEqual(responseResourceErrors({ ...response, output: [{ type: 'message', id: 'm', role: 'assistant', content: [] }] }), []);
  });
});
