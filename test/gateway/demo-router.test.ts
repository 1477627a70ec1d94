import assert from 'node:assert/strict';
import { GatewayError } from '../../src/http/errors';
import { DemoProvider } from '../../src/providers/demo/demo-provider';
import { ConfigModelRouter } from '../../src/providers/router';
import { testConfig } from '../helpers/config';

describe('demo provider', () => {
  const demo = new DemoProvider('demo', { type: 'demo' });

  it('answers a step_verdict judge request with a parsable verdict', async () => {
    const completion = await demo.chat(
      {
        model: 'demo',
        messages: [{ role: 'user', content: 'Objective: say hi. Output: hi' }],
        response_format: { type: 'json_schema', json_schema: { name: 'step_verdict', schema: { type: 'object' } } },
      },
      'demo',
      {},
    );
    const verdict = JSON.parse(completion.choices[0]!.message.content!) as { verdict: string; explanation: string };
    assert.equal(verdict.verdict, 'pass');
    assert.equal(typeof verdict.explanation, 'string');
  });

  it('streams the same text as chat() and ends with usage', async () => {
    const request = { model: 'demo', messages: [{ role: 'user' as const, content: 'hello there' }] };
    const full = await demo.chat(request, 'demo', {});
    let text = '';
    let last;
    for await (const chunk of demo.chatStream(request, 'demo', {})) {
      text += chunk.choices[0]?.delta.content ?? '';
      last = chunk;
    }
    assert.equal(text, full.choices[0]!.message.content);
    assert.equal(last?.choices[0]?.finish_reason, 'stop');
    assert.ok(last?.usage && last.usage.completion_tokens > 0);
  });
});

describe('model router', () => {
  const config = testConfig({
    providers: { demo: { type: 'demo' }, up: { type: 'openai', baseUrl: 'https://upstream.example/v1' } },
    models: [
      { id: 'demo', provider: 'demo' },
      { id: 'alias', provider: 'up', upstream: 'real-name' },
    ],
  });
  const router = new ConfigModelRouter(config);
  after(() => router.close());

  it("resolves a model for an organization, with the provider's own name", () => {
    const resolved = router.resolve('acme', 'alias');
    assert.equal(resolved.upstreamModel, 'real-name');
    assert.equal(resolved.provider.type, 'openai');
    assert.deepEqual(
      router.list('other').map((m) => m.id),
      ['demo'],
    );
  });

  it('throws model_not_found naming `model` for unknown or disallowed models', () => {
    for (const [org, model] of [
      ['acme', 'nope'],
      ['other', 'alias'],
    ] as const) {
      assert.throws(
        () => router.resolve(org, model),
        (err: unknown) =>
          err instanceof GatewayError && err.code === 'model_not_found' && err.status === 404 && err.param === 'model' && err.message.includes(model),
      );
    }
  });
});
