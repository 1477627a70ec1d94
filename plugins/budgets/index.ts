// budgets: token and cost budgets per organization, user and API key (organizations[].budgets,
// users[].budgets, ApiKeyRecord.budgets), per UTC day or month. A model-calling request whose caller
// has a used-up budget is refused before the upstream call (429, Retry-After, the message naming the
// budget and when it resets); agent runs are admitted before each model call through the guard this
// plugin offers (PluginHooks.budgets), without an HTTP request. Counted in Redis with queue.driver
// bullmq (shared by every process), else from the store's usage records.
import { definePlugin } from '../../src/pipeline/plugin';
import { RedisBudgetCounter, StoreBudgetCounter, type BudgetCounter } from './counters';
import { Guard } from './guard';
import { BudgetTable } from './table';

export interface BudgetsConfig {
  enabled: boolean;
  redisTimeoutMs: number;
  storeRefreshMs: number;
}

export const BUDGETS_DEFAULTS: BudgetsConfig = { enabled: true, redisTimeoutMs: 250, storeRefreshMs: 1000 };

/** The operations that call a model (runs are admitted by the run executor, step by step). */
export const MODEL_OPERATIONS: ReadonlySet<string> = new Set(['createChatCompletion', 'createCompletion', 'createMessage', 'createResponse']);

export default definePlugin<BudgetsConfig>({
  name: 'budgets',
  phase: 'admit',
  order: 200,
  requires: [],
  failMode: 'open',
  description: 'Token and cost budgets per organization, user and API key, per UTC day or month; 429 with Retry-After before the upstream call',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    description:
      'Token and cost budgets (organizations[].budgets, organizations[].users[].budgets, and the budgets of API keys), each {metric: tokens|cost, period: day|month, limit}. Every model call counts: gateway calls, Responses, agent runs with their judges and the tool loop; cost comes from models[].pricing. A call is refused before the upstream call while any budget of its caller is used up: 429 (insufficient_quota) in the envelope of the operation, naming the budget and when it resets (the next UTC day or month), with Retry-After; a run over budget fails with code budget_exceeded. A call under budget may take a budget past its limit (its use is known once it ends). Counted in Redis (hashes under queue.prefix, shared by every process) with queue.driver bullmq, else from the usage records in the store. Reaching 80% of a budget is logged once per period. Fails open: when the counters cannot be read calls are admitted and the outage logged.',
    properties: {
      enabled: { type: 'boolean', default: BUDGETS_DEFAULTS.enabled, description: 'Enforce and count budgets.' },
      redisTimeoutMs: {
        type: 'integer',
        minimum: 10,
        default: BUDGETS_DEFAULTS.redisTimeoutMs,
        description: 'How long a call waits for the budget counters (Redis or the store) before it is admitted uncounted (fail open).',
      },
      storeRefreshMs: {
        type: 'integer',
        minimum: 0,
        default: BUDGETS_DEFAULTS.storeRefreshMs,
        description:
          "Without Redis: how long a period's sum of usage records is reused before the store is asked again (calls made in this process meanwhile are added to it).",
      },
    },
  },
  create(partial, deps) {
    const config = { ...BUDGETS_DEFAULTS, ...partial };
    const table = new BudgetTable(deps.config.organizations, deps.store);
    const redis = deps.redis;
    const counter: BudgetCounter = redis
      ? new RedisBudgetCounter(() => redis.get(), `${deps.config.queue.prefix}:budget:`)
      : new StoreBudgetCounter(deps.store, config.storeRefreshMs, () => deps.clock.now().getTime());
    const guard = new Guard({ table, counter, clock: deps.clock, logger: deps.logger, timeoutMs: config.redisTimeoutMs });

    return {
      budgets: guard,
      async onRequest(ctx) {
        const principal = ctx.principal;
        if (!principal || !MODEL_OPERATIONS.has(ctx.route.operationId)) return;
        // Cheap when nothing applies: no configured budget and a key without any.
        if (!table.configured && !principal.keyBudgets?.length) return;
        await guard.admit(principal);
      },
      onFinish(ctx) {
        const principal = ctx.principal;
        if (!principal || ctx.usage.length === 0) return;
        // As in onRequest: nothing to count against when no budget applies (no per-request promise work).
        if (!table.configured && !principal.keyBudgets?.length) return;
        for (const report of ctx.usage) guard.record(principal, report);
      },
      async close() {
        await guard.settled();
      },
    };
  },
});
