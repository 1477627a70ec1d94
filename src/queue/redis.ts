import { Redis } from 'ioredis';

/** One lazily created Redis connection shared by the rate limiter and other counters of a process. */
export interface RedisProvider {
  get(): Redis;
  close(): Promise<void>;
}

export function createRedisProvider(url: string): RedisProvider {
  let client: Redis | null = null;
  return {
    get() {
      client ??= new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
      return client;
    },
    async close() {
      if (client) {
        const closing = client;
        client = null;
        await closing.quit().catch(() => closing.disconnect());
      }
    },
  };
}
