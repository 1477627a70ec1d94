import assert from 'node:assert/strict';
import type { JsonObject, Message } from '../../../src/canonical/model';
import { isGatewayError } from '../../../src/http/errors';
import { canonicalToResponseObject, responsesRequestToCanonical } from '../../../src/formats/responses';

const PNG_B64 = Buffer.from('not really a png').toString('base64');
const PDF_B64 = Buffer.from('%PDF-1.4 body').toString('base64');
const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** The GatewayError a conversion throws (fails when none is thrown). */
function rejection(body: JsonObject): { status: number; code: string; param: string | undefined; message: string } {
  try {
    responsesRequestToCanonical(body);
  } catch (err) {
    assert.ok(isGatewayError(err), `expected a GatewayError, got ${String(err)}`);
    return { status: err.status, code: err.code, param: err.param, message: err.message };
  }
  assert.fail(`expected ${JSON.stringify(body).slice(0, 200)} to be refused`);
}

describe('formats/responses: responsesRequestToCanonical', () => {
  it('reads a string input as one user message, after instructions as the leading system message', () => {
    const { request, fieldNames } = responsesRequestToCanonical({ model: 'gpt-x', instructions: 'Be brief.', input: 'Hello' });
    assert.equal(request.model, 'gpt-x');
    assert.deepEqual(request.messages, [
      { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
    ]);
    assert.deepEqual(request.tools, []);
    assert.equal(request.toolChoice, undefined);
    assert.deepEqual(request.options, {});
    assert.deepEqual(fieldNames, {});
    assert.equal(request.extra, undefined);
  });

  it('reads every message role and content part', () => {
    const { request } = responsesRequestToCanonical({
      model: 'm',
      input: [
        { type: 'message', role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'input_text', text: 'Answer in French.' }] },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Look:' },
            { type: 'input_image', image_url: `data:image/png;base64,${PNG_B64}`, detail: 'high' },
            { type: 'input_image', image_url: 'https://example.com/cat.jpg' },
            { type: 'input_image', file_id: 'file-img', detail: 'low' },
            { type: 'input_file', filename: 'report.pdf', file_data: `data:application/pdf;base64,${PDF_B64}` },
            { type: 'input_file', filename: 'notes.txt', file_data: Buffer.from('plain').toString('base64') },
            { type: 'input_file', file_id: 'file-abc' },
            { type: 'input_file', file_url: 'https://example.com/spec.pdf', filename: 'spec.pdf' },
            { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
          ],
        },
      ],
    });
    const expected: Message[] = [
      { role: 'system', content: [{ type: 'text', text: 'You are terse.' }] },
      { role: 'system', content: [{ type: 'text', text: 'Answer in French.' }], developer: true },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG_B64 }, detail: 'high' },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' } },
          { type: 'image', source: { kind: 'file-id', fileId: 'file-img' }, detail: 'low' },
          { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: PDF_B64 }, filename: 'report.pdf' },
          { type: 'file', source: { kind: 'base64', mediaType: 'text/plain', data: Buffer.from('plain').toString('base64') }, filename: 'notes.txt' },
          { type: 'file', source: { kind: 'file-id', fileId: 'file-abc' } },
          { type: 'file', source: { kind: 'url', url: 'https://example.com/spec.pdf', mediaType: 'application/pdf' }, filename: 'spec.pdf' },
          { type: 'native', format: 'responses', value: { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } } },
        ],
      },
    ];
    assert.deepEqual(request.messages, expected);
  });

  it('merges an assistant message, reasoning and consecutive function calls into one assistant turn, and consecutive outputs into one tool turn', () => {
    const { request } = responsesRequestToCanonical({
      model: 'm',
      input: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Two cities.' }], encrypted_content: 'gAAAA-opaque' },
        {
          type: 'message',
          role: 'assistant',
          id: 'msg_1',
          content: [
            { type: 'output_text', text: 'Checking.', annotations: [] },
            { type: 'refusal', refusal: 'Not that.' },
          ],
        },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_2', name: 'weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '{"temp":21}' },
        {
          type: 'function_call_output',
          call_id: 'call_2',
          output: [
            { type: 'input_text', text: 'sunny' },
            { type: 'input_image', image_url: 'https://example.com/rome.png' },
            { type: 'input_file', file_id: 'file-r' },
          ],
        },
        { role: 'user', content: 'Thanks' },
      ],
    });
    assert.deepEqual(request.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Two cities.', summary: ['Two cities.'], id: 'rs_1', encryptedContent: 'gAAAA-opaque' },
          { type: 'text', text: 'Checking.' },
          { type: 'text', text: 'Not that.' },
          { type: 'tool-call', id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}', itemId: 'fc_1' },
          { type: 'tool-call', id: 'call_2', name: 'weather', arguments: '{"city":"Rome"}' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', callId: 'call_1', output: '{"temp":21}' },
          {
            type: 'tool-result',
            callId: 'call_2',
            output: [
              { type: 'text', text: 'sunny' },
              { type: 'image', source: { kind: 'url', url: 'https://example.com/rome.png' } },
              { type: 'file', source: { kind: 'file-id', fileId: 'file-r' } },
            ],
          },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
    ]);
  });

  it('keeps item_reference and other unknown items as native Responses parts (model-written ones on the assistant side)', () => {
    const { request } = responsesRequestToCanonical({
      model: 'm',
      input: [
        { type: 'item_reference', id: 'msg_earlier' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } },
        { type: 'computer_call_output', call_id: 'cc_1', output: { type: 'computer_screenshot', image_url: 'https://example.com/s.png' } },
      ],
    });
    assert.deepEqual(request.messages, [
      { role: 'user', content: [{ type: 'native', format: 'responses', value: { type: 'item_reference', id: 'msg_earlier' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'native', format: 'responses', value: { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'native',
            format: 'responses',
            value: { type: 'computer_call_output', call_id: 'cc_1', output: { type: 'computer_screenshot', image_url: 'https://example.com/s.png' } },
          },
        ],
      },
    ]);
  });

  it('reads reasoning content (reasoning_text) before summaries as the readable text', () => {
    const { request } = responsesRequestToCanonical({
      model: 'm',
      input: [{ type: 'reasoning', summary: [{ type: 'summary_text', text: 'short' }], content: [{ type: 'reasoning_text', text: 'the full thought' }] }],
    });
    assert.deepEqual(request.messages, [{ role: 'assistant', content: [{ type: 'reasoning', text: 'the full thought' }] }]);
  });

  it("gives another provider's reasoning state back through the reasoning item's encrypted_content", () => {
    // An Anthropic thinking block (text + signature) and a redacted one go out as reasoning items and
    // come back, as a client echoes them, with the same signature and payload.
    const object = canonicalToResponseObject(
      {
        id: 'up',
        model: 'claude',
        created: 1,
        finishReason: 'tool_calls',
        usage: { inputTokens: 1, outputTokens: 1 },
        content: [
          { type: 'reasoning', text: 'Let me think.', signature: 'sig-abc' },
          { type: 'reasoning', text: '', redactedData: 'REDACTED-PAYLOAD' },
          { type: 'tool-call', id: 'toolu_1', name: 'weather', arguments: '{}' },
        ],
      },
      { request: { model: 'claude-direct', input: 'hi' } },
    );
    const { request } = responsesRequestToCanonical({ model: 'claude-direct', input: object.output as unknown as JsonObject[] });
    const [assistant] = request.messages;
    assert.equal(assistant?.role, 'assistant');
    const [thinking, redacted, call] = assistant.content;
    assert.deepEqual(
      { ...thinking, id: undefined },
      { type: 'reasoning', text: 'Let me think.', summary: ['Let me think.'], signature: 'sig-abc', id: undefined },
    );
    assert.deepEqual({ ...redacted, id: undefined }, { type: 'reasoning', text: '', redactedData: 'REDACTED-PAYLOAD', id: undefined });
    assert.equal(call?.type, 'tool-call');
    assert.equal(call.id, 'toolu_1');
  });

  it('reads a percent-encoded data: URL as base64, an unknown assistant part as native, the older reasoning.generate_summary, and skips empty instructions', () => {
    const { request } = responsesRequestToCanonical({
      model: 'm',
      instructions: '',
      reasoning: { generate_summary: 'concise' },
      input: [
        { role: 'user', content: [{ type: 'input_file', filename: 'a.txt', file_data: 'data:text/plain,hello%20world' }] },
        { role: 'assistant', content: [{ type: 'output_audio', transcript: 'hi' }] },
      ],
    });
    assert.deepEqual(request.messages, [
      { role: 'user', content: [{ type: 'file', source: { kind: 'base64', mediaType: 'text/plain', data: b64('hello world') }, filename: 'a.txt' }] },
      { role: 'assistant', content: [{ type: 'native', format: 'responses', value: { type: 'output_audio', transcript: 'hi' } }] },
    ]);
    assert.deepEqual(request.options, { reasoning: { summary: 'concise' } });
  });

  it('maps function, mcp, hosted svc_* and other tool types', () => {
    const params = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const { request } = responsesRequestToCanonical({
      model: 'm',
      input: 'x',
      tools: [
        { type: 'function', name: 'weather', description: 'Weather by city', parameters: params, strict: true },
        { type: 'function', name: 'bare' },
        { type: 'mcp', server_label: 'deepwiki', server_url: 'https://mcp.example.com', require_approval: 'never' },
        { type: 'svc_shell' },
        { type: 'svc_tools' },
        { type: 'web_search_preview', search_context_size: 'low' },
      ],
    });
    assert.deepEqual(request.tools, [
      { kind: 'function', name: 'weather', description: 'Weather by city', parameters: params, strict: true },
      { kind: 'function', name: 'bare' },
      { kind: 'mcp', serverLabel: 'deepwiki', config: { server_label: 'deepwiki', server_url: 'https://mcp.example.com', require_approval: 'never' } },
      { kind: 'hosted', type: 'svc_shell', config: {} },
      { kind: 'hosted', type: 'svc_tools', config: {} },
      { kind: 'native', format: 'responses', type: 'web_search_preview', definition: { type: 'web_search_preview', search_context_size: 'low' } },
    ]);
  });

  it('maps every tool_choice form', () => {
    const cases: [unknown, unknown][] = [
      ['auto', { kind: 'auto' }],
      ['none', { kind: 'none' }],
      ['required', { kind: 'required' }],
      [
        { type: 'function', name: 'weather' },
        { kind: 'tool', name: 'weather' },
      ],
      [
        {
          type: 'allowed_tools',
          mode: 'required',
          tools: [
            { type: 'function', name: 'a' },
            { type: 'function', name: 'b' },
          ],
        },
        { kind: 'allowed', mode: 'required', names: ['a', 'b'] },
      ],
      [
        { type: 'allowed_tools', tools: [{ type: 'function', name: 'a' }, { type: 'web_search_preview' }] },
        { kind: 'allowed', mode: 'auto', names: ['a', 'web_search_preview'] },
      ],
      [{ type: 'allowed_tools', mode: 'none', tools: [{ type: 'function', name: 'a' }] }, { kind: 'none' }],
      // Forcing a hosted or provider tool names it by its type; custom tools by name; MCP by tool name, else server label.
      [{ type: 'web_search_preview' }, { kind: 'tool', name: 'web_search_preview' }],
      [{ type: 'svc_shell' }, { kind: 'tool', name: 'svc_shell' }],
      [
        { type: 'custom', name: 'grammar_tool' },
        { kind: 'tool', name: 'grammar_tool' },
      ],
      [
        { type: 'mcp', server_label: 'deepwiki', name: 'ask' },
        { kind: 'tool', name: 'ask' },
      ],
      [
        { type: 'mcp', server_label: 'deepwiki' },
        { kind: 'tool', name: 'deepwiki' },
      ],
      [null, undefined],
    ];
    for (const [choice, expected] of cases) {
      const { request } = responsesRequestToCanonical({ model: 'm', input: 'x', tool_choice: choice });
      assert.deepEqual(request.toolChoice, expected, JSON.stringify(choice));
    }
  });

  it('maps the generation options and names each by the caller field it came from', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    const { request, fieldNames } = responsesRequestToCanonical({
      model: 'm',
      input: 'x',
      max_output_tokens: 256,
      temperature: 0.3,
      top_p: 0.9,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      n: 1,
      stop: 'END',
      parallel_tool_calls: false,
      reasoning: { effort: 'high', summary: 'auto' },
      text: { format: { type: 'json_schema', name: 'answer', schema, strict: true, description: 'An answer' }, verbosity: 'low' },
      service_tier: 'flex',
      prompt_cache_key: 'pk-1',
      user: 'end-user-1',
      top_logprobs: 3,
    });
    assert.deepEqual(request.options, {
      maxOutputTokens: 256,
      temperature: 0.3,
      topP: 0.9,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      n: 1,
      stop: ['END'],
      parallelToolCalls: false,
      reasoning: { effort: 'high', summary: 'auto' },
      responseFormat: { type: 'json_schema', name: 'answer', schema, strict: true, description: 'An answer' },
      verbosity: 'low',
      serviceTier: 'flex',
      promptCacheKey: 'pk-1',
      user: 'end-user-1',
      topLogprobs: 3,
    });
    assert.deepEqual(fieldNames, {
      maxOutputTokens: 'max_output_tokens',
      temperature: 'temperature',
      topP: 'top_p',
      presencePenalty: 'presence_penalty',
      frequencyPenalty: 'frequency_penalty',
      n: 'n',
      stop: 'stop',
      parallelToolCalls: 'parallel_tool_calls',
      reasoning: 'reasoning',
      responseFormat: 'text.format',
      verbosity: 'text.verbosity',
      serviceTier: 'service_tier',
      promptCacheKey: 'prompt_cache_key',
      user: 'user',
      topLogprobs: 'top_logprobs',
    });
    assert.equal(request.extra, undefined);
  });

  it('reads json_object and text formats, null as unset, and safety_identifier as the end-user id (user then stays a wire field)', () => {
    const json = responsesRequestToCanonical({ model: 'm', input: 'x', text: { format: { type: 'json_object' } }, temperature: null, reasoning: null });
    assert.deepEqual(json.request.options, { responseFormat: { type: 'json_object' } });
    assert.deepEqual(responsesRequestToCanonical({ model: 'm', input: 'x', text: { format: { type: 'text' } } }).request.options, {
      responseFormat: { type: 'text' },
    });
    const ids = responsesRequestToCanonical({ model: 'm', input: 'x', safety_identifier: 'hash-1', user: 'legacy' });
    assert.equal(ids.request.options.user, 'hash-1');
    assert.equal(ids.fieldNames.user, 'safety_identifier');
    assert.deepEqual(ids.request.extra, { format: 'responses', fields: { user: 'legacy' } });
  });

  it("puts fields with no canonical meaning in extra, never the handler's own fields", () => {
    const { request } = responsesRequestToCanonical({
      model: 'm',
      input: 'x',
      include: ['reasoning.encrypted_content'],
      truncation: 'auto',
      background: false,
      prompt: { id: 'pmpt_1', variables: { city: 'Paris' } },
      max_tool_calls: 3,
      some_future_field: { a: 1 },
      metadata: { k: 'v' },
      litellm_metadata: { x: 1 },
      proxy_server_request: { y: 1 },
      stream: true,
      stream_options: { include_obfuscation: false },
      store: true,
      conversation: 'conv_1',
      previous_response_id: 'resp_0',
      svc: { system_prompt: 'agent_default' },
    });
    assert.deepEqual(request.extra, {
      format: 'responses',
      fields: {
        include: ['reasoning.encrypted_content'],
        truncation: 'auto',
        background: false,
        prompt: { id: 'pmpt_1', variables: { city: 'Paris' } },
        max_tool_calls: 3,
        some_future_field: { a: 1 },
      },
    });
  });

  it('never changes the caller body', () => {
    const body: JsonObject = {
      model: 'm',
      input: [
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 's' }] },
      ],
      tools: [{ type: 'svc_shell', extra: 1 }],
    };
    const before = structuredClone(body);
    responsesRequestToCanonical(body);
    assert.deepEqual(body, before);
  });

  it('refuses a shape it cannot read with a 400 naming the field', () => {
    const cases: [JsonObject, string][] = [
      [{ input: 'x' }, 'model'],
      [{ model: 'm', input: 42 }, 'input'],
      [{ model: 'm', input: ['text'] }, 'input[0]'],
      [{ model: 'm', input: [{ role: 'tool', content: 'x' }] }, 'input[0].role'],
      [{ model: 'm', input: [{ role: 'user', content: 7 }] }, 'input[0].content'],
      [{ model: 'm', input: [{ role: 'user', content: [{ type: 'input_text' }] }] }, 'input[0].content[0].text'],
      [
        {
          model: 'm',
          input: [
            { role: 'user', content: 'a' },
            { role: 'user', content: [{ type: 'input_image', image_url: 'ftp://x/y.png' }] },
          ],
        },
        'input[1].content[0].image_url',
      ],
      [{ model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,!!!' }] }] }, 'input[0].content[0].image_url'],
      [{ model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:;base64,AAAA' }] }] }, 'input[0].content[0].image_url'],
      [{ model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', detail: 'high' }] }] }, 'input[0].content[0].image_url'],
      [{ model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', filename: 'a.txt' }] }] }, 'input[0].content[0]'],
      [{ model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'file:///etc/passwd' }] }] }, 'input[0].content[0].file_url'],
      [{ model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_data: 'not base64!' }] }] }, 'input[0].content[0].file_data'],
      [{ model: 'm', input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }] }, 'input[0].content[0]'],
      [{ model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[0].call_id'],
      [{ model: 'm', input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: { a: 1 } }] }, 'input[0].arguments'],
      [{ model: 'm', input: [{ type: 'function_call_output', call_id: 'c', output: { a: 1 } }] }, 'input[0].output'],
      [{ model: 'm', input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'refusal', refusal: 'x' }] }] }, 'input[0].output[0].type'],
      [{ model: 'm', input: [{ type: 'reasoning', summary: 'text' }] }, 'input[0].summary'],
      [{ model: 'm', input: [{ type: 'reasoning', summary: [], encrypted_content: 'agw-reasoning-v1:%%%' }] }, 'input[0].encrypted_content'],
      [{ model: 'm', input: [{ type: 7 }] }, 'input[0].type'],
      [{ model: 'm', input: 'x', instructions: ['a'] }, 'instructions'],
      [{ model: 'm', input: 'x', tools: {} }, 'tools'],
      [{ model: 'm', input: 'x', tools: [{ type: 'function' }] }, 'tools[0].name'],
      [{ model: 'm', input: 'x', tools: [{ name: 'f' }] }, 'tools[0].type'],
      [{ model: 'm', input: 'x', tools: [{ type: 'mcp', server_url: 'https://x' }] }, 'tools[0].server_label'],
      [{ model: 'm', input: 'x', tools: [{ type: 'function', name: 'f', parameters: 'x' }] }, 'tools[0].parameters'],
      [{ model: 'm', input: 'x', tool_choice: 'sometimes' }, 'tool_choice'],
      [{ model: 'm', input: 'x', tool_choice: { type: 'function' } }, 'tool_choice.name'],
      [{ model: 'm', input: 'x', tool_choice: { type: 'allowed_tools', mode: 'maybe', tools: [] } }, 'tool_choice.mode'],
      [{ model: 'm', input: 'x', tool_choice: { type: 'allowed_tools', tools: 'a' } }, 'tool_choice.tools'],
      [{ model: 'm', input: 'x', temperature: '0.2' }, 'temperature'],
      [{ model: 'm', input: 'x', max_output_tokens: 1.5 }, 'max_output_tokens'],
      [{ model: 'm', input: 'x', stop: [1] }, 'stop'],
      [{ model: 'm', input: 'x', parallel_tool_calls: 'yes' }, 'parallel_tool_calls'],
      [{ model: 'm', input: 'x', reasoning: { effort: 'extreme' } }, 'reasoning.effort'],
      [{ model: 'm', input: 'x', text: 'json' }, 'text'],
      [{ model: 'm', input: 'x', text: { format: { type: 'yaml' } } }, 'text.format.type'],
      [{ model: 'm', input: 'x', text: { format: { type: 'json_schema', name: 'n' } } }, 'text.format.schema'],
      [{ model: 'm', input: 'x', text: { format: { type: 'json_schema', schema: {} } } }, 'text.format.name'],
      [{ model: 'm', input: 'x', text: { verbosity: 3 } }, 'text.verbosity'],
      [{ model: 'm', input: 'x', service_tier: 1 }, 'service_tier'],
    ];
    for (const [body, param] of cases) {
      const error = rejection(body);
      assert.equal(error.status, 400, param);
      assert.equal(error.code, 'bad_request', param);
      assert.equal(error.param, param, JSON.stringify(body));
      assert.ok(error.message.startsWith(`${param}: `), error.message);
    }
  });
});
