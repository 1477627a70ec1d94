// Token and cost budgets as the model-call path sees them (the budgets plugin, plugins/budgets, keeps
// the counts): admitted before every upstream call, charged with what each call used. Gateway requests
// are admitted by the plugin in the request pipeline; agent runs (src/runs/executor.ts) before each of
// their model calls, without any HTTP request.
import type { Pipeline } from '../pipeline/assemble';
import type { UsageReport } from '../pipeline/context';
import type { BudgetSpec } from '../store/types';

export type BudgetScope = 'organization' | 'user' | 'key';

/** Whose budgets a model call draws on. */
export interface BudgetSubject {
  orgId: string;
  userId: string | null;
  keyId: string | null;
  /** The key's budgets when already known (the auth plugin puts them on the principal); absent: looked up by keyId. */
  keyBudgets?: readonly BudgetSpec[];
}

/** One budget that applies to a subject, with what was used of it this period. */
export interface BudgetState {
  scope: BudgetScope;
  /** The organization, user or key id. */
  id: string;
  metric: BudgetSpec['metric'];
  period: BudgetSpec['period'];
  limit: number;
  used: number;
  /** used / limit. */
  ratio: number;
  /** ISO time the period ends (the next UTC day or month start). */
  resetsAt: string;
}

export interface BudgetGuard {
  /** Resolves when no budget of the subject is used up; else throws GatewayError `budget_exceeded` (429, Retry-After). */
  admit(subject: BudgetSubject): Promise<void>;
  /** Charges a call's usage to the subject's budgets (off the caller's path; failures are logged). */
  record(subject: BudgetSubject, usage: Pick<UsageReport, 'promptTokens' | 'completionTokens' | 'cost'>): void;
  /** The budgets that apply to the subject, with their current use. */
  states(subject: BudgetSubject): Promise<BudgetState[]>;
}

/** The budgets plugin's guard, or null when the plugin is off. */
export function budgetGuardOf(pipeline: Pick<Pipeline, 'plugins'>): BudgetGuard | null {
  for (const plugin of pipeline.plugins) if (plugin.hooks.budgets) return plugin.hooks.budgets;
  return null;
}
