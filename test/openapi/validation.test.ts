// The generated validators (AJV standalone code from the document) accept valid traffic, pass unknown
// fields through where the spec says so, and reject invalid requests with a message naming the field.
import assert from 'node:assert/strict';
import { validationError, type GeneratedValidator } from '../../src/http/validation';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const bodies = require('../../src/generated/body-validators.js') as Record<string, GeneratedValidator>;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const params = require('../../src/generated/param-validators.js') as Record<string, GeneratedValidator>;

function check(table: Record<string, GeneratedValidator>, name: string, data: unknown, where: 'body' | 'query' | 'path' = 'body') {
  const validate = table[name];
  assert.ok(validate, `validator ${name} exists`);
  if (validate(data)) return null;
  const err = validationError(where, validate.errors);
  return { message: err.message, param: err.param ?? null, status: err.status };
}

function rejects(table: Record<string, GeneratedValidator>, name: string, data: unknown, param: string, where: 'body' | 'query' | 'path' = 'body') {
  const result = check(table, name, data, where);
  assert.ok(result, `${name} rejects ${JSON.stringify(data)}`);
  assert.equal(result.status, 400);
  assert.equal(result.param, param, result.message);
  assert.ok(result.message.includes(`'${param}'`), result.message);
}

const accepts = (table: Record<string, GeneratedValidator>, name: string, data: unknown) => assert.equal(check(table, name, data), null);

describe('generated request validation', () => {
  describe('POST /v1/agents/runs', () => {
    it('accepts agentId with or without inputs', () => {
      accepts(bodies, 'createRun_body', { agentId: '0b6c7f6e-3f55-4c1b-8a3c-0b1d2e3f4a5b' });
      accepts(bodies, 'createRun_body', { agentId: 'a', inputs: [{ name: 'topic', value: 'x' }] });
    });
    it('names agentId when missing and the malformed input entry', () => {
      rejects(bodies, 'createRun_body', { inputs: {} }, 'agentId');
      rejects(bodies, 'createRun_body', { agentId: 'a', inputs: [{ name: 'topic' }] }, 'inputs[0].value');
      rejects(bodies, 'createRun_body', { agentId: 'a', inputs: [{ name: 'topic', value: 3 }] }, 'inputs[0].value');
      rejects(bodies, 'createRun_body', { agentId: 'a', inputs: 'topic=x' }, 'inputs');
    });
    it('rejects unknown top-level fields (a malformed body is a 400)', () => {
      rejects(bodies, 'createRun_body', { agentId: 'a', agent: 'b' }, 'agent');
    });
  });

  describe('POST /v1/chat/completions', () => {
    const base = { model: 'demo', messages: [{ role: 'user', content: 'hi' }] };
    it('passes unknown fields and multimodal content through', () => {
      accepts(bodies, 'createChatCompletion_body', {
        ...base,
        some_future_field: { nested: true },
        messages: [
          { role: 'developer', content: 'be brief' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hi' },
              { type: 'image_url', image_url: { url: 'https://x/y.png' } },
            ],
          },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: '42' },
        ],
        tool_choice: { type: 'function', function: { name: 'f' } },
        response_format: { type: 'json_schema', json_schema: { name: 's', schema: {} } },
        stop: ['\n'],
        logprobs: true,
      });
    });
    it('names messages when empty or not an array', () => {
      rejects(bodies, 'createChatCompletion_body', { model: 'demo', messages: [] }, 'messages');
      rejects(bodies, 'createChatCompletion_body', { model: 'demo', messages: 'hi' }, 'messages');
      rejects(bodies, 'createChatCompletion_body', { messages: base.messages }, 'model');
    });
    it('checks roles and requires tool_call_id on tool messages', () => {
      rejects(bodies, 'createChatCompletion_body', { model: 'demo', messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role');
      rejects(bodies, 'createChatCompletion_body', { model: 'demo', messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id');
      rejects(bodies, 'createChatCompletion_body', { model: 'demo', messages: [{ role: 'tool', tool_call_id: '', content: 'x' }] }, 'messages[0].tool_call_id');
    });
    it('refuses the svc opt-in block, naming it', () => {
      rejects(bodies, 'createChatCompletion_body', { ...base, svc: { system_prompt: 'agent_default' } }, 'svc');
    });
    it('types the listed optional fields', () => {
      rejects(bodies, 'createChatCompletion_body', { ...base, stream: 'yes' }, 'stream');
      rejects(bodies, 'createChatCompletion_body', { ...base, max_tokens: 1.5 }, 'max_tokens');
      rejects(bodies, 'createChatCompletion_body', { ...base, tool_choice: 'sometimes' }, 'tool_choice');
    });
  });

  describe('POST /v1/completions and POST /v1/messages', () => {
    it('accepts the legacy completion shape and requires a prompt', () => {
      accepts(bodies, 'createCompletion_body', { model: 'demo', prompt: ['a', 'b'], max_tokens: 5, extra: 1 });
      rejects(bodies, 'createCompletion_body', { model: 'demo' }, 'prompt');
    });
    it('accepts an Anthropic request with blocks, tools and unknown fields', () => {
      accepts(bodies, 'createMessage_body', {
        model: 'claude',
        max_tokens: 100,
        system: [{ type: 'text', text: 'be brief' }],
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok' }] },
        ],
        tools: [{ name: 'f', input_schema: { type: 'object' } }],
        tool_choice: { type: 'auto' },
        container: 'x',
      });
    });
    it('names max_tokens, a bad role and the svc block', () => {
      const messages = [{ role: 'user', content: 'hi' }];
      rejects(bodies, 'createMessage_body', { model: 'claude', messages }, 'max_tokens');
      rejects(bodies, 'createMessage_body', { model: 'claude', max_tokens: 1, messages: [{ role: 'system', content: 'x' }] }, 'messages[0].role');
      rejects(bodies, 'createMessage_body', { model: 'claude', max_tokens: 1, messages, svc: {} }, 'svc');
    });
  });

  describe('POST /v1/responses', () => {
    const body = (extra: Record<string, unknown>) => ({ model: 'demo', input: 'hi', ...extra });

    it('accepts string input, item arrays, unknown item types and the svc block', () => {
      accepts(bodies, 'createResponse_body', { model: 'demo', input: 'hi', svc: { system_prompt: 'agent_default' }, tools: [{ type: 'svc_tools' }] });
      accepts(bodies, 'createResponse_body', {
        model: 'agent/0b6c7f6e-3f55-4c1b-8a3c-0b1d2e3f4a5b',
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
          { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c', output: 'ok' },
          { type: 'item_reference', id: 'msg_1' },
        ],
        future: true,
      });
    });

    it('accepts the histories stock SDKs send back (OpenAI SDK / Agents SDK, Vercel AI SDK, LangChain)', () => {
      accepts(bodies, 'createResponse_body', {
        model: 'demo',
        input: [
          { role: 'developer', content: 'Be brief.' },
          { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'Use metric units.' }] },
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'What is in these?' },
              { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' },
              { type: 'input_image', image_url: 'https://example.com/a.png' },
              { type: 'input_image', file_id: 'file-abc' },
              { type: 'input_file', filename: 'notes.txt', file_data: 'data:text/plain;base64,aGVsbG8=' },
              { type: 'input_file', file_url: 'https://example.com/a.pdf' },
              { type: 'input_file', file_id: 'file-def' },
            ],
          },
          { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Thinking.' }], encrypted_content: null },
          {
            type: 'message',
            id: 'msg_1',
            role: 'assistant',
            status: 'completed',
            content: [
              { type: 'output_text', text: 'A cat.', annotations: [], logprobs: [] },
              { type: 'refusal', refusal: 'Not that part.' },
            ],
          },
          { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
          { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_text', text: '18 C' }] },
          { id: 'msg_0' },
          { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
          { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] },
        ],
      });
    });

    it('types every optional field of the spec table, each in every form it takes', () => {
      accepts(
        bodies,
        'createResponse_body',
        body({
          instructions: 'Be brief.',
          tools: [
            { type: 'function', name: 'get_weather', description: 'Weather.', parameters: { type: 'object', properties: {} }, strict: true },
            { type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com', require_approval: 'never', allowed_tools: ['search'] },
            { type: 'svc_web_search' },
            { type: 'svc_tools' },
            { type: 'svc_not_in_the_catalog', forwarded: 'verbatim' },
            { type: 'web_search_preview', search_context_size: 'low' },
          ],
          tool_choice: {
            type: 'allowed_tools',
            mode: 'required',
            tools: [
              { type: 'function', name: 'get_weather' },
              { type: 'mcp', server_label: 'docs' },
            ],
          },
          stream: true,
          stream_options: { include_obfuscation: false },
          store: true,
          previous_response_id: 'resp_1',
          parallel_tool_calls: false,
          prompt_cache_key: 'k',
          reasoning: { effort: 'minimal', summary: 'auto' },
          text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true }, verbosity: 'low' },
          include: ['reasoning.encrypted_content', 'message.output_text.logprobs'],
          truncation: 'auto',
          background: false,
          service_tier: 'flex',
          max_output_tokens: 256,
          temperature: 0.2,
          top_p: 0.9,
          n: 1,
          stop: ['\n\n'],
          metadata: { ticket: 'T-1' },
          svc: { system_prompt: 'off' },
        }),
      );
      for (const tool_choice of [
        'auto',
        'none',
        'required',
        null,
        { type: 'function', name: 'f' },
        { type: 'mcp', server_label: 'docs' },
        { type: 'svc_web_search' },
      ]) {
        accepts(bodies, 'createResponse_body', body({ tool_choice }));
      }
      for (const format of [{ type: 'text' }, { type: 'json_object' }]) accepts(bodies, 'createResponse_body', body({ text: { format } }));
      for (const conversation of ['conv_1', { id: 'conv_1' }]) accepts(bodies, 'createResponse_body', body({ conversation }));
      accepts(bodies, 'createResponse_body', body({ stop: 'END', reasoning: null, text: null, tools: null, metadata: null }));
    });

    it('names the offending field of a known input item or content part', () => {
      const input = (item: unknown) => ({ model: 'demo', input: [item] });
      rejects(bodies, 'createResponse_body', input({ type: 'function_call', call_id: 'c', arguments: '{}' }), 'input[0].name');
      rejects(bodies, 'createResponse_body', input({ type: 'message', content: 'hi' }), 'input[0].role');
      rejects(bodies, 'createResponse_body', input({ content: 'hi' }), 'input[0].role');
      rejects(bodies, 'createResponse_body', input({ role: 'user' }), 'input[0].content');
      rejects(bodies, 'createResponse_body', input({ role: 'robot', content: 'hi' }), 'input[0].role');
      rejects(bodies, 'createResponse_body', input({ role: 'user', content: 42 }), 'input[0].content');
      rejects(bodies, 'createResponse_body', input({ type: 42 }), 'input[0].type');
      rejects(bodies, 'createResponse_body', input({ role: 'user', content: [{ type: 'input_text' }] }), 'input[0].content[0].text');
      rejects(bodies, 'createResponse_body', input({ role: 'user', content: [{ text: 'hi' }] }), 'input[0].content[0].type');
      rejects(bodies, 'createResponse_body', input({ role: 'user', content: [{ type: 'input_image', detail: 'low' }] }), 'input[0].content[0].image_url');
      rejects(
        bodies,
        'createResponse_body',
        input({ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/a.png', detail: 'ultra' }] }),
        'input[0].content[0].detail',
      );
      rejects(bodies, 'createResponse_body', input({ role: 'user', content: [{ type: 'input_file', filename: 'a.pdf' }] }), 'input[0].content[0].file_data');
      rejects(bodies, 'createResponse_body', input({ role: 'assistant', content: [{ type: 'output_text' }] }), 'input[0].content[0].text');
      rejects(bodies, 'createResponse_body', input({ type: 'function_call_output', call_id: 'c' }), 'input[0].output');
      rejects(bodies, 'createResponse_body', input({ type: 'function_call_output', call_id: 'c', output: 3 }), 'input[0].output');
      rejects(bodies, 'createResponse_body', input({ type: 'reasoning', id: 'rs_1' }), 'input[0].summary');
      rejects(bodies, 'createResponse_body', input({ type: 'reasoning', summary: [{ type: 'summary_text' }] }), 'input[0].summary[0].text');
      rejects(bodies, 'createResponse_body', input({ type: 'item_reference' }), 'input[0].id');
    });

    it('names the offending field of tools, tool_choice and the other typed fields', () => {
      rejects(bodies, 'createResponse_body', body({ tools: [{ type: 'function', parameters: {} }] }), 'tools[0].name');
      rejects(bodies, 'createResponse_body', body({ tools: [{ name: 'f' }] }), 'tools[0].type');
      rejects(bodies, 'createResponse_body', body({ tools: [{ type: 'mcp', server_url: 'https://mcp.example.com' }] }), 'tools[0].server_label');
      rejects(bodies, 'createResponse_body', body({ tools: [{ type: 'mcp', server_label: 'docs' }] }), 'tools[0].server_url');
      rejects(bodies, 'createResponse_body', body({ tools: { type: 'function' } }), 'tools');
      rejects(bodies, 'createResponse_body', body({ tool_choice: 'sometimes' }), 'tool_choice');
      rejects(bodies, 'createResponse_body', body({ tool_choice: { type: 'function' } }), 'tool_choice.name');
      rejects(bodies, 'createResponse_body', body({ tool_choice: { name: 'f' } }), 'tool_choice.type');
      rejects(bodies, 'createResponse_body', body({ tool_choice: { type: 'allowed_tools', mode: 'auto' } }), 'tool_choice.tools');
      rejects(
        bodies,
        'createResponse_body',
        body({ tool_choice: { type: 'allowed_tools', mode: 'always', tools: [{ type: 'function', name: 'f' }] } }),
        'tool_choice.mode',
      );
      rejects(bodies, 'createResponse_body', body({ text: { format: { type: 'yaml' } } }), 'text.format.type');
      rejects(bodies, 'createResponse_body', body({ text: { format: { type: 'json_schema', name: 'answer' } } }), 'text.format.schema');
      rejects(bodies, 'createResponse_body', body({ text: { verbosity: 'chatty' } }), 'text.verbosity');
      rejects(bodies, 'createResponse_body', body({ reasoning: { effort: 'maximum' } }), 'reasoning.effort');
      rejects(bodies, 'createResponse_body', body({ metadata: { ticket: 1 } }), 'metadata.ticket');
      rejects(bodies, 'createResponse_body', body({ conversation: {} }), 'conversation.id');
      rejects(bodies, 'createResponse_body', body({ include: 'reasoning.encrypted_content' }), 'include');
      rejects(bodies, 'createResponse_body', body({ truncation: 'sometimes' }), 'truncation');
      rejects(bodies, 'createResponse_body', body({ max_output_tokens: 0 }), 'max_output_tokens');
      rejects(bodies, 'createResponse_body', body({ temperature: 3 }), 'temperature');
      rejects(bodies, 'createResponse_body', body({ top_p: 1.5 }), 'top_p');
      rejects(bodies, 'createResponse_body', body({ n: 0 }), 'n');
      rejects(bodies, 'createResponse_body', body({ stop: 3 }), 'stop');
      rejects(bodies, 'createResponse_body', body({ stream: 'yes' }), 'stream');
      rejects(bodies, 'createResponse_body', body({ store: 'true' }), 'store');
      rejects(bodies, 'createResponse_body', body({ background: 1 }), 'background');
      rejects(bodies, 'createResponse_body', body({ parallel_tool_calls: 'no' }), 'parallel_tool_calls');
      rejects(bodies, 'createResponse_body', body({ instructions: ['a'] }), 'instructions');
    });

    it('names the missing model and input and a bad svc value', () => {
      rejects(bodies, 'createResponse_body', { model: 'demo', input: 'hi', svc: { system_prompt: 'always' } }, 'svc.system_prompt');
      rejects(bodies, 'createResponse_body', { model: 'demo', input: 'hi', svc: { tools: true } }, 'svc.tools');
      rejects(bodies, 'createResponse_body', { model: 'demo' }, 'input');
      rejects(bodies, 'createResponse_body', { input: 'hi' }, 'model');
      rejects(bodies, 'createResponse_body', { model: '', input: 'hi' }, 'model');
    });
  });

  describe('path and query parameters', () => {
    it('requires UUIDs for agentId and runId', () => {
      rejects(params, 'getAgent_params', { agentId: 'not-a-uuid' }, 'agentId', 'path');
      rejects(params, 'getRun_params', { runId: '123' }, 'runId', 'path');
      assert.equal(check(params, 'getRun_params', { runId: '0b6c7f6e-3f55-4c1b-8a3c-0b1d2e3f4a5b' }, 'path'), null);
    });
    it('coerces and bounds getAgent limit and checks the dates, without defaulting limit', () => {
      const query: Record<string, unknown> = { startDate: '2024-01-01T00:00:00Z' };
      assert.equal(check(params, 'getAgent_query', query, 'query'), null);
      assert.deepEqual(query, { startDate: '2024-01-01T00:00:00Z' }, 'no default: its presence selects the paginated path');
      const limited: Record<string, unknown> = { limit: '7' };
      assert.equal(check(params, 'getAgent_query', limited, 'query'), null);
      assert.equal(limited['limit'], 7);
      rejects(params, 'getAgent_query', { limit: '0' }, 'limit', 'query');
      rejects(params, 'getAgent_query', { limit: '101' }, 'limit', 'query');
      rejects(params, 'getAgent_query', { endDate: 'yesterday' }, 'endDate', 'query');
      // ISO-8601 dates or date-times with an explicit offset; a date-time without one is ambiguous.
      for (const ok of ['2024-05-01', '2024-05-01T12:00Z', '2024-05-01T12:00:00.123+02:00']) {
        assert.equal(check(params, 'getAgent_query', { startDate: ok, endDate: ok }, 'query'), null, ok);
      }
      rejects(params, 'getAgent_query', { startDate: '2024-05-01T12:00:00' }, 'startDate', 'query');
    });
    it('defaults and bounds the conversation items and audit queries', () => {
      const items: Record<string, unknown> = {};
      assert.equal(check(params, 'listConversationItems_query', items, 'query'), null);
      assert.deepEqual(items, { limit: 20, order: 'desc' });
      rejects(params, 'listConversationItems_query', { order: 'newest' }, 'order', 'query');
      const audit: Record<string, unknown> = {};
      assert.equal(check(params, 'listAuditRecords_query', audit, 'query'), null);
      assert.deepEqual(audit, { limit: 100, order: 'asc' });
      rejects(params, 'listAuditRecords_query', { limit: '1001' }, 'limit', 'query');
      rejects(params, 'listAuditRecords_query', { since: 'last week' }, 'since', 'query');
    });
    it('rejects a negative or non-integer starting_after and coerces stream', () => {
      for (const bad of ['-1', '1.5', 'abc', '']) rejects(params, 'getResponse_query', { starting_after: bad }, 'starting_after', 'query');
      rejects(params, 'getResponse_query', { stream: 'maybe' }, 'stream', 'query');
      const query: Record<string, unknown> = { stream: 'true', starting_after: '3' };
      assert.equal(check(params, 'getResponse_query', query, 'query'), null);
      assert.deepEqual(query, { stream: true, starting_after: 3 });
    });
  });
});
