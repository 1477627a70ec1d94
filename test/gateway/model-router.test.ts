import assert from 'node:assert/strict';
import { GatewayError } from '../../src/http/errors';
import { ConfigModelRouter } from '../../src/providers/router';
import { testConfig } from '../helpers/config';

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
