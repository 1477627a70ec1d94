// The two store/queue pairs a deployment uses, for tests that run on both: the embedded store with the
// inline queue, and PostgreSQL (a test schema) with BullMQ on Redis (keys under a prefix of the test's
// own, deleted afterwards).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { openTestStore, type TestStore } from './store';

export const REDIS_URL = process.env['REDIS_URL'] || 'redis://127.0.0.1:6379';

export type Backend = 'embedded/inline' | 'postgres/bullmq';
export const BACKENDS: readonly Backend[] = ['embedded/inline', 'postgres/bullmq'];

export interface BackendEnv {
  /** Config sections to merge into the gateway's (none for the embedded default). */
  config: Record<string, unknown>;
  /** The PostgreSQL test store (postgres/bullmq), to hand to the gateway. */
  pg: TestStore | null;
  cleanup(): Promise<void>;
}

/** Deletes every Redis key under `prefix` (a test's BullMQ queue and live-event channels). */
export async function deleteRedisKeys(prefix: string, url = REDIS_URL): Promise<void> {
  const redis = new Redis(url);
  try {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}

export async function openBackend(backend: Backend, name: string): Promise<BackendEnv> {
  if (backend === 'embedded/inline') return { config: {}, pg: null, cleanup: async () => undefined };
  const prefix = `agw${name}${randomBytes(4).toString('hex')}`;
  const pg = await openTestStore('postgres');
  return {
    config: { store: { driver: 'postgres', url: pg.config.url }, queue: { driver: 'bullmq', redisUrl: REDIS_URL, prefix } },
    pg,
    async cleanup() {
      await pg.cleanup();
      await deleteRedisKeys(prefix);
    },
  };
}
