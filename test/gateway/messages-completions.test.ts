import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { organizationsWithDlp } from '../helpers/config';
import { postRaw, startGatewayWithUpstream, type GatewayWithUpstream } from './gateway-helpers';

const MEMBER_KEY = 'agw_test_member_0123456789abcdefghijklmno';

describe('gateway: /v1/completions, /v1/messages, DLP, SSRF guard, timeouts', function () {
  let env: GatewayWithUpstream;

  before(async function () {
    this.timeout(90_000); // the embedded store's first start is slow on a busy machine
    env = await startGatewayWithUpstream({
      providers: {
        guarded: { type: 'openai', baseUrl: 'UPSTREAM' }, // no allowPrivateNetwork: a loopback baseUrl needs none
        slow: { type: 'openai', baseUrl: 'UPSTREAM', timeouts: { firstByteMs: 200 }, retries: { max: 0 } },
      },
      models: [
        { id: 'guarded-model', provider: 'guarded' },
        { id: 'slow-model', provider: 'slow' },
      ],
      plugins: { dlp: { enabled: true } },
      organizations: organizationsWithDlp(),
    });
  });
  after(async () => {
    await env.close();
  });
  beforeEach(() => {
    env.upstream.requests.length = 0;
  });

  describe('POST /v1/completions', () => {
    it("forwards the caller's bytes to an OpenAI-format provider and relays the reply (openai SDK)", async () => {
      const client = new OpenAI({ apiKey: MEMBER_KEY, baseURL: `${env.gw.url}/v1`, maxRetries: 0 });
      const completion = await client.completions.create({ model: 'gpt-test', prompt: 'Say ok', max_tokens: 3 });
      assert.equal(completion.choices[0]?.text, 'ok');
      const seen = env.upstream.requests[0]!;
      assert.equal(seen.path, '/v1/completions');
      assert.deepEqual(seen.json(), { model: 'gpt-test', prompt: 'Say ok', max_tokens: 3 });
    });

    it('translates for a model whose provider has no legacy completions: the prompt as one turn, the reply as a text completion', async () => {
      const client = new OpenAI({ apiKey: MEMBER_KEY, baseURL: `${env.gw.url}/v1`, maxRetries: 0 });
      const completion = await client.completions.create({ model: 'demo', prompt: 'Say ok' });
      assert.equal(completion.object, 'text_completion');
      assert.equal(completion.model, 'demo');
      assert.equal(completion.choices[0]?.text, 'Demo reply to: Say ok');
      assert.equal(completion.choices[0]?.finish_reason, 'stop');
      assert.ok((completion.usage?.prompt_tokens ?? 0) > 0);
      const chunks: string[] = [];
      for await (const chunk of await client.completions.create({ model: 'demo', prompt: 'Say ok', stream: true })) chunks.push(chunk.choices[0]?.text ?? '');
      assert.equal(chunks.join(''), 'Demo reply to: Say ok');
    });

    it('400 naming prompt when a translated provider is sent several prompts (one turn answers one prompt)', async () => {
      const res = await postRaw(env.gw, '/v1/completions', JSON.stringify({ model: 'demo', prompt: ['a', 'b'] }));
      assert.equal(res.status, 400);
      const body = (await res.json()) as { error: { param: string } };
      assert.equal(body.error.param, 'prompt');
    });
  });

  describe('POST /v1/messages on an OpenAI-format model (translated)', () => {
    const anthropic = (): Anthropic => new Anthropic({ apiKey: MEMBER_KEY, baseURL: env.gw.url, maxRetries: 0 });

    it('create: Anthropic request in, chat completions upstream, Anthropic message out', async () => {
      const message = await anthropic().messages.create({
        model: 'gpt-test',
        max_tokens: 50,
        system: 'Be terse.',
        messages: [{ role: 'user', content: 'Hi' }],
      });
      assert.equal(message.type, 'message');
      assert.equal(message.role, 'assistant');
      assert.deepEqual(
        message.content.map((b) => (b.type === 'text' ? b.text : b.type)),
        ['Hello from upstream'],
      );
      assert.equal(message.stop_reason, 'end_turn');
      assert.equal(message.usage.input_tokens, 7);
      const sent = env.upstream.requests[0]!.json();
      assert.equal(env.upstream.requests[0]!.path, '/v1/chat/completions');
      // The canonical output cap goes to OpenAI-format upstreams as max_completion_tokens (max_tokens is deprecated).
      assert.equal(sent['max_completion_tokens'], 50);
      assert.deepEqual((sent['messages'] as unknown[])[0], { role: 'system', content: 'Be terse.' });
    });

    it('stream: Anthropic events translated from the upstream chat stream', async () => {
      const stream = anthropic().messages.stream({ model: 'gpt-test', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
      const deltas: string[] = [];
      stream.on('text', (text) => deltas.push(text));
      const final = await stream.finalMessage();
      assert.equal(deltas.join(''), 'Hello world');
      assert.equal(final.stop_reason, 'end_turn');
      assert.equal(env.upstream.requests[0]!.json()['stream'], true);
    });

    it('rejects the svc opt-in with 400 in the Anthropic envelope', async () => {
      const res = await postRaw(
        env.gw,
        '/v1/messages',
        JSON.stringify({ model: 'gpt-test', max_tokens: 5, messages: [{ role: 'user', content: 'x' }], svc: { system_prompt: 'agent_default' } }),
      );
      assert.equal(res.status, 400);
      const body = (await res.json()) as { type: string; error: { type: string; message: string } };
      assert.equal(body.type, 'error');
      assert.equal(body.error.type, 'invalid_request_error');
      assert.match(body.error.message, /svc/);
      assert.equal(env.upstream.requests.length, 0);
    });

    it('the demo model answers /v1/messages too', async () => {
      const message = await anthropic().messages.create({ model: 'demo', max_tokens: 20, messages: [{ role: 'user', content: 'ping' }] });
      assert.deepEqual(
        message.content.map((b) => (b.type === 'text' ? b.text : '')),
        ['Demo reply to: ping'],
      );
    });
  });

  describe('DLP (organization policy on)', () => {
    it('redacts message text (string content and text parts) before forwarding', async () => {
      const res = await postRaw(
        env.gw,
        '/v1/chat/completions',
        JSON.stringify({
          model: 'gpt-test',
          messages: [
            { role: 'user', content: 'mail jane.doe@example.com please' },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'card 4111 1111 1111 1111' },
                { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
              ],
            },
          ],
          x_keep: 1,
        }),
      );
      assert.equal(res.status, 200);
      const sent = env.upstream.requests[0]!.json();
      const [first, second] = sent['messages'] as { content: unknown }[];
      assert.equal(typeof first!.content, 'string');
      assert.doesNotMatch(first!.content as string, /jane\.doe@example\.com/);
      assert.match(first!.content as string, /REDACTED/);
      const parts = second!.content as { type: string; text?: string }[];
      assert.doesNotMatch(parts[0]!.text!, /4111/);
      assert.deepEqual(parts[1], { type: 'image_url', image_url: { url: 'https://example.com/a.png' } });
      assert.equal(sent['x_keep'], 1);
    });

    it('forwards a body without sensitive text unchanged, as the re-serialisation of what was inspected', async () => {
      const body = '{"model":"gpt-test","messages":[{"role":"user","content":"nothing to hide"}],  "n":1}';
      await postRaw(env.gw, '/v1/chat/completions', body);
      assert.equal(env.upstream.requests[0]!.raw.toString(), JSON.stringify(JSON.parse(body)));
    });
  });

  describe('upstream guard rails', () => {
    it('a provider whose baseUrl is 127.0.0.1 works without allowPrivateNetwork (operator URLs are trusted as written)', async () => {
      const res = await postRaw(env.gw, '/v1/chat/completions', JSON.stringify({ model: 'guarded-model', messages: [{ role: 'user', content: 'x' }] }));
      assert.equal(res.status, 200);
      assert.equal(env.upstream.requests.length, 1);
    });

    it('a slow first byte becomes 504 upstream_timeout in the OpenAI envelope', async () => {
      env.upstream.script({ kind: 'hang' });
      const res = await postRaw(env.gw, '/v1/chat/completions', JSON.stringify({ model: 'slow-model', messages: [{ role: 'user', content: 'x' }] }));
      assert.equal(res.status, 504);
      const body = (await res.json()) as { error: { code: string } };
      assert.equal(body.error.code, 'upstream_timeout');
      assert.equal(env.upstream.requests.length, 1);
    });
  });
});
