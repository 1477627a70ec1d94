import type { Handler } from '../types';

export const getLiveness: Handler = async () => ({ status: 200, body: { status: 'ok' } });

/** Ready when the store answers and the queue (and any plugin with a connection) is reachable. */
export const getReadiness: Handler = async (_ctx, services) => {
  const checks: Record<string, string> = {};
  const probe = async (name: string, fn: () => Promise<void>): Promise<void> => {
    try {
      await Promise.race([fn(), new Promise((_, reject) => setTimeout(() => reject(new Error('timed out after 2s')), 2000).unref())]);
      checks[name] = 'ok';
    } catch (err) {
      checks[name] = `error: ${(err as Error).message}`;
    }
  };
  await Promise.all([
    probe('store', () => services.store.ping()),
    probe('plugins', () => services.pipeline.ready()),
    ...Object.entries(services.readiness).map(([name, check]) => probe(name, check)),
  ]);
  const ok = Object.values(checks).every((v) => v === 'ok');
  return { status: ok ? 200 : 503, body: { status: ok ? 'ok' : 'unavailable', checks } };
};

export const getMetrics: Handler = async (_ctx, services) => ({
  status: 200,
  raw: { contentType: services.metrics.registry.contentType, data: await services.metrics.registry.metrics() },
});
