// rateLimit: per organization and per user budgets (organizations[].rateLimit), counted in memory with
// the inline queue and in Redis with bullmq (one budget across every gateway process). Exceeding one
// gives 429 with Retry-After in the envelope of the path family.
import { GatewayError } from '../../src/http/errors';
import { createRequestCounter } from '../../src/limits/request-counter';
import type { Budget, Verdict } from '../../src/limits/sliding-window';
import { definePlugin } from '../../src/pipeline/plugin';
import type { Principal } from '../../src/store/types';
import { BudgetTable, describeBudget } from './budgets';

export interface RateLimitConfig {
  enabled: boolean;
  redisTimeoutMs: number;
}

export const RATE_LIMIT_DEFAULTS: RateLimitConfig = { enabled: true, redisTimeoutMs: 250 };

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
    // The counters (src/limits/) are the core's: the console's sign-in limit counts with them too.
    const counter = createRequestCounter({
      redis: deps.redis,
      prefix: `${deps.config.queue.prefix}:rl:`,
      timeoutMs: config.redisTimeoutMs,
      logger: deps.logger,
      logFields: { plugin: 'rateLimit' },
    });

    return {
      onRequest(ctx) {
        const principal = ctx.principal;
        if (!principal) return;
        const budgets = table.budgetsOf(principal);
        if (budgets.length === 0) return;
        const verdict = counter.hit(budgets);
        // In memory the verdict is at hand: no promise on the request path.
        if (!(verdict instanceof Promise)) {
          if (verdict.denied >= 0) throw rejection(verdict, budgets, principal);
          return;
        }
        return verdict.then((counted) => {
          if (counted.denied >= 0) throw rejection(counted, budgets, principal);
        });
      },
      async close() {
        counter.close();
      },
    };
  },
});
