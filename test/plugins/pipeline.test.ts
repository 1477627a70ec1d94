// The plugin registry and the pipeline assembled from it: conventions every plugin folder follows,
// ordering by phase/order/name, `requires` checked at boot, disabled plugins out of the chain.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { plugins } from '../../plugins';
import { assemblePipeline, PipelineError, sortPlugins } from '../../src/pipeline/assemble';
import { definePlugin, PHASE_ORDER, type PluginDefinition, type Phase } from '../../src/pipeline/plugin';
import type { GatewayConfig } from '../../src/config/types';
import request from 'supertest';
import { parseConfig } from '../../src/config/load';
import { organizationsWithDlp, testConfig } from '../helpers/config';
import { startTestGateway, TEST_KEYS } from '../helpers/gateway';

const root = path.resolve(__dirname, '../..');

function fake(name: string, phase: Phase, order: number, requires: string[] = [], log: string[] = []): PluginDefinition {
  return definePlugin({
    name,
    phase,
    order,
    requires,
    failMode: 'open',
    description: name,
    configSchema: { type: 'object', properties: { enabled: { type: 'boolean', default: true, description: 'on' } } },
    create() {
      log.push(name);
      return { onRequest() {}, onFinish() {} };
    },
  });
}

function configWith(enabled: Record<string, boolean>): GatewayConfig {
  const config = testConfig();
  return { ...config, plugins: Object.fromEntries(Object.entries(enabled).map(([name, on]) => [name, { enabled: on }])) };
}

describe('plugin pipeline', () => {
  describe('registry conventions', () => {
    const folders = readdirSync(path.join(root, 'plugins'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();

    it('lists exactly the plugin folders, each named after its folder', () => {
      assert.deepEqual(plugins.map((p) => p.name).sort(), folders);
      for (const name of folders) {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const mod = require(path.join(root, 'plugins', name)) as { default: PluginDefinition };
        assert.equal(mod.default.name, name);
        assert.ok(plugins.includes(mod.default), `${name} is registered`);
      }
    });

    it('gives every plugin a phase, a description, a test, and a schema with a description and default per field', () => {
      for (const plugin of plugins) {
        assert.ok(PHASE_ORDER.includes(plugin.phase), plugin.name);
        assert.ok(plugin.description.length > 10, `${plugin.name} description`);
        assert.ok(existsSync(path.join(root, 'test/plugins', `${plugin.name}.test.ts`)), `${plugin.name} has a test`);
        const schema = plugin.configSchema as {
          description?: string;
          additionalProperties?: boolean;
          properties: Record<string, { description?: string; default?: unknown }>;
        };
        assert.ok(schema.description, `${plugin.name} schema description`);
        assert.equal(schema.additionalProperties, false, `${plugin.name} rejects unknown keys`);
        assert.ok(schema.properties['enabled'], `${plugin.name} has enabled`);
        for (const [field, spec] of Object.entries(schema.properties)) {
          assert.ok(spec.description, `plugins.${plugin.name}.${field} has a description`);
          assert.notEqual(spec.default, undefined, `plugins.${plugin.name}.${field} has a default`);
        }
      }
    });

    it('states the fail mode of auth and dlp as closed, in the definition and the schema', () => {
      for (const name of ['auth', 'dlp']) {
        const plugin = plugins.find((p) => p.name === name);
        assert.equal(plugin?.failMode, 'closed');
        assert.match(String(plugin?.configSchema['description']), /fails closed/i);
      }
      assert.match(String(plugins.find((p) => p.name === 'rateLimit')?.configSchema['description']), /fails open/i);
    });

    it('puts the registered plugins in the documented order', () => {
      assert.deepEqual(
        sortPlugins(plugins).map((p) => `${p.phase}:${p.name}`),
        ['authenticate:auth', 'admit:rateLimit', 'admit:budgets', 'inspect:dlp', 'inspect:stripFields', 'record:audit'],
      );
    });

    it('merges every plugin schema into config/gateway.schema.json', () => {
      const text = readFileSync(path.join(root, 'config/gateway.schema.json'), 'utf8');
      const schema = JSON.parse(text) as { properties: { plugins: { properties: Record<string, unknown> } } };
      for (const plugin of plugins) {
        assert.deepEqual(schema.properties.plugins.properties[plugin.name], { ...plugin.configSchema, default: {} }, plugin.name);
      }
    });

    it('a plugin the config file does not mention is on, with its defaults', () => {
      const config = parseConfig('providers: {demo: {type: demo}}\nmodels: [{id: demo, provider: demo}]\n', {}, 'test');
      for (const plugin of plugins) assert.equal(config.plugins[plugin.name]?.enabled, true, plugin.name);
      assert.equal(parseConfig('plugins: {auth: {enabled: false}}\n', {}, 'test').plugins['auth']?.enabled, false);
    });

    it('rejects unknown plugin keys in the config file', () => {
      assert.throws(() => testConfig({ plugins: { nope: { enabled: true } } }), /plugins\.nope/);
      assert.throws(() => testConfig({ plugins: { auth: { enabled: true, cacheSize: 0 } } }), /plugins\.auth\.cacheSize/);
    });
  });

  describe('assemblePipeline', () => {
    const deps = {} as never;

    it('orders by phase, then order, then name, and leaves disabled plugins out of the chain', async () => {
      const log: string[] = [];
      const registry = [
        fake('zeta', 'inspect', 100, [], log),
        fake('audit', 'record', 1, [], log),
        fake('alpha', 'inspect', 100, [], log),
        fake('first', 'inspect', 10, [], log),
        fake('guard', 'authenticate', 500, [], log),
        fake('off', 'identify', 1, [], log),
      ];
      const pipeline = await assemblePipeline(registry, configWith({ zeta: true, audit: true, alpha: true, first: true, guard: true, off: false }), deps);
      assert.deepEqual(
        pipeline.plugins.map((p) => p.definition.name),
        ['guard', 'first', 'alpha', 'zeta', 'audit'],
      );
      assert.deepEqual(log.sort(), ['alpha', 'audit', 'first', 'guard', 'zeta'], 'a disabled plugin is never created');
      assert.equal(pipeline.has('off'), false);
      assert.equal(pipeline.has('guard'), true);
      assert.deepEqual(
        pipeline.beforeBody.map((p) => p.definition.name),
        ['guard'],
      );
      assert.deepEqual(
        pipeline.afterValidation.map((p) => p.definition.name),
        ['first', 'alpha', 'zeta', 'audit'],
      );
      assert.deepEqual(
        pipeline.finishers.map((p) => p.definition.name),
        ['audit', 'zeta', 'alpha', 'first', 'guard'],
      );
    });

    it('fails at boot when a required plugin is disabled or runs later', async () => {
      const registry = [fake('auth', 'authenticate', 100), fake('limit', 'admit', 100, ['auth']), fake('early', 'identify', 1, ['limit'])];
      await assert.rejects(assemblePipeline(registry, configWith({ auth: false, limit: true }), deps), (err: unknown) => {
        assert.ok(err instanceof PipelineError);
        assert.equal(err.message, 'plugins.limit: requires plugin "auth" to be enabled');
        return true;
      });
      await assert.rejects(assemblePipeline(registry, configWith({ auth: true, limit: true, early: true }), deps), /plugins\.early: must run after "limit"/);
      const ok = await assemblePipeline(registry, configWith({ auth: true, limit: true }), deps);
      assert.deepEqual(
        ok.plugins.map((p) => p.definition.name),
        ['auth', 'limit'],
      );
    });

    it('fails at boot on a config key naming no plugin', async () => {
      await assert.rejects(assemblePipeline([fake('a', 'inspect', 1)], configWith({ b: true }), deps), /plugins\.b: no such plugin/);
    });

    it('the real registry: rateLimit requires auth', async () => {
      await assert.rejects(assemblePipeline(plugins, configWith({ rateLimit: true }), deps), /plugins\.rateLimit: requires plugin "auth" to be enabled/);
    });
  });

  describe('the full chain over HTTP', function () {
    this.timeout(60_000);

    it('runs every plugin of the default config on a model call: auth, dlp on message text, audit and usage', async () => {
      const gw = await startTestGateway({
        config: {
          plugins: {
            auth: { enabled: true },
            rateLimit: { enabled: true },
            budgets: { enabled: true },
            dlp: { enabled: true },
            stripFields: { enabled: true },
            audit: { enabled: true, flushIntervalMs: 50 },
          },
          organizations: organizationsWithDlp(),
        },
      });
      try {
        assert.deepEqual(
          gw.gateway.services.pipeline.plugins.map((p) => p.definition.name),
          ['auth', 'rateLimit', 'budgets', 'dlp', 'stripFields', 'audit'],
        );
        const res = await request(gw.url)
          .post('/v1/chat/completions')
          .set('x-api-key', TEST_KEYS.member)
          .set('x-request-id', 'chain-1')
          .send({
            model: 'demo',
            messages: [{ role: 'user', content: 'Mail jane.doe@example.com, card 4111 1111 1111 1111, order 100234987.' }],
            metadata: { trace: 'x' },
          })
          .expect(200);
        const reply = String(res.body.choices?.[0]?.message?.content);
        assert.match(reply, /\[REDACTED:email\], card \[REDACTED:credit_card\], order 100234987/);
        assert.ok(!reply.includes('jane.doe@example.com'));
        const deadline = Date.now() + 20_000;
        let totals = await gw.store.usage.totals('acme', null);
        while (totals.length === 0 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 50));
          totals = await gw.store.usage.totals('acme', null);
        }
        assert.equal(totals[0]?.model, 'demo');
        assert.ok((totals[0]?.promptTokens ?? 0) > 0);
        const audit = await gw.store.audit.list({ orgId: 'acme', since: null, limit: 100, after: null });
        assert.equal(audit.find((r) => r.requestId === 'chain-1')?.route, '/v1/chat/completions');
      } finally {
        await gw.close();
      }
    });

    it('leaves a disabled plugin out of the chain of a running gateway', async () => {
      const gw = await startTestGateway({ config: { plugins: { auth: { enabled: true }, dlp: { enabled: false } } } });
      try {
        assert.equal(gw.gateway.services.pipeline.has('dlp'), false);
        assert.equal(gw.gateway.services.pipeline.has('auth'), true);
        const res = await request(gw.url)
          .post('/v1/chat/completions')
          .set('x-api-key', TEST_KEYS.member)
          .send({ model: 'demo', messages: [{ role: 'user', content: 'Mail jane.doe@example.com' }] })
          .expect(200);
        assert.match(String(res.body.choices?.[0]?.message?.content), /jane\.doe@example\.com/);
      } finally {
        await gw.close();
      }
    });
  });
});
