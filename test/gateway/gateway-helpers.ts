// Shared setup for the HTTP-level gateway tests: a fake OpenAI-format upstream and a real gateway whose
// `up` provider points at it (allowPrivateNetwork: the fake listens on 127.0.0.1).
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { buildApp } from '../../src/app';
import { createLogger } from '../../src/log/logger';
import { syncConfiguredState } from '../../src/startup';
import { TEST_KEYS, testConfig, type ConfigDocument, type TestGateway } from '../helpers/gateway';
import { openTestStore } from '../helpers/store';
import { startFakeOpenAiUpstream, type FakeOpenAiUpstream } from '../fixtures/upstreams/openai-upstream';

export interface GatewayWithUpstream {
  gw: TestGateway;
  upstream: FakeOpenAiUpstream;
  close(): Promise<void>;
}

export interface GatewayWithUpstreamOptions {
  /** Merged into the `up` provider. */
  provider?: Record<string, unknown>;
  /** Extra providers; the string `UPSTREAM` in a baseUrl becomes the fake upstream's base URL. */
  providers?: Record<string, Record<string, unknown>>;
  models?: Record<string, unknown>[];
  plugins?: Record<string, unknown>;
}

export async function startGatewayWithUpstream(options: GatewayWithUpstreamOptions = {}): Promise<GatewayWithUpstream> {
  const upstream = await startFakeOpenAiUpstream();
  const gw = await startGatewayOnly({
    config: {
      providers: {
        demo: { type: 'demo' },
        up: {
          type: 'openai',
          baseUrl: upstream.baseUrl,
          apiKey: 'sk-upstream-key',
          allowPrivateNetwork: true,
          retries: { max: 2, baseDelayMs: 10, maxDelayMs: 2000 },
          ...(options.provider ?? {}),
        },
        ...Object.fromEntries(
          Object.entries(options.providers ?? {}).map(([name, p]) => [name, { ...p, ...(p['baseUrl'] === 'UPSTREAM' ? { baseUrl: upstream.baseUrl } : {}) }]),
        ),
      },
      models: [
        { id: 'demo', provider: 'demo', created: 1700000000 },
        { id: 'gpt-test', provider: 'up' },
        { id: 'alias', provider: 'up', upstream: 'gpt-real-2024' },
        ...(options.models ?? []),
      ],
      plugins: { auth: { enabled: true }, stripFields: { enabled: true }, audit: { enabled: true, flushIntervalMs: 20 }, ...(options.plugins ?? {}) },
    },
  });
  return {
    gw,
    upstream,
    async close() {
      await gw.close();
      await upstream.close();
    },
  };
}

export async function postRaw(gw: TestGateway, path: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}${path}`, { method: 'POST', headers: { ...gw.auth('member'), 'content-type': 'application/json', ...headers }, body });
}

/** Polls the store until the organization's usage for `model` shows up (the audit plugin writes in batches). */
export async function waitForUsage(gw: TestGateway, orgId: string, model: string, timeoutMs = 3000): Promise<{ promptTokens: number; completionTokens: number; requests: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const totals = await gw.store.usage.totals(orgId, null);
    const found = totals.find((t) => t.model === model);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no usage recorded for ${model}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Like startTestGateway but without the serve runtime (run sweepers, schedules): the gateway routes need
 * only the app. (startTestGateway currently fails at start-up in the run sweeper on the embedded store.)
 */
async function startGatewayOnly(options: { config: ConfigDocument }): Promise<TestGateway> {
  const config = testConfig(options.config);
  const logger = createLogger({ level: 'error', silent: process.env['TEST_LOGS'] !== '1' });
  const owned = await openTestStore('embedded');
  await syncConfiguredState(config, owned.store, logger);
  const gateway = await buildApp(config, { store: owned.store, logger });
  const server = createServer(gateway.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed = false;
  return {
    url: `http://127.0.0.1:${port}`,
    config,
    gateway,
    store: owned.store,
    runtime: { close: async () => {} } as unknown as TestGateway['runtime'],
    auth: (who) => ({ authorization: `Bearer ${TEST_KEYS[who]}` }),
    async close() {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.close();
      await owned.cleanup();
    },
  };
}
