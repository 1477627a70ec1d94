// Counts requests against sliding-window budgets for every limiter of the gateway (the rateLimit
// plugin's organization and user budgets, the console's sign-in limit per client address): in memory
// with queue.driver inline (one process), in Redis with bullmq (one count across every gateway process).
// Redis trouble fails open: a request is admitted uncounted rather than refused because a counter is
// away, and the outage is logged at most every ten seconds.
import type { RedisProvider } from '../queue/redis';
import { errorFields } from '../log/logger';
import { MemoryCounter } from './memory-counter';
import { RedisCounter } from './redis-counter';
import { ADMITTED, type Budget, type Verdict } from './sliding-window';

/** ioredis states in which a command can still be answered soon (else fail open at once). */
const USABLE = new Set(['wait', 'connecting', 'connect', 'ready']);
const FAIL_OPEN_LOG_EVERY_MS = 10_000;

export interface RequestCounter {
  /**
   * Admits the request when every budget has room and counts it against all of them. Synchronous in
   * memory (no promise on the request path), a promise with Redis.
   */
  hit(budgets: readonly Budget[]): Verdict | Promise<Verdict>;
  close(): void;
}

export interface RequestCounterOptions {
  /** The process's Redis (queue.driver bullmq), else null: counted in memory. */
  redis: RedisProvider | null;
  /** Prefix of the Redis keys, e.g. `agw:rl:`. */
  prefix: string;
  /** How long a request waits for Redis before it is admitted uncounted. */
  timeoutMs: number;
  logger: { warn(message: string, fields?: Record<string, unknown>): unknown };
  /** Name the limiter in the fail-open log line (e.g. `{ plugin: 'rateLimit' }`). */
  logFields: Record<string, string>;
}

export function createRequestCounter(options: RequestCounterOptions): RequestCounter {
  const { redis } = options;
  if (redis === null) {
    const memory = new MemoryCounter();
    return { hit: (budgets) => memory.hit(budgets), close: () => memory.close() };
  }

  const counter = new RedisCounter(() => redis.get(), options.prefix);
  let lastFailOpenLog = 0;
  const failOpen = (reason: string, err?: unknown): Verdict => {
    const now = Date.now();
    if (now - lastFailOpenLog >= FAIL_OPEN_LOG_EVERY_MS) {
      lastFailOpenLog = now;
      options.logger.warn('rate limit counters unavailable: admitting requests uncounted', { ...options.logFields, reason, ...errorFields(err) });
    }
    return ADMITTED;
  };
  redis.get(); // connect now rather than on the first request
  return {
    hit(budgets) {
      if (!USABLE.has(redis.get().status)) return Promise.resolve(failOpen('redis not connected'));
      return new Promise<Verdict>((resolve) => {
        const timer = setTimeout(() => resolve(failOpen('redis timeout')), options.timeoutMs);
        counter.hit(budgets).then(
          (verdict) => {
            clearTimeout(timer);
            resolve(verdict);
          },
          (err: unknown) => {
            clearTimeout(timer);
            resolve(failOpen('redis error', err));
          },
        );
      });
    },
    close() {
      // The Redis connection is the process's (closed by the app).
    },
  };
}
