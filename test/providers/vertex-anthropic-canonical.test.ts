// The vertex-anthropic provider's canonical interface (generate/stream) against a fake Vertex AI and a
// fake Google token endpoint that checks the RS256 JWT with the test key pair's public key and counts
// exchanges.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProviderConfig } from '../../src/config/types';
import { GatewayError } from '../../src/http/errors';
import { createVertexAnthropicProvider } from '../../src/providers/vertex-anthropic/vertex-anthropic-provider';
import type { Provider } from '../../src/providers/types';
import { textMessage, textThenToolEvents } from '../fixtures/upstreams/anthropic-events';
import { generateTestServiceAccount, startFakeVertex, type FakeVertex, type TestServiceAccount } from '../fixtures/upstreams/vertex-upstream';
import { collect } from '../helpers/async-iterables';
import { modelRequest, streamedText } from '../helpers/canonical';

const MODEL = 'claude-sonnet-4@20250514';

/** The provider's canonical interface. */
function canonical(provider: Provider): Pick<Provider, 'generate' | 'stream'> {
  return { generate: provider.generate.bind(provider), stream: provider.stream.bind(provider) };
}

describe('providers/vertex-anthropic canonical interface', () => {
  let account: TestServiceAccount;
  let upstream: FakeVertex;
  let config: ProviderConfig;
  const providers: Provider[] = [];
  let clock = Date.now();
  const now = (): number => clock;

  const make = (overrides: Partial<ProviderConfig> = {}): ReturnType<typeof canonical> => {
    const provider = createVertexAnthropicProvider('vertex', { ...config, ...overrides }, { now });
    providers.push(provider);
    return canonical(provider);
  };

  before(async () => {
    account = generateTestServiceAccount();
    upstream = await startFakeVertex(account);
    config = {
      type: 'vertex-anthropic',
      baseUrl: upstream.baseUrl,
      tokenUrl: upstream.tokenUrl,
      projectId: 'test-project',
      region: 'us-east5',
      serviceAccountKey: account.json,
      retries: { max: 0 },
    };
  });
  after(async () => {
    await Promise.all(providers.map((p) => p.close()));
    await upstream.close();
  });
  beforeEach(() => {
    upstream.requests.splice(0);
    upstream.tokenRequests.splice(0);
    upstream.tokenRejections.splice(0);
  });

  it('exchanges a signed JWT for a token, calls rawPredict with the vertex body, and reuses the token until it expires', async () => {
    const provider = make();
    upstream.script(
      { kind: 'json', body: textMessage('Hello from Vertex') },
      { kind: 'sse', events: textThenToolEvents() },
      { kind: 'json', body: textMessage('again') },
    );

    const response = await provider.generate(modelRequest({ options: { temperature: 0.5, maxOutputTokens: 64 } }), MODEL, {});
    assert.deepEqual(response.content, [{ type: 'text', text: 'Hello from Vertex' }]);
    assert.equal(upstream.tokenRequests.length, 1);
    const exchange = upstream.tokenRequests[0];
    assert.equal(exchange?.header['kid'], 'test-key-id-1');
    assert.equal(exchange?.claims['iss'], account.clientEmail);
    assert.equal(exchange?.claims['aud'], upstream.tokenUrl, 'aud is the token URL actually used (config.tokenUrl)');
    const seen = upstream.requests[0];
    assert.equal(seen?.rawPath, '/v1/projects/test-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict');
    assert.equal(seen?.headers['authorization'], 'Bearer ya29.fake-token-1');
    assert.deepEqual(seen?.body, { anthropic_version: 'vertex-2023-10-16', messages: [{ role: 'user', content: 'hi' }], max_tokens: 64, temperature: 0.5 });

    // Cached: a stream half an hour later uses the same token.
    clock += 30 * 60_000;
    const parts = await collect(provider.stream(modelRequest(), MODEL, {}));
    assert.equal(upstream.tokenRequests.length, 1);
    assert.equal(upstream.requests[1]?.rawPath.endsWith(':streamRawPredict'), true);
    assert.equal(upstream.requests[1]?.body['stream'], true);
    assert.equal(upstream.requests[1]?.body['model'], undefined);
    assert.equal(streamedText(parts), 'Okay, let me check.');
    assert.deepEqual(
      parts.find((p) => p.type === 'tool-call-start'),
      { type: 'tool-call-start', id: 'b1', callId: 'toolu_01Weather', name: 'get_weather' },
    );
    assert.equal(parts.map((p) => (p.type === 'tool-call-delta' ? p.delta : '')).join(''), '{"location": "San Francisco, CA"}');
    assert.equal((parts.at(-1) as { finishReason?: string }).finishReason, 'tool_calls');

    // Expired (an hour later): a new exchange.
    clock += 60 * 60_000;
    await provider.generate(modelRequest(), MODEL, {});
    assert.equal(upstream.tokenRequests.length, 1 + 1);
    assert.equal(upstream.requests[2]?.headers['authorization'], 'Bearer ya29.fake-token-2');
  });

  it('shares one token exchange between concurrent first calls', async () => {
    const provider = make();
    upstream.script(...[1, 2, 3].map(() => ({ kind: 'json' as const, body: textMessage('ok') })));
    await Promise.all([
      provider.generate(modelRequest(), MODEL, {}),
      provider.generate(modelRequest(), MODEL, {}),
      provider.generate(modelRequest(), MODEL, {}),
    ]);
    assert.equal(upstream.tokenRequests.length, 1);
    assert.equal(upstream.requests.length, 3);
  });

  it('reads the service-account key from a file path', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vertex-key-'));
    try {
      const path = join(dir, 'key.json');
      await writeFile(path, account.json);
      const provider = make({ serviceAccountKey: path });
      upstream.script({ kind: 'json', body: textMessage('from file') });
      const response = await provider.generate(modelRequest(), MODEL, {});
      assert.deepEqual(response.content, [{ type: 'text', text: 'from file' }]);
      assert.equal(upstream.tokenRequests.length, 1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports a refused token exchange as a 502 naming the reason (a key the endpoint does not know)', async () => {
    const stranger = generateTestServiceAccount();
    const provider = make({ serviceAccountKey: stranger.json });
    await assert.rejects(provider.generate(modelRequest(), MODEL, {}), (err: unknown) => {
      return err instanceof GatewayError && err.status === 502 && /token exchange failed/.test(err.message) && /Invalid JWT Signature/.test(err.message);
    });
    assert.deepEqual(upstream.tokenRejections, ['Invalid JWT Signature.']);
    assert.equal(upstream.requests.length, 0);
  });

  it('passes a 401 through, then fetches a fresh token on the next call (streamed calls too)', async () => {
    const provider = make();
    upstream.script({ kind: 'json', body: textMessage('first') });
    await provider.generate(modelRequest(), MODEL, {});
    upstream.revokeTokens();
    await assert.rejects(
      collect(provider.stream(modelRequest(), MODEL, {})),
      (err: unknown) => err instanceof GatewayError && err.status === 401 && /invalid authentication credentials/.test(err.message),
    );
    upstream.script({ kind: 'json', body: textMessage('after refresh') });
    const response = await provider.generate(modelRequest(), MODEL, {});
    assert.deepEqual(response.content, [{ type: 'text', text: 'after refresh' }]);
    assert.equal(upstream.tokenRequests.length, 2);
  });

  it('passes Anthropic errors relayed by Vertex with their status and message', async () => {
    const provider = make();
    upstream.script({
      kind: 'error',
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages.0.content: Field required' } },
    });
    await assert.rejects(provider.generate(modelRequest(), MODEL, {}), (err: unknown) => {
      return (
        err instanceof GatewayError && err.status === 400 && err.type === 'invalid_request_error' && /messages\.0\.content: Field required/.test(err.message)
      );
    });
  });

  it('refuses a configuration without project, region or key at construction', () => {
    assert.throws(() => createVertexAnthropicProvider('v', { type: 'vertex-anthropic', region: 'us-east5' }), /needs projectId, region and serviceAccountKey/);
  });
});
