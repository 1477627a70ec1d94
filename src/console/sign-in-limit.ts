// The console's public sign-in routes need no credential, so no organization or user budget (the
// rateLimit plugin's) can apply: each client address gets console.signInRateLimit requests a minute
// instead, on the same sliding-window counters, across every gateway process with Redis (bullmq).
// It is part of the core, on whatever plugins are enabled.
import type { IncomingMessage } from 'node:http';
import type { GatewayConfig } from '../config/types';
import { addressKey, clientAddress } from '../http/client-address';
import { createRequestCounter, type RequestCounter } from '../limits/request-counter';
import type { RedisProvider } from '../queue/redis';

/** How long a sign-in request waits for the Redis counter before it is admitted uncounted (fail open). */
const REDIS_TIMEOUT_MS = 250;

export interface SignInLimit {
  /** Counts the request against its client address: 0 when admitted, else the seconds to wait. */
  admit(req: IncomingMessage): number | Promise<number>;
  close(): void;
}

/** The limit configured by console.signInRateLimit, or null when it is 0 (off). */
export function createSignInLimit(
  config: GatewayConfig,
  redis: RedisProvider | null,
  logger: { warn(message: string, fields?: Record<string, unknown>): unknown },
): SignInLimit | null {
  const limit = config.console.signInRateLimit;
  if (limit === 0) return null;
  const counter: RequestCounter = createRequestCounter({
    redis,
    prefix: `${config.queue.prefix}:signin:`,
    timeoutMs: REDIS_TIMEOUT_MS,
    logger,
    logFields: { limit: 'console.signInRateLimit' },
  });
  const trustProxy = config.server.trustProxy;
  const toSeconds = (retryAfterMs: number, denied: number): number => (denied < 0 ? 0 : Math.max(1, Math.ceil(retryAfterMs / 1000)));
  return {
    admit(req) {
      const address = clientAddress(req, trustProxy);
      const budgets = [{ key: address === null ? 'unknown' : addressKey(address), limit }];
      const verdict = counter.hit(budgets);
      if (!(verdict instanceof Promise)) return toSeconds(verdict.retryAfterMs, verdict.denied);
      return verdict.then((counted) => toSeconds(counted.retryAfterMs, counted.denied));
    },
    close: () => counter.close(),
  };
}
