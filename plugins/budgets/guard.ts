// The budget guard (src/model-call/budget-guard.ts): admits a model call while none of its subject's
// budgets is used up, charges each call's tokens and cost, and logs once per period when a budget
// reaches 80%. Counter failures fail open (the call goes on; logged at most every 10 s).
import type { Logger } from 'winston';
import { GatewayError } from '../../src/http/errors';
import { errorFields } from '../../src/log/logger';
import type { BudgetGuard, BudgetState, BudgetSubject } from '../../src/model-call/budget-guard';
import { budgetTokens } from '../../src/model-call/meter';
import type { UsageReport } from '../../src/pipeline/context';
import type { Clock } from '../../src/pipeline/plugin';
import type { BudgetCounter, Slot, Used } from './counters';
import { periodOf } from './periods';
import type { AppliedBudget, BudgetTable } from './table';

export const WARN_RATIO = 0.8;
const FAIL_OPEN_LOG_EVERY_MS = 10_000;

export interface GuardOptions {
  table: BudgetTable;
  counter: BudgetCounter;
  clock: Clock;
  logger: Logger;
  /** How long a call waits for the counter before it is admitted uncounted. */
  timeoutMs: number;
}

const SCOPE_NAMES = { organization: 'organization', user: 'user', key: 'API key' } as const;

function amount(value: number, metric: AppliedBudget['metric']): string {
  return metric === 'cost' ? `${Number(value.toFixed(6))} USD` : `${Math.round(value)} tokens`;
}

/** The 429 of a used-up budget: which one (scope, id, metric, period, limit) and when it resets. */
export function budgetExceeded(budget: AppliedBudget, used: number, now: Date): GatewayError {
  const { end } = periodOf(budget.period, now);
  const seconds = Math.max(1, Math.ceil((end.getTime() - now.getTime()) / 1000));
  return new GatewayError(
    'budget_exceeded',
    `Budget exceeded: the ${SCOPE_NAMES[budget.scope]} "${budget.id}" ${budget.metric} budget of ${amount(budget.limit, budget.metric)} per ${budget.period} (UTC) is used up (${amount(used, budget.metric)} used). It resets at ${end.toISOString()}, in ${seconds} s.`,
    { headers: { 'retry-after': String(seconds) } },
  );
}

export class Guard implements BudgetGuard {
  private readonly pending = new Set<Promise<void>>();
  private lastFailOpenLog = 0;

  constructor(private readonly options: GuardOptions) {}

  async admit(subject: BudgetSubject): Promise<void> {
    const budgets = await this.options.table.budgetsOf(subject);
    if (budgets.length === 0) return;
    const now = this.options.clock.now();
    const slots = budgets.map((b) => slotOf(b, subject, now));
    let used: Used[];
    try {
      used = await this.withTimeout(this.options.counter.read(slots));
    } catch (err) {
      this.failOpen('budget counters unavailable: admitting the call uncounted', err);
      return;
    }
    budgets.forEach((budget, i) => this.warnAt(budget, slots[i]!, valueOf(budget, used[i]!)));
    for (const [i, budget] of budgets.entries()) {
      const value = valueOf(budget, used[i]!);
      if (value >= budget.limit) throw budgetExceeded(budget, value, now);
    }
  }

  record(subject: BudgetSubject, usage: Pick<UsageReport, 'promptTokens' | 'completionTokens' | 'cost'>): void {
    const tokens = budgetTokens(usage);
    const cost = usage.cost ?? 0;
    if (tokens === 0 && cost === 0) return;
    const task = this.charge(subject, { tokens, cost })
      .catch((err: unknown) => this.failOpen('budget use not counted', err))
      .finally(() => this.pending.delete(task));
    this.pending.add(task);
  }

  async states(subject: BudgetSubject): Promise<BudgetState[]> {
    const budgets = await this.options.table.budgetsOf(subject);
    if (budgets.length === 0) return [];
    const now = this.options.clock.now();
    const slots = budgets.map((b) => slotOf(b, subject, now));
    const used = await this.withTimeout(this.options.counter.read(slots));
    return budgets.map((budget, i) => {
      const value = valueOf(budget, used[i]!);
      return {
        scope: budget.scope,
        id: budget.id,
        metric: budget.metric,
        period: budget.period,
        limit: budget.limit,
        used: budget.metric === 'cost' ? Number(value.toFixed(9)) : value,
        ratio: Number((value / budget.limit).toFixed(6)),
        resetsAt: slots[i]!.end.toISOString(),
      };
    });
  }

  /** Resolves once every charge made so far is counted (tests; shutdown). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private async charge(subject: BudgetSubject, used: Used): Promise<void> {
    const budgets = await this.options.table.budgetsOf(subject);
    if (budgets.length === 0) return;
    const now = this.options.clock.now();
    // One count per holder and period, whatever its budgets' metrics.
    const slots = new Map<string, Slot>();
    for (const budget of budgets) {
      const slot = slotOf(budget, subject, now);
      slots.set(`${slot.scope}:${slot.id}:${slot.label}`, slot);
    }
    const list = [...slots.values()];
    const after = await this.options.counter.add(list, used);
    if (!after) return;
    for (const budget of budgets) {
      const slot = slotOf(budget, subject, now);
      const i = list.findIndex((s) => s.scope === slot.scope && s.id === slot.id && s.label === slot.label);
      this.warnAt(budget, slot, valueOf(budget, after[i]!));
    }
  }

  /** Logs (once per budget and period, across processes with Redis) that a budget reached 80%. Never prompt text. */
  private warnAt(budget: AppliedBudget, slot: Slot, value: number): void {
    if (value < budget.limit * WARN_RATIO) return;
    const mark = `w:${budget.metric}:${budget.limit}`;
    this.options.counter.firstMark(mark, slot).then(
      (first) => {
        if (!first) return;
        this.options.logger.warn('budget 80% used', {
          plugin: 'budgets',
          scope: budget.scope,
          holderId: budget.id,
          orgId: slot.orgId,
          metric: budget.metric,
          period: budget.period,
          limit: budget.limit,
          used: budget.metric === 'cost' ? Number(value.toFixed(6)) : value,
          resetsAt: slot.end.toISOString(),
        });
      },
      (err: unknown) => this.failOpen('budget warning mark not set', err),
    );
  }

  private withTimeout<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`budget counter did not answer within ${this.options.timeoutMs} ms`)), this.options.timeoutMs);
      work.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  private failOpen(message: string, err: unknown): void {
    const now = Date.now();
    if (now - this.lastFailOpenLog < FAIL_OPEN_LOG_EVERY_MS) return;
    this.lastFailOpenLog = now;
    this.options.logger.warn(message, { plugin: 'budgets', ...errorFields(err) });
  }
}

function slotOf(budget: AppliedBudget, subject: BudgetSubject, now: Date): Slot {
  const { start, end, label } = periodOf(budget.period, now);
  return { scope: budget.scope, orgId: subject.orgId, id: budget.id, label, start, end };
}

function valueOf(budget: AppliedBudget, used: Used): number {
  return budget.metric === 'cost' ? used.cost : used.tokens;
}
