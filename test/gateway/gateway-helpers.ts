// Shared setup for the HTTP-level gateway tests: a fake OpenAI-format upstream and a real gateway whose
// `up` provider points at it.
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import type { Logger } from 'winston';
import type { Store } from '../../src/store/port';
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
  /** Replaces the base organizations (e.g. organizationsWithDlp()). */
  organizations?: Record<string, unknown>[];
  /** Other top-level config sections (e.g. `responses`, `store`, `queue`). */
  config?: Record<string, unknown>;
  /** Use this store (the caller closes it; its config goes in `config.store`) instead of a fresh embedded one. */
  store?: Store;
  /** The gateway's logger (tests that read the access log). */
  logger?: Logger;
}

export async function startGatewayWithUpstream(options: GatewayWithUpstreamOptions = {}): Promise<GatewayWithUpstream> {
  const upstream = await startFakeOpenAiUpstream();
  const gw = await startTestGateway({
    config: {
      providers: {
        demo: { type: 'demo' },
        up: {
          type: 'openai',
          baseUrl: upstream.baseUrl,
          apiKey: 'sk-upstream-key',
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
      ...(options.organizations ? { organizations: options.organizations } : {}),
      ...(options.config ?? {}),
    },
    ...(options.store ? { store: options.store } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
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
export async function waitForUsage(
  gw: TestGateway,
  orgId: string,
  model: string,
  timeoutMs = 3000,
): Promise<{ promptTokens: number; completionTokens: number; requests: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const totals = await gw.store.usage.totals(orgId, null);
    const found = totals.find((t) => t.model === model);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no usage recorded for ${model}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
