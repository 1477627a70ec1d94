// The bedrock-anthropic provider against a fake Bedrock runtime that checks SigV4 server-side and
// streams in AWS event-stream framing: the signer and the event-stream decoder on their own, then the
// canonical interface (generate/stream) end to end.
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import type { StreamPart } from '../../src/canonical/model';
import type { ProviderConfig } from '../../src/config/types';
import { GatewayError } from '../../src/http/errors';
import type { AnthropicFamilyProvider } from '../../src/providers/anthropic/anthropic-family-provider';
import { createBedrockAnthropicProvider } from '../../src/providers/bedrock-anthropic/bedrock-anthropic-provider';
import { decodeAwsEventStream } from '../../src/providers/bedrock-anthropic/decode-aws-event-stream';
import { signAwsRequest } from '../../src/providers/bedrock-anthropic/sign-aws-sigv4';
import { textMessage, textThenToolEvents } from '../fixtures/upstreams/anthropic-events';
import { BEDROCK_TEST_CREDENTIALS, chunkFrame, eventStreamFrame, startFakeBedrock, type FakeBedrock } from '../fixtures/upstreams/bedrock-upstream';
import { collect } from '../helpers/async-iterables';
import { modelRequest, streamedText } from '../helpers/canonical';

const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

async function* chunksOf(bytes: Buffer, size: number): AsyncIterable<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

describe('providers/bedrock-anthropic', () => {
  describe('SigV4 signer', () => {
    it('matches the AWS SigV4 test suite vector get-vanilla', () => {
      // aws-sig-v4-test-suite/get-vanilla: GET / on example.amazonaws.com, 20150830T123600Z, us-east-1, service "service".
      const headers = signAwsRequest({
        method: 'GET',
        url: new URL('https://example.amazonaws.com/'),
        headers: {},
        body: '',
        region: 'us-east-1',
        service: 'service',
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
        now: new Date('2015-08-30T12:36:00Z'),
      });
      assert.equal(
        headers['authorization'],
        'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
      );
      assert.equal(headers['x-amz-date'], '20150830T123600Z');
    });
  });

  describe('event-stream decoder', () => {
    it('uses the standard CRC32 (check value of "123456789" is 0xCBF43926)', () => {
      assert.equal(crc32('123456789'), 0xcbf43926);
    });

    it('decodes frames split at every byte boundary and rejects a bad checksum', async () => {
      const frames = Buffer.concat([chunkFrame({ type: 'ping' }), chunkFrame({ type: 'message_stop' })]);
      const messages = await collect(decodeAwsEventStream(chunksOf(frames, 1)));
      assert.equal(messages.length, 2);
      assert.equal(messages[0]?.headers[':event-type'], 'chunk');
      const payload = JSON.parse(messages[1]?.payload.toString() ?? '') as { bytes: string };
      assert.deepEqual(JSON.parse(Buffer.from(payload.bytes, 'base64').toString()), { type: 'message_stop' });

      const broken = Buffer.from(frames);
      broken[20] = (broken[20] ?? 0) ^ 1;
      await assert.rejects(collect(decodeAwsEventStream(chunksOf(broken, 7))), /checksum mismatch/);
      await assert.rejects(collect(decodeAwsEventStream(chunksOf(frames.subarray(0, frames.length - 3), 64))), /ended inside a message/);
      const badPrelude = Buffer.from(frames);
      badPrelude[2] = 0xff;
      await assert.rejects(collect(decodeAwsEventStream(chunksOf(badPrelude, 64))), /prelude checksum mismatch/);
      assert.ok(eventStreamFrame({}, Buffer.alloc(0)).length === 16);
    });
  });

  describe('canonical interface against a fake Bedrock runtime', () => {
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

    it('signs InvokeModel (model in the path), sends the bedrock anthropic_version body without metadata, and translates the reply', async () => {
      upstream.script({ kind: 'json', body: textMessage('Bonjour', { stop_reason: 'stop_sequence', stop_sequence: '###' }) });
      const response = await provider.generate(
        modelRequest({
          messages: [
            { role: 'system', content: [{ type: 'text', text: 'Speak French.' }] },
            { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
          ],
          options: { stop: ['###'], user: 'u1', maxOutputTokens: 50 },
          extra: { format: 'messages', fields: { anthropic_beta: ['token-efficient-tools-2025-02-19'] } },
        }),
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
        anthropic_beta: ['token-efficient-tools-2025-02-19'],
      });
      assert.deepEqual(response.content, [{ type: 'text', text: 'Bonjour' }]);
      assert.equal(response.finishReason, 'stop');
      assert.equal(response.rawFinishReason, 'stop_sequence');
      assert.equal(response.stopSequence, '###');
      assert.deepEqual(response.usage, { inputTokens: 25, outputTokens: 7 });
    });

    it('does not claim to honour `user`: Bedrock refuses metadata, so the end-user id is never sent', () => {
      assert.equal(provider.honours.has('user'), false);
      assert.equal(provider.honours.has('maxOutputTokens'), true);
      assert.equal(provider.extrasOf, 'messages');
    });

    it('streams InvokeModelWithResponseStream event-stream frames (split mid-frame) into parts without losing the tool call', async () => {
      upstream.script({ kind: 'stream', events: textThenToolEvents(), chunkBytes: 9 });
      const parts = await collect(provider.stream(modelRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'weather?' }] }] }), MODEL, {}));
      const seen = upstream.requests[0];
      assert.equal(seen?.signatureValid, true);
      assert.equal(seen?.rawPath, '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/invoke-with-response-stream');
      assert.equal(seen?.body['stream'], undefined);
      assert.equal(streamedText(parts), 'Okay, let me check.');
      assert.deepEqual(
        parts.find((p) => p.type === 'tool-call-start'),
        { type: 'tool-call-start', id: 'b1', callId: 'toolu_01Weather', name: 'get_weather' },
      );
      assert.equal(parts.map((p) => (p.type === 'tool-call-delta' ? p.delta : '')).join(''), '{"location": "San Francisco, CA"}');
      assert.deepEqual(parts.at(-1), {
        type: 'finish',
        finishReason: 'tool_calls',
        rawFinishReason: 'tool_use',
        stopSequence: null,
        usage: { inputTokens: 482, outputTokens: 89, cachedInputTokens: 10 },
      });
    });

    it('JSON mode through Bedrock: raw JSON text when streaming', async () => {
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
      const parts = await collect(provider.stream(modelRequest({ options: { responseFormat: { type: 'json_object' } } }), MODEL, {}));
      assert.deepEqual(upstream.requests[0]?.body['tool_choice'], { type: 'tool', name: 'json_response' });
      assert.equal(streamedText(parts), '{"ok": true}');
      assert.equal(
        parts.some((p) => p.type === 'tool-call-start'),
        false,
      );
      assert.equal((parts.at(-1) as { finishReason?: string }).finishReason, 'stop');
    });

    it('ends the stream with an error on an exception frame, after the parts already translated', async () => {
      upstream.script({
        kind: 'stream',
        events: textThenToolEvents().slice(0, 4),
        exception: { type: 'throttlingException', message: 'Too many tokens, please wait before trying again.' },
      });
      const seen: StreamPart[] = [];
      await assert.rejects(
        (async () => {
          for await (const part of provider.stream(modelRequest(), MODEL, {})) seen.push(part);
        })(),
        (err: unknown) => err instanceof GatewayError && /throttlingException/.test(err.message) && /Too many tokens/.test(err.message),
      );
      assert.equal(streamedText(seen), 'Okay, let me ');
    });

    it('fails the stream on a frame whose CRC does not match', async () => {
      upstream.script({ kind: 'stream', events: textThenToolEvents(), corruptFrame: 3 });
      await assert.rejects(collect(provider.stream(modelRequest(), MODEL, {})), /checksum mismatch/);
    });

    it('passes Bedrock errors with their status and message; a wrong secret is refused by the signature check', async () => {
      upstream.script({ kind: 'error', status: 400, errorType: 'ValidationException', message: 'messages: text content blocks must be non-empty' });
      await assert.rejects(provider.generate(modelRequest(), MODEL, {}), (err: unknown) => {
        return err instanceof GatewayError && err.status === 400 && /HTTP 400: messages: text content blocks must be non-empty/.test(err.message);
      });
      const wrong = createBedrockAnthropicProvider('bedrock-wrong', { ...config, secretAccessKey: 'not-the-secret' });
      try {
        await assert.rejects(wrong.generate(modelRequest(), MODEL, {}), (err: unknown) => {
          return err instanceof GatewayError && err.status === 403 && /signature we calculated does not match/.test(err.message);
        });
      } finally {
        await wrong.close();
      }
      assert.equal(upstream.requests.at(-1)?.signatureValid, false);
    });

    it('refuses a configuration without credentials at construction', () => {
      assert.throws(
        () => createBedrockAnthropicProvider('b', { type: 'bedrock-anthropic', region: 'us-east-1' }),
        /needs region, accessKeyId and secretAccessKey/,
      );
    });
  });
});
