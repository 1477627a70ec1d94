// Gemini provider, reply side (non-streaming): what the caller gets back for text, JSON mode, tool
// calls (and their round trip), finish reasons, usage and upstream errors.
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/http/errors';
import { createProvider } from '../../src/providers/registry';
import type { ChatCompletionRequest, ChatMessage } from '../../src/providers/types';
import { fakeGeminiProviderConfig, geminiTextReply, useFakeGeminiProvider, type FakeGemini } from '../fixtures/upstreams/gemini-upstream';

const user = (content: string): ChatMessage => ({ role: 'user', content });

describe('gemini provider: replies and errors', () => {
  const gemini = useFakeGeminiProvider();

  it('turns a text candidate into a chat completion with usage (thinking tokens counted as output)', async () => {
    gemini.fake.script({
      kind: 'json',
      body: geminiTextReply('Hello there', {
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, thoughtsTokenCount: 7, cachedContentTokenCount: 4, totalTokenCount: 20 },
      }),
    });
    const completion = await gemini.provider.chat({ model: 'public', messages: [user('hi')] }, 'gemini-2.5-flash', {});
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.id, 'chatcmpl-resp-fake-1');
    assert.equal(completion.model, 'gemini-2.5-flash');
    assert.equal(typeof completion.created, 'number');
    assert.deepEqual(completion.choices, [
      { index: 0, message: { role: 'assistant', content: 'Hello there', refusal: null }, finish_reason: 'stop', logprobs: null },
    ]);
    assert.deepEqual(completion.usage, {
      prompt_tokens: 10,
      completion_tokens: 10,
      total_tokens: 20,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 7 },
    });
  });

  it('joins text parts, leaves thought summaries out and answers one choice per candidate', async () => {
    gemini.fake.script({
      kind: 'json',
      body: {
        candidates: [
          {
            index: 0,
            content: { role: 'model', parts: [{ text: 'thinking about it', thought: true }, { text: 'Part one, ' }, { text: 'part two.' }] },
            finishReason: 'STOP',
          },
          { index: 1, content: { role: 'model', parts: [{ text: 'Truncated ans' }] }, finishReason: 'MAX_TOKENS' },
        ],
        usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2, totalTokenCount: 3 },
      },
    });
    const completion = await gemini.provider.chat({ model: 'm', messages: [user('x')], n: 2 }, 'g', {});
    assert.equal(completion.choices.length, 2);
    assert.equal(completion.choices[0]!.message.content, 'Part one, part two.');
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
    assert.equal(completion.choices[1]!.index, 1);
    assert.equal(completion.choices[1]!.finish_reason, 'length');
  });

  it('answers JSON mode with the raw JSON text Gemini produced (no code fence)', async () => {
    gemini.fake.script({ kind: 'json', body: geminiTextReply('{"verdict":"pass","score":3}') });
    const completion = await gemini.provider.chat({ model: 'm', messages: [user('judge')], response_format: { type: 'json_object' } }, 'g', {});
    assert.deepEqual(gemini.fake.requests.at(-1)!.body['generationConfig'], { responseMimeType: 'application/json' });
    const content = completion.choices[0]!.message.content!;
    assert.doesNotMatch(content, /```/);
    assert.deepEqual(JSON.parse(content), { verdict: 'pass', score: 3 });
  });

  it('maps policy stops to content_filter, and a blocked prompt to an empty filtered choice', async () => {
    gemini.fake.script(
      {
        kind: 'json',
        body: { candidates: [{ index: 0, finishReason: 'SAFETY', safetyRatings: [] }], usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } },
      },
      { kind: 'json', body: { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } } },
    );
    const unsafe = await gemini.provider.chat({ model: 'm', messages: [user('x')] }, 'g', {});
    assert.equal(unsafe.choices[0]!.finish_reason, 'content_filter');
    assert.equal(unsafe.choices[0]!.message.content, '');
    const blocked = await gemini.provider.chat({ model: 'm', messages: [user('x')] }, 'g', {});
    assert.deepEqual(blocked.choices[0]!.message, { role: 'assistant', content: null, refusal: null });
    assert.equal(blocked.choices[0]!.finish_reason, 'content_filter');
    assert.deepEqual(blocked.usage, { prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 });
  });

  it('turns functionCall parts into tool calls (generated ids, JSON-string arguments) and round-trips them', async () => {
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
              ],
            },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 12, totalTokenCount: 42 },
      },
    });
    const tools = [
      {
        type: 'function',
        function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } } },
      },
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
    ];
    const request: ChatCompletionRequest = { model: 'm', messages: [user('Weather and time in Paris?')], tools };
    const first = await gemini.provider.chat(request, 'gemini-3-pro-preview', {});
    const choice = first.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    const calls = choice.message.tool_calls!;
    assert.equal(calls.length, 2);
    assert.match(calls[0]!.id, /^call_[0-9a-f]{24}$/);
    assert.notEqual(calls[0]!.id, calls[1]!.id);
    assert.deepEqual(calls[0]!.function, { name: 'get_weather', arguments: '{"city":"Paris","days":2}' });
    assert.deepEqual(calls[1]!.function, { name: 'get_time', arguments: '{}' });
    assert.deepEqual((calls[0] as unknown as { extra_content: unknown }).extra_content, { google: { thought_signature: 'U0lHLTE=' } });

    // The client sends the assistant message back as received, plus the tool results (in reverse order).
    gemini.fake.script({ kind: 'json', body: geminiTextReply('Sunny in Paris at noon.') });
    const second = await gemini.provider.chat(
      {
        ...request,
        messages: [
          ...request.messages,
          choice.message as ChatMessage,
          { role: 'tool', tool_call_id: calls[1]!.id, content: '{"time":"12:00"}' },
          { role: 'tool', tool_call_id: calls[0]!.id, content: '{"sky":"sunny"}' },
        ],
      },
      'gemini-3-pro-preview',
      {},
    );
    assert.equal(second.choices[0]!.message.content, 'Sunny in Paris at noon.');
    const contents = gemini.fake.requests.at(-1)!.body['contents'];
    assert.deepEqual(contents, [
      { role: 'user', parts: [{ text: 'Weather and time in Paris?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris', days: 2 } }, thoughtSignature: 'U0lHLTE=' },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_time', response: { time: '12:00' } } },
          { functionResponse: { name: 'get_weather', response: { sky: 'sunny' } } },
        ],
      },
    ]);
  });

  it('maps logprobs when they were asked for', async () => {
    gemini.fake.script({
      kind: 'json',
      body: geminiTextReply('Hi', {
        candidates: [
          {
            index: 0,
            content: { role: 'model', parts: [{ text: 'Hi' }] },
            finishReason: 'STOP',
            logprobsResult: {
              chosenCandidates: [{ token: 'Hi', logProbability: -0.1 }],
              topCandidates: [
                {
                  candidates: [
                    { token: 'Hi', logProbability: -0.1 },
                    { token: 'Hello', logProbability: -2.5 },
                  ],
                },
              ],
            },
          },
        ],
      }),
    });
    const completion = await gemini.provider.chat({ model: 'm', messages: [user('x')], logprobs: true, top_logprobs: 2 }, 'g', {});
    assert.deepEqual(completion.choices[0]!.logprobs, {
      content: [
        {
          token: 'Hi',
          logprob: -0.1,
          bytes: null,
          top_logprobs: [
            { token: 'Hi', logprob: -0.1, bytes: null },
            { token: 'Hello', logprob: -2.5, bytes: null },
          ],
        },
      ],
      refusal: null,
    });
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
        await assert.rejects(gemini.provider.chat({ model: 'm', messages: [user('x')] }, 'g', {}), (err: unknown) => {
          assert.ok(err instanceof GatewayError);
          assert.equal(err.code, 'upstream_error');
          assert.equal(err.status, status);
          assert.match(err.message, message);
          return true;
        });
      });
    }

    it('a rate limit (429 RESOURCE_EXHAUSTED) keeps its Retry-After', async () => {
      gemini.fake.script({
        kind: 'error',
        status: 429,
        headers: { 'retry-after': '30' },
        body: { error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } },
      });
      await assert.rejects(gemini.provider.chat({ model: 'm', messages: [user('x')] }, 'g', {}), (err: unknown) => {
        assert.ok(err instanceof GatewayError);
        assert.equal(err.status, 429);
        assert.equal(err.message, 'Resource has been exhausted (e.g. check quota).');
        assert.equal(err.headers['retry-after'], '30');
        return true;
      });
    });

    it('a wrong API key (Google answers 400) is reported, and the key was sent only as a header', async () => {
      const wrong = createProvider('gem-wrong', { ...fakeGeminiProviderConfig(gemini.fake), apiKey: 'AIzaWrong' });
      try {
        await assert.rejects(wrong.chat({ model: 'm', messages: [user('x')] }, 'g', {}), (err: unknown) => {
          assert.ok(err instanceof GatewayError);
          assert.equal(err.status, 400);
          assert.equal(err.message, 'API key not valid. Please pass a valid API key.');
          return true;
        });
        assert.equal(gemini.fake.requests.at(-1)!.headers['x-goog-api-key'], 'AIzaWrong');
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
        const completion = await retrying.chat({ model: 'm', messages: [user('x')] }, 'g', {});
        assert.equal(completion.choices[0]!.message.content, 'second try');
        assert.equal(gemini.fake.requests.length - before, 2);
        assert.deepEqual(gemini.fake.requests.at(-1)!.body, gemini.fake.requests.at(-2)!.body, 'the retry sent the same body');
      } finally {
        await retrying.close();
      }
    });
  });
});
