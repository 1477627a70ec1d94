import type { Redis } from 'ioredis';

/** One lazily created Redis connection shared by the rate limiter and other counters of a process. */
export interface RedisProvider {
  get(): Redis;
  close(): Promise<void>;
}

/** Connection errors while Redis is away repeat on every reconnect attempt: report them at most this often. */
const ERROR_REPORT_INTERVAL_MS = 10_000;

/**
 * A connection with commands waiting that receives nothing for this long is dropped and made again
 * (ioredis's socketTimeout). A Redis host gone without closing the connection otherwise kept it until
 * the kernel gave up (~15 minutes), every command of the rate limiter and live events piling up on it.
 */
export const REDIS_SOCKET_TIMEOUT_MS = 5000;

/**
 * `onError` receives connection errors (rate-limited); without a listener ioredis would print
 * "Unhandled error event" lines, which are not JSON and would break the log format.
 */
export function createRedisProvider(url: string, onError: (err: Error) => void = () => {}): RedisProvider {
  // Loaded only by configurations that use Redis (queue.driver bullmq).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Redis } = require('ioredis') as typeof import('ioredis');
  let client: Redis | null = null;
  let lastReport = 0;
  return {
    get() {
      if (!client) {
        client = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false, socketTimeout: REDIS_SOCKET_TIMEOUT_MS });
        client.on('error', (err: Error) => {
          const now = Date.now();
          if (now - lastReport < ERROR_REPORT_INTERVAL_MS) return;
          lastReport = now;
          onError(err);
        });
      }
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
