// The bedrock-anthropic provider's chat()/chatStream() against a fake Bedrock runtime that checks SigV4
// server-side and streams in AWS event-stream framing. The signer, the event-stream decoder and the
// canonical interface are tested in bedrock-anthropic-canonical.test.ts.
import assert from 'node:assert/strict';
import type { ProviderConfig } from '../../src/config/types';
import { GatewayError } from '../../src/http/errors';
import type { AnthropicFamilyProvider } from '../../src/providers/anthropic/anthropic-family-provider';
import { createBedrockAnthropicProvider } from '../../src/providers/bedrock-anthropic/bedrock-anthropic-provider';
import type { ChatCompletionChunk } from '../../src/providers/types';
import { reassemble, textMessage, textThenToolEvents } from '../fixtures/upstreams/anthropic-events';
import { BEDROCK_TEST_CREDENTIALS, startFakeBedrock, type FakeBedrock } from '../fixtures/upstreams/bedrock-upstream';

const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

describe('providers/bedrock-anthropic', () => {
  describe('against a fake Bedrock runtime', () => {
    let upstream: FakeBedrock;
    let provider: AnthropicFamilyProvider;
    let config: ProviderConfig;

    before(async () => {
      upstream = await startFakeBedrock();
      config = { type: 'bedrock-anthropic', baseUrl: upstream.baseUrl, ...BEDROCK_TEST_CREDENTIALS, retries: { max: 0 } };
      provider = createBedrockAnthropicProvider('bedrock', config);
    });
    after(async () => {
      await provider.close();
      await upstream.close();
    });
    beforeEach(() => upstream.requests.splice(0));

    it('signs InvokeModel (model in the path), sends the bedrock anthropic_version body and translates the reply', async () => {
      upstream.script({ kind: 'json', body: textMessage('Bonjour', { stop_reason: 'stop_sequence', stop_sequence: '###' }) });
      const completion = await provider.chat(
        {
          model: 'claude-bedrock',
          messages: [
            { role: 'system', content: 'Speak French.' },
            { role: 'user', content: 'Hello' },
          ],
          stop: ['###'],
          user: 'u1',
          max_tokens: 50,
        },
        MODEL,
        {},
      );
      const seen = upstream.requests[0];
      assert.ok(seen);
      assert.equal(seen.signatureValid, true);
      assert.equal(seen.rawPath, '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/invoke');
      assert.equal(seen.headers['x-amz-security-token'], BEDROCK_TEST_CREDENTIALS.sessionToken);
      assert.deepEqual(seen.body, {
        anthropic_version: 'bedrock-2023-05-31',
        messages: [{ role: 'user', content: 'Hello' }],
        max_tokens: 50,
        system: 'Speak French.',
        stop_sequences: ['###'],
      });
      assert.equal(completion.choices[0]?.message.content, 'Bonjour');
      assert.equal(completion.choices[0]?.finish_reason, 'stop');
      assert.deepEqual(completion.usage, { prompt_tokens: 25, completion_tokens: 7, total_tokens: 32 });
    });

    it('streams InvokeModelWithResponseStream event-stream frames (split mid-frame) into chunks without losing the tool call', async () => {
      upstream.script({ kind: 'stream', events: textThenToolEvents(), chunkBytes: 9 });
      const chunks = await collect(provider.chatStream({ model: 'claude-bedrock', messages: [{ role: 'user', content: 'weather?' }] }, MODEL, {}));
      const seen = upstream.requests[0];
      assert.equal(seen?.signatureValid, true);
      assert.equal(seen?.rawPath, '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/invoke-with-response-stream');
      assert.equal(seen?.body['stream'], undefined);
      const result = reassemble(chunks);
      assert.equal(result.content, 'Okay, let me check.');
      assert.deepEqual(result.toolCalls, [{ id: 'toolu_01Weather', name: 'get_weather', arguments: '{"location": "San Francisco, CA"}' }]);
      assert.equal(result.finish, 'tool_calls');
      assert.deepEqual(result.usage, { prompt_tokens: 482, completion_tokens: 89, total_tokens: 571, prompt_tokens_details: { cached_tokens: 10 } });
    });

    it('JSON mode through Bedrock: raw JSON content when streaming', async () => {
      const events = [
        textThenToolEvents()[0] as Record<string, unknown>,
        { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'json_response', input: {} } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"ok":' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: ' true}' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 5 } },
        { type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 472, outputTokenCount: 5 } },
      ];
      upstream.script({ kind: 'stream', events });
      const result = reassemble(
        await collect(provider.chatStream({ model: 'm', messages: [{ role: 'user', content: 'q' }], response_format: { type: 'json_object' } }, MODEL, {})),
      );
      assert.deepEqual(upstream.requests[0]?.body['tool_choice'], { type: 'tool', name: 'json_response' });
      assert.equal(result.content, '{"ok": true}');
      assert.equal(result.finish, 'stop');
    });

    it('ends the stream with an error on an exception frame, after the chunks already translated', async () => {
      upstream.script({
        kind: 'stream',
        events: textThenToolEvents().slice(0, 4),
        exception: { type: 'throttlingException', message: 'Too many tokens, please wait before trying again.' },
      });
      const seen: ChatCompletionChunk[] = [];
      await assert.rejects(
        (async () => {
          for await (const chunk of provider.chatStream({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, MODEL, {})) seen.push(chunk);
        })(),
        (err: unknown) => err instanceof GatewayError && /throttlingException/.test(err.message) && /Too many tokens/.test(err.message),
      );
      assert.equal(reassemble(seen).content, 'Okay, let me ');
    });

    it('fails the stream on a frame whose CRC does not match', async () => {
      upstream.script({ kind: 'stream', events: textThenToolEvents(), corruptFrame: 3 });
      await assert.rejects(collect(provider.chatStream({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, MODEL, {})), /checksum mismatch/);
    });

    it('passes Bedrock errors with their status and message; a wrong secret is refused by the signature check', async () => {
      upstream.script({ kind: 'error', status: 400, errorType: 'ValidationException', message: 'messages: text content blocks must be non-empty' });
      await assert.rejects(provider.chat({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, MODEL, {}), (err: unknown) => {
        return err instanceof GatewayError && err.status === 400 && /HTTP 400: messages: text content blocks must be non-empty/.test(err.message);
      });
      const wrong = createBedrockAnthropicProvider('bedrock-wrong', { ...config, secretAccessKey: 'not-the-secret' });
      try {
        await assert.rejects(wrong.chat({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, MODEL, {}), (err: unknown) => {
          return err instanceof GatewayError && err.status === 403 && /signature we calculated does not match/.test(err.message);
        });
      } finally {
        await wrong.close();
      }
      assert.equal(upstream.requests.at(-1)?.signatureValid, false);
    });
  });
});
