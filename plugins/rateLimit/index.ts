// rateLimit: per organization and per user budgets (organizations[].rateLimit), counted in memory with
// the inline queue and in Redis with bullmq (one budget across every gateway process). Exceeding one
// gives 429 with Retry-After in the envelope of the path family.
import { GatewayError } from '../../src/http/errors';
import { errorFields } from '../../src/log/logger';
import { definePlugin } from '../../src/pipeline/plugin';
import type { Principal } from '../../src/store/types';
import { BudgetTable, describeBudget } from './budgets';
import { MemoryCounter } from './memory-counter';
import { RedisCounter } from './redis-counter';
import { ADMITTED, type Budget, type Verdict } from './sliding-window';

export interface RateLimitConfig {
  enabled: boolean;
  redisTimeoutMs: number;
}

export const RATE_LIMIT_DEFAULTS: RateLimitConfig = { enabled: true, redisTimeoutMs: 250 };

/** ioredis states in which a command can still be answered soon (else fail open at once). */
const USABLE = new Set(['wait', 'connecting', 'connect', 'ready']);
const FAIL_OPEN_LOG_EVERY_MS = 10_000;

function rejection(verdict: Verdict, budgets: readonly Budget[], principal: Principal): GatewayError {
  const seconds = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
  const which = describeBudget(budgets[verdict.denied] as Budget, principal);
  return new GatewayError('rate_limited', `Rate limit exceeded: ${which}. Retry after ${seconds} s.`, {
    headers: { 'retry-after': String(seconds) },
  });
}

export default definePlugin<RateLimitConfig>({
  name: 'rateLimit',
  phase: 'admit',
  order: 100,
  requires: ['auth'],
  failMode: 'open',
  description: 'Per organization and per user request budgets (organizations[].rateLimit), 429 with Retry-After',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    description:
      'Request budgets per organization (rateLimit.requestsPerMinute) and per user (rateLimit.perUserRequestsPerMinute) over a sliding one-minute window (two fixed windows, the previous one weighted by its overlap). Counters live in memory with queue.driver inline and in Redis (keys under queue.prefix, one round trip per request) with bullmq, shared by every gateway process. Organizations without a rateLimit are unlimited. Exceeded: 429 with Retry-After (seconds). Fails open: when Redis is unreachable requests are admitted and the outage is logged.',
    properties: {
      enabled: { type: 'boolean', default: RATE_LIMIT_DEFAULTS.enabled, description: "Enforce the organizations' rate limits." },
      redisTimeoutMs: {
        type: 'integer',
        minimum: 10,
        default: RATE_LIMIT_DEFAULTS.redisTimeoutMs,
        description: 'How long a request waits for the Redis counter before it is admitted uncounted (fail open).',
      },
    },
  },
  create(partial, deps) {
    const config = { ...RATE_LIMIT_DEFAULTS, ...partial };
    const table = new BudgetTable(deps.config.organizations);
    const redis = deps.redis;

    if (redis === null) {
      const memory = new MemoryCounter();
      return {
        onRequest(ctx) {
          if (!ctx.principal) return;
          const budgets = table.budgetsOf(ctx.principal);
          if (budgets.length === 0) return;
          const verdict = memory.hit(budgets);
          if (verdict.denied >= 0) throw rejection(verdict, budgets, ctx.principal);
        },
        async close() {
          memory.close();
        },
      };
    }

    const counter = new RedisCounter(() => redis.get(), `${deps.config.queue.prefix}:rl:`);
    let lastFailOpenLog = 0;
    const failOpen = (reason: string, err?: unknown): Verdict => {
      const now = Date.now();
      if (now - lastFailOpenLog >= FAIL_OPEN_LOG_EVERY_MS) {
        lastFailOpenLog = now;
        deps.logger.warn('rate limit counters unavailable: admitting requests uncounted', { plugin: 'rateLimit', reason, ...errorFields(err) });
      }
      return ADMITTED;
    };
    const hit = (budgets: readonly Budget[]): Promise<Verdict> => {
      if (!USABLE.has(redis.get().status)) return Promise.resolve(failOpen('redis not connected'));
      return new Promise<Verdict>((resolve) => {
        const timer = setTimeout(() => resolve(failOpen('redis timeout')), config.redisTimeoutMs);
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
    };
    redis.get(); // connect now rather than on the first request

    return {
      async onRequest(ctx) {
        if (!ctx.principal) return;
        const budgets = table.budgetsOf(ctx.principal);
        if (budgets.length === 0) return;
        const verdict = await hit(budgets);
        if (verdict.denied >= 0) throw rejection(verdict, budgets, ctx.principal);
      },
    };
  },
});
