import assert from 'node:assert/strict';
import { GatewayError } from '../../src/http/errors';
import { OpenAiProvider } from '../../src/providers/openai/openai-provider';
import type { ChatCompletionChunk } from '../../src/providers/types';
import { chatStreamEvents, startFakeOpenAiUpstream, type FakeOpenAiUpstream } from '../fixtures/upstreams/openai-upstream';

describe('openai provider (library calls)', () => {
  let upstream: FakeOpenAiUpstream;
  let provider: OpenAiProvider;

  beforeEach(async () => {
    upstream = await startFakeOpenAiUpstream();
    provider = new OpenAiProvider('oai', {
      type: 'openai',
      baseUrl: `${upstream.baseUrl}?api-version=2024-10-21`,
      apiKey: 'sk-upstream',
      headers: { 'api-key': 'azure-key', 'OpenAI-Organization': 'org-1' },
      retries: { max: 1, baseDelayMs: 5 },
    });
  });
  afterEach(async () => {
    await provider.close();
    await upstream.close();
  });

  it('chat(): sends the upstream model, key, extra headers, keeps the base URL query, drops stream', async () => {
    const completion = await provider.chat({ model: 'alias', messages: [{ role: 'user', content: 'hi' }], stream: true, x_extra: 1 }, 'gpt-real', {});
    assert.equal(completion.choices[0]?.message.content, 'Hello from upstream');
    const seen = upstream.requests[0]!;
    assert.equal(seen.path, '/v1/chat/completions?api-version=2024-10-21');
    assert.equal(seen.headers['authorization'], 'Bearer sk-upstream');
    assert.equal(seen.headers['api-key'], 'azure-key');
    assert.equal(seen.headers['openai-organization'], 'org-1');
    assert.deepEqual(seen.json(), { model: 'gpt-real', messages: [{ role: 'user', content: 'hi' }], x_extra: 1 });
  });

  it('chatStream(): yields the chunks, asks for the usage chunk', async () => {
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of provider.chatStream({ model: 'alias', messages: [{ role: 'user', content: 'hi' }] }, 'gpt-real', {})) chunks.push(chunk);
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'Hello world');
    assert.equal(chunks.at(-1)?.usage?.prompt_tokens, 5);
    const body = upstream.requests[0]!.json();
    assert.equal(body['stream'], true);
    assert.deepEqual(body['stream_options'], { include_usage: true });
  });

  it('chatStream(): an error event mid-stream throws instead of ending quietly', async () => {
    const events = chatStreamEvents('m', ['a']);
    upstream.script({ kind: 'sse', chunks: [events[0]!, events[1]!, 'data: {"error":{"message":"model overloaded","type":"server_error"}}\n\n'] });
    const seen: ChatCompletionChunk[] = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of provider.chatStream({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, 'm', {})) seen.push(chunk);
      })(),
      (err: unknown) => err instanceof GatewayError && /model overloaded/.test(err.message),
    );
    assert.equal(seen.length, 2);
  });

  it('chatStream(): a stream cut before any finish_reason is an error', async () => {
    const events = chatStreamEvents('m', ['a']);
    upstream.script({ kind: 'sse', chunks: [events[0]!, events[1]!] });
    await assert.rejects(
      (async () => {
        for await (const _ of provider.chatStream({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, 'm', {})) void _;
      })(),
      /ended the stream before it finished/,
    );
  });
});
