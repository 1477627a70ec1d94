// What the OpenAI SDK really sends to POST /v1/responses validates against our generated request
// validator, including the multi-turn history an SDK user builds by feeding a response's `output` back
// as `input`. The fake server answers with a response object valid by our document and by the Open
// Responses spec, so the round trip also proves the SDK accepts what we emit.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { validationError, type GeneratedValidator } from '../../src/http/validation';
import { assertOpenResponsesObject, assertOurResponseObject } from '../support/open-responses';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const bodies = require('../../src/generated/body-validators.js') as Record<string, GeneratedValidator>;
const validate = bodies['createResponse_body']!;

/** A response with reasoning, a function call and a message, every field present. */
const RESPONSE = {
  id: 'resp_1',
  object: 'response',
  created_at: 1_741_476_777,
  completed_at: 1_741_476_778,
  status: 'completed',
  incomplete_details: null,
  model: 'demo',
  previous_response_id: null,
  instructions: null,
  output: [
    { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Needs the weather tool.' }], status: 'completed' },
    { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Brest"}', status: 'completed' },
    { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
  ],
  error: null,
  tools: [{ type: 'function', name: 'get_weather', description: null, parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true }],
  tool_choice: 'auto',
  truncation: 'disabled',
  parallel_tool_calls: true,
  text: { format: { type: 'text' } },
  top_p: 1,
  presence_penalty: 0,
  frequency_penalty: 0,
  top_logprobs: 0,
  temperature: 1,
  reasoning: null,
  usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 2 } },
  max_output_tokens: null,
  max_tool_calls: null,
  store: false,
  background: false,
  service_tier: 'default',
  metadata: {},
  safety_identifier: null,
  prompt_cache_key: null,
};

describe('OpenAI SDK request bodies for POST /v1/responses', function () {
  this.timeout(30_000);
  let server: Server;
  let client: OpenAI;
  const received: unknown[] = [];
  const rejected: string[] = [];

  before(async () => {
    assertOurResponseObject(RESPONSE);
    assertOpenResponsesObject(RESPONSE);
    server = createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (text += chunk));
      req.on('end', () => {
        const body = JSON.parse(text) as unknown;
        received.push(body);
        if (!validate(body)) rejected.push(validationError('body', validate.errors).message);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(RESPONSE));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = new OpenAI({ baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: 'test-key', maxRetries: 0 });
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    received.length = 0;
    rejected.length = 0;
  });

  it('validates a plain request and a tool-calling turn with every field the SDK types', async () => {
    await client.responses.create({ model: 'demo', input: 'Hello' });
    await client.responses.create({
      model: 'demo',
      instructions: 'Be brief.',
      input: [
        { role: 'developer', content: 'Use metric units.' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Weather in this city?' },
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' },
            { type: 'input_file', filename: 'notes.txt', file_data: 'data:text/plain;base64,aGVsbG8=' },
          ],
        },
      ],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Weather.',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: true,
        },
        { type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com', require_approval: 'never' },
      ],
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'get_weather' }] },
      parallel_tool_calls: false,
      reasoning: { effort: 'low', summary: 'auto' },
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: {} }, strict: true }, verbosity: 'low' },
      include: ['reasoning.encrypted_content'],
      truncation: 'auto',
      store: true,
      metadata: { ticket: 'T-1' },
      max_output_tokens: 256,
      temperature: 0.2,
      top_p: 0.9,
      prompt_cache_key: 'k',
      service_tier: 'auto',
    });
    assert.equal(received.length, 2);
    assert.deepEqual(rejected, []);
  });

  it("validates the next turn built from the previous response's output plus the function result", async () => {
    const first = await client.responses.create({ model: 'demo', input: 'Weather in Brest?' });
    assert.equal(first.output_text, 'Checking.', 'the SDK read our response object');
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call && call.type === 'function_call');
    await client.responses.create({
      model: 'demo',
      input: [
        { role: 'user', content: 'Weather in Brest?' },
        // The documented SDK pattern; the SDK's own types disagree under exactOptionalPropertyTypes.
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { type: 'function_call_output', call_id: call.call_id, output: '{"temperature_c":18}' },
      ],
    });
    await client.responses.create({
      model: 'demo',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '18 C' }],
    });
    assert.equal(received.length, 3);
    assert.deepEqual(rejected, []);
  });

  it('is a real check: a body the SDK would send with a broken item is refused, naming the field', async () => {
    await client.responses.create({ model: 'demo', input: [{ type: 'function_call_output', output: '18 C' } as never] });
    assert.equal(rejected.length, 1);
    assert.match(rejected[0]!, /'input\[0\]\.call_id' is required/);
  });
});
