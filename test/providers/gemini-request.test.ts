// Gemini provider, request side: each translation rule asserted on the body the (fake) Gemini API
// receives. The provider is built through the registry, exactly as the router builds it.
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/http/errors';
import { PLACEHOLDER_THOUGHT_SIGNATURE } from '../../src/providers/gemini/convert-to-gemini-contents';
import type { ChatCompletionRequest } from '../../src/providers/types';
import { FAKE_GEMINI_KEY, geminiTextReply, useFakeGeminiProvider } from '../fixtures/upstreams/gemini-upstream';

const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('gemini provider: request translation', () => {
  const gemini = useFakeGeminiProvider();

  /** Sends the request (non-streaming) and returns the body the upstream saw. */
  async function sent(request: ChatCompletionRequest, model = 'gemini-2.5-flash'): Promise<Record<string, unknown>> {
    gemini.fake.script({ kind: 'json', body: geminiTextReply('ok') });
    const before = gemini.fake.requests.length;
    await gemini.provider.chat(request, model, {});
    const recorded = gemini.fake.requests[before];
    assert.ok(recorded, 'the upstream received the request');
    return recorded.body;
  }

  it('posts to models/{model}:generateContent with the key in x-goog-api-key, never in the URL', async () => {
    await sent({ model: 'public-name', messages: [{ role: 'user', content: 'hi' }] });
    const request = gemini.fake.requests.at(-1)!;
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(request.headers['x-goog-api-key'], FAKE_GEMINI_KEY);
    assert.equal(request.query.get('key'), null);
    assert.match(String(request.headers['content-type']), /^application\/json/);
    assert.equal(request.headers['authorization'], undefined);
  });

  it('accepts a model already written as a resource path', async () => {
    await sent({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }, 'models/gemini-2.0-flash');
    assert.equal(gemini.fake.requests.at(-1)!.path, '/v1beta/models/gemini-2.0-flash:generateContent');
  });

  it('moves system and developer messages to systemInstruction and maps roles to user/model', async () => {
    const body = await sent({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hello', name: 'alice' },
        { role: 'assistant', content: 'Bonjour' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'How are ' },
            { type: 'text', text: 'you?' },
          ],
        },
      ],
    });
    assert.deepEqual(body['systemInstruction'], { parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] });
    assert.deepEqual(body['contents'], [
      { role: 'user', parts: [{ text: 'Hello' }] },
      { role: 'model', parts: [{ text: 'Bonjour' }] },
      { role: 'user', parts: [{ text: 'How are ' }, { text: 'you?' }] },
    ]);
    // Gemini rejects unknown fields: nothing of the chat format leaks through.
    assert.deepEqual(Object.keys(body).sort(), ['contents', 'systemInstruction']);
  });

  it('sends data: image URLs as inlineData and https URLs as fileData', async () => {
    const body = await sent({
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}`, detail: 'low' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.webp' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
          ],
        },
      ],
    });
    assert.deepEqual(body['contents'], [
      {
        role: 'user',
        parts: [
          { text: 'Compare' },
          { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } },
          { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp' } },
          { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
          { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
        ],
      },
    ]);
  });

  it('maps tools to functionDeclarations with a JSON Schema Gemini accepts', async () => {
    const body = await sent({
      model: 'm',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather',
            strict: true,
            parameters: {
              $schema: 'http://json-schema.org/draft-07/schema#',
              type: 'object',
              properties: {
                city: { type: 'string', description: 'City name', pattern: '^[A-Z]' },
                unit: { const: 'celsius' },
                days: { type: ['integer', 'null'], minimum: 1 },
              },
              required: ['city'],
              additionalProperties: false,
            },
          },
        },
        { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
      ],
      tool_choice: 'auto',
    });
    assert.deepEqual(body['tools'], [
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Current weather',
            parametersJsonSchema: {
              type: 'object',
              properties: {
                city: { type: 'string', description: 'City name' },
                unit: { enum: ['celsius'] },
                days: { type: ['integer', 'null'], minimum: 1 },
              },
              required: ['city'],
              additionalProperties: false,
            },
          },
          // An empty-object schema is left out: Gemini wants no parameters rather than an empty object.
          { name: 'now' },
        ],
      },
    ]);
    assert.deepEqual(body['toolConfig'], { functionCallingConfig: { mode: 'AUTO' } });
  });

  it('maps every tool_choice form to functionCallingConfig', async () => {
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } } } }];
    const base = { model: 'm', messages: [{ role: 'user' as const, content: 'x' }], tools };
    assert.deepEqual((await sent({ ...base, tool_choice: 'none' }))['toolConfig'], { functionCallingConfig: { mode: 'NONE' } });
    assert.deepEqual((await sent({ ...base, tool_choice: 'required' }))['toolConfig'], { functionCallingConfig: { mode: 'ANY' } });
    assert.deepEqual((await sent({ ...base, tool_choice: { type: 'function', function: { name: 'f' } } }))['toolConfig'], {
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] },
    });
    assert.equal((await sent(base))['toolConfig'], undefined);
  });

  it('turns assistant tool calls into functionCall parts and tool results into functionResponse parts named via tool_call_id', async () => {
    const body = await sent({
      model: 'm',
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_paris',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              extra_content: { google: { thought_signature: 'c2lnbmF0dXJl' } },
            } as never,
            { id: 'call_rome', type: 'function', function: { name: 'get_time', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_rome', content: '{"time":"12:00"}' },
        { role: 'tool', tool_call_id: 'call_paris', content: 'sunny, 21C' },
        { role: 'user', content: 'Thanks' },
      ],
    });
    assert.deepEqual(body['contents'], [
      { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJl' },
          { functionCall: { name: 'get_time', args: { city: 'Rome' } } },
        ],
      },
      // Parallel results form one user turn; names come from the calls they answer, not message order.
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_time', response: { time: '12:00' } } },
          { functionResponse: { name: 'get_weather', response: { result: 'sunny, 21C' } } },
          { text: 'Thanks' },
        ],
      },
    ]);
  });

  it('gives a replayed call without a thought signature the documented placeholder (Gemini 3 rejects it otherwise)', async () => {
    const body = await sent({
      model: 'm',
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: 'Let me check.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '42' },
      ],
    });
    const contents = body['contents'] as { parts: Record<string, unknown>[] }[];
    assert.deepEqual(contents[1]!.parts, [
      { text: 'Let me check.' },
      { functionCall: { name: 'f', args: {} }, thoughtSignature: PLACEHOLDER_THOUGHT_SIGNATURE },
    ]);
    assert.deepEqual(contents[2]!.parts, [{ functionResponse: { name: 'f', response: { result: 42 } } }]);
  });

  it('maps sampling parameters, stop and max_tokens into generationConfig and drops fields Gemini does not know', async () => {
    const body = await sent({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      temperature: 0.3,
      top_p: 0.9,
      max_tokens: 256,
      stop: 'END',
      n: 2,
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      logprobs: true,
      top_logprobs: 3,
      user: 'end-user-1',
      parallel_tool_calls: true,
      stream_options: { include_usage: true },
    });
    assert.deepEqual(body['generationConfig'], {
      temperature: 0.3,
      topP: 0.9,
      maxOutputTokens: 256,
      stopSequences: ['END'],
      candidateCount: 2,
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      responseLogprobs: true,
      logprobs: 3,
    });
    assert.deepEqual(Object.keys(body).sort(), ['contents', 'generationConfig']);
    const second = await sent({ model: 'm', messages: [{ role: 'user', content: 'x' }], max_completion_tokens: 64, max_tokens: 999, stop: ['a', 'b'] });
    assert.deepEqual(second['generationConfig'], { maxOutputTokens: 64, stopSequences: ['a', 'b'] });
  });

  it('maps reasoning_effort to a thinking budget and rejects unknown efforts', async () => {
    const high = await sent({ model: 'm', messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'high' });
    assert.deepEqual(high['generationConfig'], { thinkingConfig: { thinkingBudget: 24576 } });
    const none = await sent({ model: 'm', messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'none' });
    assert.deepEqual(none['generationConfig'], { thinkingConfig: { thinkingBudget: 0 } });
    await assert.rejects(
      gemini.provider.chat({ model: 'm', messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'extreme' }, 'g', {}),
      (err: unknown) => err instanceof GatewayError && err.status === 400 && err.param === 'reasoning_effort',
    );
  });

  it('forwards response_format json_object to Gemini JSON mode', async () => {
    const body = await sent({ model: 'm', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_object' } });
    assert.deepEqual(body['generationConfig'], { responseMimeType: 'application/json' });
  });

  it('forwards response_format json_schema as responseMimeType plus responseJsonSchema', async () => {
    const body = await sent({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'verdict',
          strict: true,
          schema: {
            type: 'object',
            properties: { verdict: { type: 'string', enum: ['pass', 'fail'] }, item: { $ref: '#/definitions/Item', description: 'dropped' } },
            definitions: { Item: { type: 'object', properties: { n: { type: 'integer' } } } },
            required: ['verdict'],
            additionalProperties: false,
          },
        },
      },
    });
    assert.deepEqual(body['generationConfig'], {
      responseMimeType: 'application/json',
      responseJsonSchema: {
        type: 'object',
        properties: { verdict: { type: 'string', enum: ['pass', 'fail'] }, item: { $ref: '#/$defs/Item' } },
        $defs: { Item: { type: 'object', properties: { n: { type: 'integer' } } } },
        required: ['verdict'],
        additionalProperties: false,
      },
    });
  });

  it('never modifies the caller request', async () => {
    const request: ChatCompletionRequest = {
      model: 'm',
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
        { role: 'tool', tool_call_id: 'c', content: 'r' },
      ],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { const: 1 } } } } }],
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: { a: { const: 1 } } } } },
      stop: 'x',
    };
    const copy = structuredClone(request);
    await sent(request);
    assert.deepEqual(request, copy);
  });

  it('rejects what cannot be translated with a 400 naming the field, before calling upstream', async () => {
    const before = gemini.fake.requests.length;
    await assert.rejects(
      gemini.provider.chat(
        {
          model: 'm',
          messages: [
            { role: 'user', content: 'x' },
            { role: 'tool', tool_call_id: 'nope', content: 'r' },
          ],
        },
        'g',
        {},
      ),
      (err: unknown) => err instanceof GatewayError && err.status === 400 && err.param === 'messages[1].tool_call_id',
    );
    await assert.rejects(
      gemini.provider.chat({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'web_search' }] }, 'g', {}),
      (err: unknown) => err instanceof GatewayError && err.code === 'unsupported_tool_type' && err.param === 'tools[0].type',
    );
    await assert.rejects(
      gemini.provider.chat(
        {
          model: 'm',
          messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }] }],
        },
        'g',
        {},
      ),
      (err: unknown) => err instanceof GatewayError && err.status === 400 && err.param === 'messages[0].tool_calls[0].function.arguments',
    );
    assert.equal(gemini.fake.requests.length, before, 'nothing reached the upstream');
  });
});
