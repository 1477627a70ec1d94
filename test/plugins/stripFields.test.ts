// stripFields: removes the configured top-level fields and reports whether it changed the body.
import assert from 'node:assert/strict';
import stripFieldsPlugin, { DEFAULT_STRIPPED_FIELDS } from '../../plugins/stripFields';
import { fieldStripper } from '../../plugins/stripFields/strip';
import type { UpstreamBodyTransform } from '../../src/pipeline/context';
import { testConfig } from '../helpers/config';

describe('plugins/stripFields', () => {
  it('deletes the listed top-level fields and says it changed the body', () => {
    const strip = fieldStripper(DEFAULT_STRIPPED_FIELDS);
    const body: Record<string, unknown> = {
      model: 'demo',
      messages: [{ role: 'user', content: 'hi', metadata: { kept: true } }],
      metadata: { trace: 'x' },
      litellm_metadata: { user_api_key: 'secret' },
      proxy_server_request: { headers: {} },
    };
    assert.equal(strip(body), true);
    assert.deepEqual(body, { model: 'demo', messages: [{ role: 'user', content: 'hi', metadata: { kept: true } }] });
  });

  it('reports no change for a body without those fields (so the original bytes can be forwarded)', () => {
    const strip = fieldStripper(DEFAULT_STRIPPED_FIELDS);
    const body = { model: 'demo', messages: [] };
    assert.equal(strip(body), false);
    assert.deepEqual(body, { model: 'demo', messages: [] });
  });

  it('ignores inherited properties', () => {
    const body = Object.create({ metadata: 1 }) as Record<string, unknown>;
    assert.equal(fieldStripper(['metadata'])(body), false);
  });

  it('defaults to metadata, litellm_metadata and proxy_server_request in the config schema', () => {
    const config = testConfig({ plugins: { stripFields: { enabled: true } } });
    assert.deepEqual(config.plugins['stripFields'], { enabled: true, fields: ['metadata', 'litellm_metadata', 'proxy_server_request'] });
  });

  it('pushes one transform, built at boot, onto every request context', async () => {
    const hooks = await stripFieldsPlugin.create({ enabled: true, fields: ['user'] } as never, {} as never);
    const first = { upstreamTransforms: [] as UpstreamBodyTransform[] };
    const second = { upstreamTransforms: [] as UpstreamBodyTransform[] };
    await hooks.onRequest?.(first as never);
    await hooks.onRequest?.(second as never);
    assert.equal(first.upstreamTransforms.length, 1);
    assert.equal(first.upstreamTransforms[0], second.upstreamTransforms[0], 'no per-request closure');
    const body: Record<string, unknown> = { user: 'u', metadata: {} };
    assert.equal(first.upstreamTransforms[0]?.(body), true);
    assert.deepEqual(body, { metadata: {} });
  });
});
