// Gemini provider, streaming: streamGenerateContent?alt=sse events (written by the fake in 7-byte TCP
// writes, so lines and UTF-8 characters arrive split) to chat-completion chunks. Tool calls are never
// lost, usage comes last, failures surface as errors rather than as a short answer.
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/http/errors';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../src/providers/types';
import { useFakeGeminiProvider } from '../fixtures/upstreams/gemini-upstream';

const REQUEST: ChatCompletionRequest = { model: 'public', messages: [{ role: 'user', content: 'Say hello' }], stream: true };

function textEvent(text: string, extra: Record<string, unknown> = {}, candidate: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0, ...candidate }],
    usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'stream-resp-1',
    ...extra,
  };
}

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const contentOf = (chunks: ChatCompletionChunk[]): string => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

describe('gemini provider: streaming', () => {
  const gemini = useFakeGeminiProvider();

  it('streams text deltas (split across TCP writes, multi-byte characters included) with the role first and usage last', async () => {
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
    const chunks = await collect(gemini.provider.chatStream(REQUEST, 'gemini-2.5-flash', {}));
    const request = gemini.fake.requests.at(-1)!;
    assert.equal(request.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    assert.equal(request.query.get('alt'), 'sse');
    assert.deepEqual(request.body, { contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }] });

    assert.equal(contentOf(chunks), 'Grüße, 世界 🌍!');
    assert.deepEqual(chunks[0]!.choices[0]!.delta, { role: 'assistant', content: 'Grüße, ' });
    assert.ok(
      chunks.slice(1).every((c) => c.choices[0]!.delta.role === undefined),
      'role only once',
    );
    for (const chunk of chunks) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      assert.equal(chunk.id, 'chatcmpl-stream-resp-1');
      assert.equal(chunk.model, 'gemini-2.5-flash');
      assert.equal(chunk.created, chunks[0]!.created);
    }
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, [{ index: 0, delta: {}, finish_reason: 'stop' }]);
    assert.deepEqual(last.usage, {
      prompt_tokens: 5,
      completion_tokens: 8,
      total_tokens: 13,
      completion_tokens_details: { reasoning_tokens: 2 },
    });
    assert.ok(chunks.slice(0, -1).every((c) => c.usage === undefined && c.choices[0]!.finish_reason === null));
  });

  it('streams every function call as its own tool-call delta (index, id, name, full arguments) and ends with tool_calls', async () => {
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
    const chunks = await collect(gemini.provider.chatStream({ ...REQUEST, tools: [{ type: 'function', function: { name: 'get_weather' } }] }, 'g', {}));
    assert.equal(contentOf(chunks), 'Checking both.');
    const calls = chunks.flatMap((c) => c.choices[0]!.delta.tool_calls ?? []);
    assert.equal(calls.length, 3);
    assert.deepEqual(
      calls.map((c) => [c.index, c.type, c.function?.name, c.function?.arguments]),
      [
        [0, 'function', 'get_weather', '{"city":"Paris"}'],
        [1, 'function', 'get_time', '{"tz":"Europe/Paris"}'],
        [2, 'function', 'get_news', '{}'],
      ],
    );
    assert.ok(calls.every((c) => /^call_[0-9a-f]{24}$/.test(c.id ?? '')));
    assert.equal(new Set(calls.map((c) => c.id)).size, 3);
    assert.deepEqual((calls[0] as unknown as { extra_content: unknown }).extra_content, { google: { thought_signature: 'U0lH' } });
    const last = chunks.at(-1)!;
    assert.equal(last.choices[0]!.finish_reason, 'tool_calls');
    assert.deepEqual(last.usage, { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 });
  });

  it('streams JSON mode as raw JSON text', async () => {
    gemini.fake.script({
      kind: 'sse',
      events: [textEvent('{"verdict":'), textEvent('"pass",'), textEvent('"items":[1,2]}', {}, { finishReason: 'STOP' })],
    });
    const chunks = await collect(gemini.provider.chatStream({ ...REQUEST, response_format: { type: 'json_object' } }, 'g', {}));
    assert.deepEqual(gemini.fake.requests.at(-1)!.body['generationConfig'], { responseMimeType: 'application/json' });
    assert.deepEqual(JSON.parse(contentOf(chunks)), { verdict: 'pass', items: [1, 2] });
  });

  it('maps MAX_TOKENS to length and a blocked prompt to content_filter', async () => {
    gemini.fake.script(
      { kind: 'sse', events: [textEvent('Once upon', {}, { finishReason: 'MAX_TOKENS' })] },
      { kind: 'sse', events: [{ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 } }] },
    );
    const cut = await collect(gemini.provider.chatStream(REQUEST, 'g', {}));
    assert.equal(cut.at(-1)!.choices[0]!.finish_reason, 'length');
    const blocked = await collect(gemini.provider.chatStream(REQUEST, 'g', {}));
    assert.equal(contentOf(blocked), '');
    assert.equal(blocked.at(-1)!.choices[0]!.finish_reason, 'content_filter');
    assert.deepEqual(blocked.at(-1)!.usage, { prompt_tokens: 4, completion_tokens: 0, total_tokens: 4 });
  });

  it('fails with the upstream message when an error event arrives mid-stream', async () => {
    gemini.fake.script({
      kind: 'sse',
      events: [textEvent('Partial '), { error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } }],
    });
    const received: ChatCompletionChunk[] = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of gemini.provider.chatStream(REQUEST, 'g', {})) received.push(chunk);
      })(),
      (err: unknown) => err instanceof GatewayError && err.code === 'upstream_error' && err.message === 'An internal error has occurred.',
    );
    assert.equal(contentOf(received), 'Partial ', 'what arrived before the failure was delivered');
  });

  it('fails rather than ending quietly when the upstream stream stops before a finish reason', async () => {
    gemini.fake.script({ kind: 'sse', events: [textEvent('Half an ans')], endAbruptly: true });
    await assert.rejects(collect(gemini.provider.chatStream(REQUEST, 'g', {})), (err: unknown) => err instanceof GatewayError && err.code === 'upstream_error');
    gemini.fake.script({ kind: 'sse', events: [textEvent('Half an ans')] });
    await assert.rejects(
      collect(gemini.provider.chatStream(REQUEST, 'g', {})),
      (err: unknown) => err instanceof GatewayError && /ended before the answer was complete/.test(err.message),
    );
  });

  it('fails with the upstream status and message when the stream is refused', async () => {
    gemini.fake.script({
      kind: 'error',
      status: 429,
      body: { error: { code: 429, message: 'Quota exceeded for quota metric.', status: 'RESOURCE_EXHAUSTED' } },
    });
    await assert.rejects(
      collect(gemini.provider.chatStream(REQUEST, 'g', {})),
      (err: unknown) => err instanceof GatewayError && err.status === 429 && err.message === 'Quota exceeded for quota metric.',
    );
  });

  it('relays chunks as they arrive and releases the upstream when the caller stops or aborts', async () => {
    gemini.fake.script({ kind: 'hang', firstEvent: textEvent('first') });
    const iterator = gemini.provider.chatStream(REQUEST, 'g', {})[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.equal(first.value?.choices[0]?.delta.content, 'first', 'the first chunk arrived while the upstream was still open');
    await iterator.return?.();
    await gemini.fake.clientGone();

    gemini.fake.script({ kind: 'hang', firstEvent: textEvent('again') });
    const controller = new AbortController();
    const aborted = gemini.provider.chatStream(REQUEST, 'g', { signal: controller.signal })[Symbol.asyncIterator]();
    assert.equal((await aborted.next()).value?.choices[0]?.delta.content, 'again');
    controller.abort();
    await gemini.fake.clientGone();
    await assert.rejects(aborted.next());
  });
});
