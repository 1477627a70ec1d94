// The gemini provider on the canonical model: generate()/stream() against the fake Gemini API (real
// HTTP; SSE written in 7-byte TCP writes, so lines and UTF-8 characters arrive split). Request side:
// each translation rule asserted on the body Gemini receives; reply side: replies and streams to
// canonical replies and parts, finish reasons, usage, thought signatures and upstream errors. The
// provider is built through the registry, exactly as the router builds it.
import assert from 'node:assert/strict';
import { assembleResponse } from '../../src/canonical/assemble';
import type { Message, ModelRequest, ModelResponse, StreamPart } from '../../src/canonical/model';
import { GatewayError } from '../../src/http/errors';
import { SKIP_THOUGHT_SIGNATURE } from '../../src/providers/gemini/convert-model-messages-to-gemini';
import { createProvider } from '../../src/providers/registry';
import type { Provider } from '../../src/providers/types';
import { FAKE_GEMINI_KEY, fakeGeminiProviderConfig, geminiTextReply, useFakeGeminiProvider, type FakeGemini } from '../fixtures/upstreams/gemini-upstream';
import { rejection } from '../helpers/rejection';
import { collect, streamOf } from '../helpers/async-iterables';
import { streamedText, user } from '../helpers/canonical';

const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

function request(messages: Message[], rest: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'public-name', messages, tools: [], options: {}, ...rest };
}

function generate(provider: Provider, req: ModelRequest, model = 'gemini-2.5-flash', signal?: AbortSignal): Promise<ModelResponse> {
  assert.ok(provider.generate, 'the provider implements generate()');
  return provider.generate(req, model, signal ? { signal } : {});
}

function stream(provider: Provider, req: ModelRequest, model = 'gemini-2.5-flash', signal?: AbortSignal): AsyncIterable<StreamPart> {
  assert.ok(provider.stream, 'the provider implements stream()');
  return provider.stream(req, model, signal ? { signal } : {});
}

function textEvent(text: string, extra: Record<string, unknown> = {}, candidate: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0, ...candidate }],
    usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'stream-resp-1',
    ...extra,
  };
}

describe('gemini provider: canonical generate()/stream()', () => {
  const gemini = useFakeGeminiProvider();

  /** Sends the request (not streamed) and returns the body Gemini received. */
  async function sent(req: ModelRequest, model = 'gemini-2.5-flash'): Promise<Record<string, unknown>> {
    gemini.fake.script({ kind: 'json', body: geminiTextReply('ok') });
    const before = gemini.fake.requests.length;
    await generate(gemini.provider, req, model);
    const recorded = gemini.fake.requests[before];
    assert.ok(recorded, 'the upstream received the request');
    return recorded.body;
  }

  it('honours the options generationConfig has a field for, and takes no caller extras', () => {
    const honours = gemini.provider.honours!;
    for (const name of [
      'maxOutputTokens',
      'temperature',
      'topP',
      'topK',
      'stop',
      'seed',
      'presencePenalty',
      'frequencyPenalty',
      'responseFormat',
      'reasoning',
    ] as const) {
      assert.ok(honours.has(name), name);
    }
    // n and logprobs: a canonical reply has one choice and no logprobs to carry them back.
    for (const name of ['user', 'parallelToolCalls', 'verbosity', 'serviceTier', 'promptCacheKey', 'n', 'logprobs', 'topLogprobs'] as const) {
      assert.equal(honours.has(name), false, name);
    }
    assert.equal(gemini.provider.extrasOf, undefined);
  });

  describe('the request', () => {
    it('posts to models/{model}:generateContent with the key in x-goog-api-key, never in the URL', async () => {
      await sent(request([user('hi')]));
      const recorded = gemini.fake.requests.at(-1)!;
      assert.equal(recorded.method, 'POST');
      assert.equal(recorded.path, '/v1beta/models/gemini-2.5-flash:generateContent');
      assert.equal(recorded.headers['x-goog-api-key'], FAKE_GEMINI_KEY);
      assert.equal(recorded.query.get('key'), null);
      assert.match(String(recorded.headers['content-type']), /^application\/json/);
      assert.equal(recorded.headers['authorization'], undefined);
    });

    it('accepts a model already written as a resource path', async () => {
      await sent(request([user('hi')]), 'models/gemini-2.0-flash');
      assert.equal(gemini.fake.requests.at(-1)!.path, '/v1beta/models/gemini-2.0-flash:generateContent');
    });

    it('moves system messages to systemInstruction, maps roles to user/model, and sends no caller extras', async () => {
      const body = await sent(
        request(
          [
            { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
            { role: 'system', developer: true, content: [{ type: 'text', text: 'Answer in French.' }] },
            { role: 'user', name: 'alice', content: [{ type: 'text', text: 'Hello' }] },
            { role: 'assistant', content: [{ type: 'text', text: 'Bonjour' }] },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'How are ' },
                { type: 'text', text: 'you?' },
              ],
            },
            user('Fine?'),
          ],
          { extra: { format: 'chat', fields: { metadata: { a: 1 } } } },
        ),
      );
      assert.deepEqual(body['systemInstruction'], { parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] });
      assert.deepEqual(body['contents'], [
        { role: 'user', parts: [{ text: 'Hello' }] },
        { role: 'model', parts: [{ text: 'Bonjour' }] },
        { role: 'user', parts: [{ text: 'How are ' }, { text: 'you?' }, { text: 'Fine?' }] },
      ]);
      // Gemini rejects unknown fields: nothing else leaks through.
      assert.deepEqual(Object.keys(body).sort(), ['contents', 'systemInstruction']);
    });

    it('sends bytes and data: URLs as inlineData, https:, gs: and files/ references as fileData, text as text', async () => {
      const body = await sent(
        request([
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Compare' },
              { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG_BASE64 }, detail: 'low' },
              { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.webp' } },
              { type: 'image', source: { kind: 'url', url: `data:image/png;base64,${PNG_BASE64}` } },
              { type: 'file', source: { kind: 'base64', mediaType: 'audio/wav', data: 'UklGRg==' } },
              { type: 'file', source: { kind: 'url', url: 'data:application/pdf;base64,JVBERi0=' }, filename: 'a.pdf' },
              { type: 'file', source: { kind: 'file-id', fileId: 'files/abc123' }, filename: 'notes.txt' },
              { type: 'document', source: { kind: 'url', url: 'gs://bucket/report.pdf' } },
              { type: 'document', source: { kind: 'text', mediaType: 'text/plain', data: 'Plain notes.' }, title: 'Notes' },
              { type: 'image', source: { kind: 'url', url: 'https://example.com/photo', mediaType: 'image/heic' } },
            ],
          },
        ]),
      );
      assert.deepEqual(body['contents'], [
        {
          role: 'user',
          parts: [
            { text: 'Compare' },
            { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } },
            { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp' } },
            { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } },
            { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
            { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
            { fileData: { mimeType: 'text/plain', fileUri: 'files/abc123' } },
            { fileData: { mimeType: 'application/pdf', fileUri: 'gs://bucket/report.pdf' } },
            { text: 'Plain notes.' },
            { fileData: { mimeType: 'image/heic', fileUri: 'https://example.com/photo' } },
          ],
        },
      ]);
    });

    it('maps function tools to functionDeclarations with a JSON Schema Gemini accepts', async () => {
      const body = await sent(
        request([user('weather?')], {
          tools: [
            {
              kind: 'function',
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
            { kind: 'function', name: 'now', parameters: { type: 'object', properties: {} } },
            { kind: 'function', name: 'ping' },
          ],
          toolChoice: { kind: 'auto' },
        }),
      );
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
            { name: 'ping' },
          ],
        },
      ]);
      assert.deepEqual(body['toolConfig'], { functionCallingConfig: { mode: 'AUTO' } });
    });

    it('maps every tool choice form to functionCallingConfig', async () => {
      const base = request([user('x')], { tools: [{ kind: 'function', name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } } }] });
      const config = async (toolChoice: ModelRequest['toolChoice']): Promise<unknown> =>
        (await sent({ ...base, ...(toolChoice ? { toolChoice } : {}) }))['toolConfig'];
      assert.deepEqual(await config({ kind: 'none' }), { functionCallingConfig: { mode: 'NONE' } });
      assert.deepEqual(await config({ kind: 'required' }), { functionCallingConfig: { mode: 'ANY' } });
      assert.deepEqual(await config({ kind: 'tool', name: 'f' }), { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } });
      assert.deepEqual(await config({ kind: 'allowed', mode: 'required', names: ['f', 'g'] }), {
        functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f', 'g'] },
      });
      assert.deepEqual(await config({ kind: 'allowed', mode: 'auto', names: ['f'] }), {
        functionCallingConfig: { mode: 'VALIDATED', allowedFunctionNames: ['f'] },
      });
      assert.equal(await config(undefined), undefined);
    });

    it('turns assistant tool calls into functionCall parts (signature back on its call) and tool results into functionResponse parts named via the call id', async () => {
      const body = await sent(
        request([
          user('Weather in Paris and Rome?'),
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: '', signature: 'c2lnbmF0dXJl' },
              { type: 'tool-call', id: 'call_paris', name: 'get_weather', arguments: '{"city":"Paris"}' },
              { type: 'tool-call', id: 'call_rome', name: 'get_time', arguments: '{"city":"Rome"}' },
            ],
          },
          {
            role: 'tool',
            content: [
              { type: 'tool-result', callId: 'call_rome', output: '{"time":"12:00"}' },
              { type: 'tool-result', callId: 'call_paris', output: 'sunny, 21C' },
            ],
          },
          user('Thanks'),
        ]),
      );
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

    it('gives a replayed call without a thought signature the documented placeholder, and signs text a signature precedes', async () => {
      const body = await sent(
        request([
          user('x'),
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'I should look it up.' },
              { type: 'text', text: 'Let me check.' },
              { type: 'tool-call', id: 'c1', name: 'f', arguments: '' },
            ],
          },
          { role: 'tool', content: [{ type: 'tool-result', callId: 'c1', output: '42' }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'done', signature: 'VEVYVA==' },
              { type: 'text', text: 'It is 42.' },
            ],
          },
        ]),
      );
      const contents = body['contents'] as { parts: Record<string, unknown>[] }[];
      assert.deepEqual(contents[1]!.parts, [{ text: 'Let me check.' }, { functionCall: { name: 'f', args: {} }, thoughtSignature: SKIP_THOUGHT_SIGNATURE }]);
      assert.deepEqual(contents[2]!.parts, [{ functionResponse: { name: 'f', response: { result: 42 } } }]);
      assert.deepEqual(contents[3]!.parts, [{ text: 'It is 42.', thoughtSignature: 'VEVYVA==' }], 'reasoning text is not sent, its signature is');
    });

    it('sends a failed tool result under `error`, and media of a result after its functionResponse', async () => {
      const body = await sent(
        request([
          user('x'),
          {
            role: 'assistant',
            content: [
              { type: 'tool-call', id: 'c1', name: 'lookup', arguments: '{}' },
              { type: 'tool-call', id: 'c2', name: 'snapshot', arguments: '{}' },
            ],
          },
          {
            role: 'tool',
            content: [
              { type: 'tool-result', callId: 'c1', output: 'not found', isError: true },
              {
                type: 'tool-result',
                callId: 'c2',
                output: [
                  { type: 'text', text: '{"taken":true}' },
                  { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG_BASE64 } },
                ],
              },
            ],
          },
        ]),
      );
      const contents = body['contents'] as { parts: Record<string, unknown>[] }[];
      assert.deepEqual(contents[2]!.parts, [
        { functionResponse: { name: 'lookup', response: { error: 'not found' } } },
        { functionResponse: { name: 'snapshot', response: { taken: true } } },
        { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } },
      ]);
    });

    it('maps sampling options, stop, n, logprobs and the output cap into generationConfig, and sends none of the options Gemini does not know', async () => {
      const body = await sent(
        request([user('x')], {
          options: {
            temperature: 0.3,
            topP: 0.9,
            topK: 40,
            maxOutputTokens: 256,
            stop: ['END'],
            n: 2,
            seed: 7,
            presencePenalty: 0.5,
            frequencyPenalty: -0.5,
            logprobs: true,
            topLogprobs: 3,
            user: 'end-user-1',
            parallelToolCalls: true,
            verbosity: 'low',
            serviceTier: 'flex',
            promptCacheKey: 'k',
          },
        }),
      );
      assert.deepEqual(body['generationConfig'], {
        maxOutputTokens: 256,
        temperature: 0.3,
        topP: 0.9,
        topK: 40,
        stopSequences: ['END'],
        candidateCount: 2,
        seed: 7,
        presencePenalty: 0.5,
        frequencyPenalty: -0.5,
        responseLogprobs: true,
        logprobs: 3,
      });
      assert.deepEqual(Object.keys(body).sort(), ['contents', 'generationConfig']);
      const noLogprobs = await sent(request([user('x')], { options: { topLogprobs: 3 } }));
      assert.equal(noLogprobs['generationConfig'], undefined, 'top logprobs without logprobs asks for nothing');
    });

    it('maps reasoning to thinkingConfig: effort table, explicit budget, disabled, summary as includeThoughts', async () => {
      const thinking = async (reasoning: NonNullable<ModelRequest['options']['reasoning']>): Promise<unknown> =>
        ((await sent(request([user('x')], { options: { reasoning } })))['generationConfig'] as Record<string, unknown>)['thinkingConfig'];
      assert.deepEqual(await thinking({ effort: 'high' }), { thinkingBudget: 24576 });
      assert.deepEqual(await thinking({ effort: 'xhigh' }), { thinkingBudget: 24576 });
      assert.deepEqual(await thinking({ effort: 'medium' }), { thinkingBudget: 8192 });
      assert.deepEqual(await thinking({ effort: 'low' }), { thinkingBudget: 1024 });
      assert.deepEqual(await thinking({ effort: 'minimal' }), { thinkingBudget: 1024 });
      assert.deepEqual(await thinking({ effort: 'none' }), { thinkingBudget: 0 });
      assert.deepEqual(await thinking({ budgetTokens: 5000, effort: 'high' }), { thinkingBudget: 5000 }, 'an explicit budget wins');
      assert.deepEqual(await thinking({ disabled: true, summary: 'auto' }), { thinkingBudget: 0 });
      assert.deepEqual(await thinking({ effort: 'low', summary: 'detailed' }), { thinkingBudget: 1024, includeThoughts: true });
      assert.deepEqual(await thinking({ summary: 'auto' }), { includeThoughts: true });
    });

    it('forwards a json_object response format to Gemini JSON mode, and sends nothing for text', async () => {
      const body = await sent(request([user('x')], { options: { responseFormat: { type: 'json_object' } } }));
      assert.deepEqual(body['generationConfig'], { responseMimeType: 'application/json' });
      const text = await sent(request([user('x')], { options: { responseFormat: { type: 'text' } } }));
      assert.equal(text['generationConfig'], undefined);
    });

    it('forwards a json_schema response format as responseMimeType plus responseJsonSchema', async () => {
      const body = await sent(
        request([user('x')], {
          options: {
            responseFormat: {
              type: 'json_schema',
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
        }),
      );
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
      const req = request(
        [
          { role: 'system', content: [{ type: 'text', text: 'S' }] },
          { role: 'user', content: [{ type: 'image', source: { kind: 'url', url: `data:image/png;base64,${PNG_BASE64}` } }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: '', signature: 'sig' },
              { type: 'tool-call', id: 'c', name: 'f', arguments: '{"a":1}' },
            ],
          },
          { role: 'tool', content: [{ type: 'tool-result', callId: 'c', output: 'r' }] },
        ],
        {
          tools: [{ kind: 'function', name: 'f', parameters: { type: 'object', properties: { a: { const: 1 } } } }],
          toolChoice: { kind: 'allowed', mode: 'auto', names: ['f'] },
          options: { stop: ['x'], responseFormat: { type: 'json_schema', name: 'x', schema: { type: 'object', properties: { a: { const: 1 } } } } },
        },
      );
      const copy = structuredClone(req);
      await sent(req);
      assert.deepEqual(req, copy);
    });

    it('rejects what cannot be translated with a 400 naming the field, before calling upstream', async () => {
      const before = gemini.fake.requests.length;
      const cases: [ModelRequest, string, string][] = [
        [
          request([user('x'), { role: 'tool', content: [{ type: 'tool-result', callId: 'nope', output: 'r' }] }]),
          'bad_request',
          'messages[1].content[0].callId',
        ],
        [request([user('x')], { tools: [{ kind: 'hosted', type: 'svc_web_search', config: {} }] }), 'unsupported_tool_type', 'tools[0]'],
        [request([user('x')], { tools: [{ kind: 'mcp', serverLabel: 's', config: {} }] }), 'unsupported_tool_type', 'tools[0]'],
        [
          request([user('x')], { tools: [{ kind: 'native', format: 'responses', type: 'web_search_preview', definition: { type: 'web_search_preview' } }] }),
          'unsupported_tool_type',
          'tools[0]',
        ],
        [
          request([{ role: 'assistant', content: [{ type: 'tool-call', id: 'c', name: 'f', arguments: '{oops' }] }]),
          'bad_request',
          'messages[0].content[0].arguments',
        ],
        [
          request([{ role: 'assistant', content: [{ type: 'tool-call', id: 'c', name: 'f', arguments: '[1]' }] }]),
          'bad_request',
          'messages[0].content[0].arguments',
        ],
        [
          request([{ role: 'user', content: [{ type: 'native', format: 'messages', value: { type: 'search_result' } }] }]),
          'bad_request',
          'messages[0].content[0]',
        ],
        [
          request([user('x'), { role: 'assistant', content: [{ type: 'native', format: 'chat', value: { type: 'refusal' } }] }]),
          'bad_request',
          'messages[1].content[0]',
        ],
        [
          request([{ role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'ftp://example.com/a.png' } }] }]),
          'bad_request',
          'messages[0].content[0]',
        ],
        [
          request([{ role: 'user', content: [{ type: 'file', source: { kind: 'file-id', fileId: 'file-openai-1' } }] }]),
          'bad_request',
          'messages[0].content[0]',
        ],
        [request([{ role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'data:image/png' } }] }]), 'bad_request', 'messages[0].content[0]'],
      ];
      for (const [req, code, param] of cases) {
        const err = await rejection(generate(gemini.provider, req, 'g'));
        assert.equal(err.code, code, param);
        assert.equal(err.status, 400);
        assert.equal(err.param, param);
      }
      const streamed = await rejection(collect(stream(gemini.provider, cases[0]![0], 'g')));
      assert.equal(streamed.param, 'messages[1].content[0].callId');
      assert.equal(gemini.fake.requests.length, before, 'nothing reached the upstream');
    });
  });

  describe('generate(): the reply', () => {
    it('turns a text candidate into a reply with its id, model and usage (thinking tokens counted as output)', async () => {
      gemini.fake.script({
        kind: 'json',
        body: geminiTextReply('Hello there', {
          modelVersion: 'gemini-2.5-flash-001',
          usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, thoughtsTokenCount: 7, cachedContentTokenCount: 4, totalTokenCount: 20 },
        }),
      });
      const response = await generate(gemini.provider, request([user('hi')]));
      assert.equal(response.id, 'resp-fake-1');
      assert.equal(response.model, 'gemini-2.5-flash-001');
      assert.equal(typeof response.created, 'number');
      assert.deepEqual(response.content, [{ type: 'text', text: 'Hello there' }]);
      assert.equal(response.finishReason, 'stop');
      assert.equal(response.rawFinishReason, 'STOP');
      assert.deepEqual(response.usage, { inputTokens: 10, outputTokens: 10, cachedInputTokens: 4, reasoningTokens: 7 });
    });

    it('joins text parts, returns thought summaries as reasoning, and reads the first candidate only', async () => {
      gemini.fake.script({
        kind: 'json',
        body: {
          candidates: [
            { index: 1, content: { role: 'model', parts: [{ text: 'Truncated ans' }] }, finishReason: 'MAX_TOKENS' },
            {
              index: 0,
              content: { role: 'model', parts: [{ text: 'thinking about it', thought: true }, { text: 'Part one, ' }, { text: 'part two.' }] },
              finishReason: 'STOP',
            },
          ],
          usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2, toolUsePromptTokenCount: 3, totalTokenCount: 6 },
        },
      });
      const response = await generate(gemini.provider, request([user('x')], { options: { n: 2 } }));
      assert.deepEqual(gemini.fake.requests.at(-1)!.body['generationConfig'], { candidateCount: 2 });
      assert.deepEqual(response.content, [
        { type: 'reasoning', text: 'thinking about it' },
        { type: 'text', text: 'Part one, part two.' },
      ]);
      assert.equal(response.finishReason, 'stop');
      assert.deepEqual(response.usage, { inputTokens: 4, outputTokens: 2 }, 'tool-use prompt tokens are input');
      assert.equal(typeof response.id, 'string');
    });

    it('answers JSON mode with the raw JSON text Gemini produced (no code fence)', async () => {
      gemini.fake.script({ kind: 'json', body: geminiTextReply('{"verdict":"pass","score":3}') });
      const response = await generate(gemini.provider, request([user('judge')], { options: { responseFormat: { type: 'json_object' } } }));
      assert.deepEqual(gemini.fake.requests.at(-1)!.body['generationConfig'], { responseMimeType: 'application/json' });
      const text = response.content[0]?.type === 'text' ? response.content[0].text : '';
      assert.doesNotMatch(text, /```/);
      assert.deepEqual(JSON.parse(text), { verdict: 'pass', score: 3 });
    });

    it('maps policy stops to content_filter, a blocked prompt to an empty filtered reply, and other reasons to error/other', async () => {
      gemini.fake.script(
        {
          kind: 'json',
          body: { candidates: [{ index: 0, finishReason: 'SAFETY', safetyRatings: [] }], usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } },
        },
        { kind: 'json', body: { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } } },
        {
          kind: 'json',
          body: geminiTextReply('', { candidates: [{ index: 0, content: { role: 'model', parts: [] }, finishReason: 'MALFORMED_FUNCTION_CALL' }] }),
        },
        {
          kind: 'json',
          body: geminiTextReply('', { candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'Hola' }] }, finishReason: 'LANGUAGE' }] }),
        },
      );
      const unsafe = await generate(gemini.provider, request([user('x')]));
      assert.equal(unsafe.finishReason, 'content_filter');
      assert.equal(unsafe.rawFinishReason, 'SAFETY');
      assert.deepEqual(unsafe.content, []);
      const blocked = await generate(gemini.provider, request([user('x')]));
      assert.deepEqual(blocked.content, []);
      assert.equal(blocked.finishReason, 'content_filter');
      assert.equal(blocked.rawFinishReason, 'PROHIBITED_CONTENT');
      assert.deepEqual(blocked.usage, { inputTokens: 5, outputTokens: 0 });
      assert.equal((await generate(gemini.provider, request([user('x')]))).finishReason, 'error');
      const other = await generate(gemini.provider, request([user('x')]));
      assert.equal(other.finishReason, 'other');
      assert.equal(other.rawFinishReason, 'LANGUAGE');
    });

    it('turns functionCall parts into tool calls (generated or Gemini ids, JSON-string arguments) and round-trips them with their thought signature', async () => {
      gemini.fake.script({
        kind: 'json',
        body: {
          candidates: [
            {
              index: 0,
              content: {
                role: 'model',
                parts: [
                  { functionCall: { name: 'get_weather', args: { city: 'Paris', days: 2 } }, thoughtSignature: 'U0lHLTE=' },
                  { functionCall: { name: 'get_time', args: {} } },
                  { functionCall: { id: 'gemini-call-3', name: 'get_news' } },
                ],
              },
              finishReason: 'STOP',
            },
          ],
          usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 12, totalTokenCount: 42 },
        },
      });
      const tools: ModelRequest['tools'] = [
        { kind: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } } },
        { kind: 'function', name: 'get_time', parameters: { type: 'object', properties: {} } },
        { kind: 'function', name: 'get_news' },
      ];
      const first = request([user('Weather and time in Paris?')], { tools });
      const reply = await generate(gemini.provider, first, 'gemini-3-pro-preview');
      assert.equal(reply.finishReason, 'tool_calls');
      assert.equal(reply.rawFinishReason, 'STOP');
      assert.deepEqual(reply.content[0], { type: 'reasoning', text: '', signature: 'U0lHLTE=' });
      const calls = reply.content.filter((part) => part.type === 'tool-call');
      assert.equal(calls.length, 3);
      assert.match(calls[0]!.id, /^call_[0-9a-f]{24}$/);
      assert.notEqual(calls[0]!.id, calls[1]!.id);
      assert.equal(calls[2]!.id, 'gemini-call-3');
      assert.deepEqual(
        calls.map((call) => [call.name, call.arguments]),
        [
          ['get_weather', '{"city":"Paris","days":2}'],
          ['get_time', '{}'],
          ['get_news', '{}'],
        ],
      );

      // The caller sends the assistant turn back as received, plus the tool results (in reverse order).
      gemini.fake.script({ kind: 'json', body: geminiTextReply('Sunny in Paris at noon.') });
      const second = await generate(
        gemini.provider,
        {
          ...first,
          messages: [
            ...first.messages,
            { role: 'assistant', content: reply.content },
            {
              role: 'tool',
              content: [
                { type: 'tool-result', callId: calls[2]!.id, output: '[]' },
                { type: 'tool-result', callId: calls[1]!.id, output: '{"time":"12:00"}' },
                { type: 'tool-result', callId: calls[0]!.id, output: '{"sky":"sunny"}' },
              ],
            },
          ],
        },
        'gemini-3-pro-preview',
      );
      assert.deepEqual(second.content, [{ type: 'text', text: 'Sunny in Paris at noon.' }]);
      assert.deepEqual(gemini.fake.requests.at(-1)!.body['contents'], [
        { role: 'user', parts: [{ text: 'Weather and time in Paris?' }] },
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'get_weather', args: { city: 'Paris', days: 2 } }, thoughtSignature: 'U0lHLTE=' },
            { functionCall: { name: 'get_time', args: {} } },
            { functionCall: { name: 'get_news', args: {} } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_news', response: { result: [] } } },
            { functionResponse: { name: 'get_time', response: { time: '12:00' } } },
            { functionResponse: { name: 'get_weather', response: { sky: 'sunny' } } },
          ],
        },
      ]);
    });

    it('keeps a signature that came on a thought part or on answer text', async () => {
      gemini.fake.script({
        kind: 'json',
        body: geminiTextReply('', {
          candidates: [
            {
              index: 0,
              content: {
                role: 'model',
                parts: [
                  { text: 'Plan: answer.', thought: true, thoughtSignature: 'VEhPVUdIVA==' },
                  { text: 'The answer', thoughtSignature: 'VEVYVA==' },
                  { text: ' is 4.' },
                ],
              },
              finishReason: 'STOP',
            },
          ],
        }),
      });
      const response = await generate(gemini.provider, request([user('2+2?')]));
      assert.deepEqual(response.content, [
        { type: 'reasoning', text: 'Plan: answer.', signature: 'VEhPVUdIVA==' },
        { type: 'reasoning', text: '', signature: 'VEVYVA==' },
        { type: 'text', text: 'The answer is 4.' },
      ]);
    });

    it('asks for logprobs when they are wanted (the canonical reply does not carry them)', async () => {
      gemini.fake.script({ kind: 'json', body: geminiTextReply('Hi') });
      await generate(gemini.provider, request([user('x')], { options: { logprobs: true, topLogprobs: 2 } }));
      assert.deepEqual(gemini.fake.requests.at(-1)!.body['generationConfig'], { responseLogprobs: true, logprobs: 2 });
    });

    describe('upstream errors reach the caller with the upstream status and message', () => {
      const cases: { name: string; reply: Parameters<FakeGemini['script']>[0]; status: number; message: RegExp }[] = [
        {
          name: 'a bad request (400 INVALID_ARGUMENT)',
          reply: {
            kind: 'error',
            status: 400,
            body: { error: { code: 400, message: '* GenerateContentRequest.contents: contents is not specified', status: 'INVALID_ARGUMENT' } },
          },
          status: 400,
          message: /^\* GenerateContentRequest\.contents: contents is not specified$/,
        },
        {
          name: 'an unknown model (404 NOT_FOUND)',
          reply: {
            kind: 'error',
            status: 404,
            body: { error: { code: 404, message: 'models/gemini-9 is not found for API version v1beta', status: 'NOT_FOUND' } },
          },
          status: 404,
          message: /models\/gemini-9 is not found/,
        },
        {
          name: 'an error envelope wrapped in an array',
          reply: {
            kind: 'error',
            status: 403,
            body: [{ error: { code: 403, message: 'Permission denied on resource project x.', status: 'PERMISSION_DENIED' } }],
          },
          status: 403,
          message: /^Permission denied on resource project x\.$/,
        },
        {
          name: 'a non-JSON error page',
          reply: { kind: 'raw', status: 502, text: '<html>Bad Gateway</html>' },
          status: 502,
          message: /^Upstream provider gem \(gemini\) answered HTTP 502\.$/,
        },
      ];
      for (const { name, reply, status, message } of cases) {
        it(name, async () => {
          gemini.fake.script(reply);
          const err = await rejection(generate(gemini.provider, request([user('x')]), 'g'));
          assert.equal(err.code, 'upstream_error');
          assert.equal(err.status, status);
          assert.match(err.message, message);
        });
      }

      it('a rate limit (429 RESOURCE_EXHAUSTED) keeps its Retry-After', async () => {
        gemini.fake.script({
          kind: 'error',
          status: 429,
          headers: { 'retry-after': '30' },
          body: { error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } },
        });
        const err = await rejection(generate(gemini.provider, request([user('x')]), 'g'));
        assert.equal(err.status, 429);
        assert.equal(err.message, 'Resource has been exhausted (e.g. check quota).');
        assert.equal(err.headers['retry-after'], '30');
      });

      it('a wrong API key (Google answers 400) is reported, and the key was sent only as a header', async () => {
        const wrong = createProvider('gem-wrong', { ...fakeGeminiProviderConfig(gemini.fake), apiKey: 'AIzaWrong' });
        try {
          const err = await rejection(generate(wrong, request([user('x')]), 'g'));
          assert.equal(err.status, 400);
          assert.equal(err.message, 'API key not valid. Please pass a valid API key.');
          assert.equal(gemini.fake.requests.at(-1)!.headers['x-goog-api-key'], 'AIzaWrong');
          assert.equal(gemini.fake.requests.at(-1)!.query.get('key'), null);
        } finally {
          await wrong.close();
        }
      });

      it('retries a 503 before anything reached the caller, then answers', async () => {
        const retrying = createProvider('gem-retry', fakeGeminiProviderConfig(gemini.fake, { retries: { max: 2, baseDelayMs: 1, maxDelayMs: 5 } }));
        try {
          const before = gemini.fake.requests.length;
          gemini.fake.script(
            { kind: 'error', status: 503, body: { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } } },
            { kind: 'json', body: geminiTextReply('second try') },
          );
          const response = await generate(retrying, request([user('x')]), 'g');
          assert.deepEqual(response.content, [{ type: 'text', text: 'second try' }]);
          assert.equal(gemini.fake.requests.length - before, 2);
          assert.deepEqual(gemini.fake.requests.at(-1)!.body, gemini.fake.requests.at(-2)!.body, 'the retry sent the same body');
        } finally {
          await retrying.close();
        }
      });
    });
  });

  describe('stream()', () => {
    const REQUEST = request([user('Say hello')]);

    it('streams text deltas (split across TCP writes, multi-byte characters included), start first and one finish with usage last', async () => {
      gemini.fake.script({
        kind: 'sse',
        chunkBytes: 7,
        events: [
          textEvent('Grüße, '),
          textEvent('世界 🌍'),
          textEvent(
            '!',
            { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 6, thoughtsTokenCount: 2, totalTokenCount: 13 } },
            { finishReason: 'STOP' },
          ),
        ],
      });
      const parts = await collect(stream(gemini.provider, REQUEST));
      const recorded = gemini.fake.requests.at(-1)!;
      assert.equal(recorded.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent');
      assert.equal(recorded.query.get('alt'), 'sse');
      assert.deepEqual(recorded.body, { contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }] });

      assert.deepEqual(parts[0], { type: 'start', id: 'stream-resp-1', model: 'gemini-2.5-flash', created: (parts[0] as { created: number }).created });
      assert.equal(streamedText(parts), 'Grüße, 世界 🌍!');
      assert.deepEqual(
        parts.map((part) => part.type),
        ['start', 'text-start', 'text-delta', 'text-delta', 'text-delta', 'text-end', 'finish'],
      );
      assert.deepEqual(parts.at(-1), {
        type: 'finish',
        finishReason: 'stop',
        rawFinishReason: 'STOP',
        usage: { inputTokens: 5, outputTokens: 8, reasoningTokens: 2 },
      });
    });

    it('streams thought parts as a reasoning block before the answer', async () => {
      gemini.fake.script({
        kind: 'sse',
        events: [
          { candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'Thinking ', thought: true }] } }] },
          { candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'hard.', thought: true }] } }] },
          textEvent('Done.', {}, { finishReason: 'STOP' }),
        ],
      });
      const parts = await collect(stream(gemini.provider, request([user('x')], { options: { reasoning: { effort: 'low', summary: 'auto' } } })));
      assert.deepEqual(gemini.fake.requests.at(-1)!.body['generationConfig'], { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } });
      assert.deepEqual(parts.slice(1, -1), [
        { type: 'reasoning-start', id: 'b0' },
        { type: 'reasoning-delta', id: 'b0', delta: 'Thinking ' },
        { type: 'reasoning-delta', id: 'b0', delta: 'hard.' },
        { type: 'reasoning-end', id: 'b0' },
        { type: 'text-start', id: 'b1' },
        { type: 'text-delta', id: 'b1', delta: 'Done.' },
        { type: 'text-end', id: 'b1' },
      ]);
    });

    it('streams every function call as its own tool call (id, name, full arguments), keeps its signature, and ends with tool_calls', async () => {
      gemini.fake.script({
        kind: 'sse',
        events: [
          textEvent('Checking both.'),
          {
            candidates: [
              { index: 0, content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'U0lH' }] } },
            ],
          },
          {
            candidates: [
              {
                index: 0,
                content: {
                  role: 'model',
                  parts: [{ functionCall: { name: 'get_time', args: { tz: 'Europe/Paris' } } }, { functionCall: { name: 'get_news', args: {} } }],
                },
                finishReason: 'STOP',
              },
            ],
            usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 9, totalTokenCount: 29 },
          },
        ],
      });
      const parts = await collect(stream(gemini.provider, request([user('x')], { tools: [{ kind: 'function', name: 'get_weather' }] })));
      assert.equal(streamedText(parts), 'Checking both.');
      const starts = parts.filter((part): part is Extract<StreamPart, { type: 'tool-call-start' }> => part.type === 'tool-call-start');
      assert.deepEqual(
        starts.map((part) => part.name),
        ['get_weather', 'get_time', 'get_news'],
      );
      assert.ok(starts.every((part) => /^call_[0-9a-f]{24}$/.test(part.callId)));
      assert.equal(new Set(starts.map((part) => part.callId)).size, 3);
      const response = await assembleResponse(streamOf(parts));
      assert.deepEqual(
        response.content.map((part) => (part.type === 'tool-call' ? [part.name, part.arguments] : part)),
        [
          { type: 'text', text: 'Checking both.' },
          { type: 'reasoning', text: '', signature: 'U0lH' },
          ['get_weather', '{"city":"Paris"}'],
          ['get_time', '{"tz":"Europe/Paris"}'],
          ['get_news', '{}'],
        ],
      );
      assert.equal(response.finishReason, 'tool_calls');
      assert.deepEqual(response.usage, { inputTokens: 20, outputTokens: 9 });
      assert.equal(parts.filter((part) => part.type === 'finish').length, 1);
    });

    it('assembles to what generate() answers for the same reply', async () => {
      const whole = {
        candidates: [
          {
            index: 0,
            content: {
              role: 'model',
              parts: [
                { text: 'Hm.', thought: true },
                { text: 'Calling.' },
                { functionCall: { id: 'g-1', name: 'f', args: { a: 1 } }, thoughtSignature: 'Uw==' },
              ],
            },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'same-1',
      };
      gemini.fake.script({ kind: 'json', body: whole }, { kind: 'sse', events: [whole] });
      const generated = await generate(gemini.provider, request([user('x')]));
      const streamed = await assembleResponse(stream(gemini.provider, request([user('x')])));
      assert.deepEqual({ ...streamed, created: 0 }, { ...generated, created: 0 });
    });

    it('streams JSON mode as raw JSON text', async () => {
      gemini.fake.script({ kind: 'sse', events: [textEvent('{"verdict":'), textEvent('"pass",'), textEvent('"items":[1,2]}', {}, { finishReason: 'STOP' })] });
      const parts = await collect(stream(gemini.provider, request([user('x')], { options: { responseFormat: { type: 'json_object' } } })));
      assert.deepEqual(gemini.fake.requests.at(-1)!.body['generationConfig'], { responseMimeType: 'application/json' });
      assert.deepEqual(JSON.parse(streamedText(parts)), { verdict: 'pass', items: [1, 2] });
    });

    it('maps MAX_TOKENS to length and a blocked prompt to content_filter', async () => {
      gemini.fake.script(
        { kind: 'sse', events: [textEvent('Once upon', {}, { finishReason: 'MAX_TOKENS' })] },
        { kind: 'sse', events: [{ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 } }] },
      );
      const cut = await collect(stream(gemini.provider, REQUEST));
      assert.deepEqual(cut.at(-1), { type: 'finish', finishReason: 'length', rawFinishReason: 'MAX_TOKENS', usage: { inputTokens: 5, outputTokens: 0 } });
      const blocked = await collect(stream(gemini.provider, REQUEST));
      assert.equal(streamedText(blocked), '');
      assert.deepEqual(
        blocked.map((part) => part.type),
        ['start', 'finish'],
      );
      assert.deepEqual(blocked.at(-1), {
        type: 'finish',
        finishReason: 'content_filter',
        rawFinishReason: 'SAFETY',
        usage: { inputTokens: 4, outputTokens: 0 },
      });
    });

    it('fails with the upstream message when an error event arrives mid-stream', async () => {
      gemini.fake.script({
        kind: 'sse',
        events: [textEvent('Partial '), { error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } }],
      });
      const received: StreamPart[] = [];
      await assert.rejects(
        (async () => {
          for await (const part of stream(gemini.provider, REQUEST)) received.push(part);
        })(),
        (err: unknown) => err instanceof GatewayError && err.code === 'upstream_error' && err.message === 'An internal error has occurred.',
      );
      assert.equal(streamedText(received), 'Partial ', 'what arrived before the failure was delivered');
    });

    it('fails rather than ending quietly when the upstream stream stops before a finish reason', async () => {
      gemini.fake.script({ kind: 'sse', events: [textEvent('Half an ans')], endAbruptly: true });
      const cut = await rejection(collect(stream(gemini.provider, REQUEST)));
      assert.equal(cut.code, 'upstream_error');
      gemini.fake.script({ kind: 'sse', events: [textEvent('Half an ans')] });
      const ended = await rejection(collect(stream(gemini.provider, REQUEST)));
      assert.match(ended.message, /ended before the answer was complete/);
      gemini.fake.script({ kind: 'sse', events: [{ raw: 'data: {not json\r\n\r\n' }] });
      assert.match((await rejection(collect(stream(gemini.provider, REQUEST)))).message, /not JSON/);
    });

    it('fails with the upstream status and message when the stream is refused', async () => {
      gemini.fake.script({
        kind: 'error',
        status: 429,
        body: { error: { code: 429, message: 'Quota exceeded for quota metric.', status: 'RESOURCE_EXHAUSTED' } },
      });
      const err = await rejection(collect(stream(gemini.provider, REQUEST)));
      assert.equal(err.status, 429);
      assert.equal(err.message, 'Quota exceeded for quota metric.');
    });

    it('relays parts as they arrive and releases the upstream when the caller stops or aborts', async () => {
      gemini.fake.script({ kind: 'hang', firstEvent: textEvent('first') });
      const iterator = stream(gemini.provider, REQUEST)[Symbol.asyncIterator]();
      assert.equal((await iterator.next()).value?.type, 'start');
      assert.equal((await iterator.next()).value?.type, 'text-start');
      assert.deepEqual(
        (await iterator.next()).value,
        { type: 'text-delta', id: 'b0', delta: 'first' },
        'the first delta arrived while the upstream was still open',
      );
      await iterator.return?.();
      await gemini.fake.clientGone();

      gemini.fake.script({ kind: 'hang', firstEvent: textEvent('again') });
      const controller = new AbortController();
      const aborted = stream(gemini.provider, REQUEST, 'gemini-2.5-flash', controller.signal)[Symbol.asyncIterator]();
      await aborted.next();
      await aborted.next();
      assert.deepEqual((await aborted.next()).value, { type: 'text-delta', id: 'b0', delta: 'again' });
      controller.abort();
      await gemini.fake.clientGone();
      await assert.rejects(aborted.next());
    });
  });
});
