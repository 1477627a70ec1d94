// Budget periods are UTC days and UTC calendar months: a period is known by its start, ends at the next
// one's start, and is named in counter keys by its date (d2025-01-31, m2025-01).
import type { BudgetSpec } from '../../src/store/types';

export interface PeriodSpan {
  start: Date;
  end: Date;
  /** The period's name in counter keys. */
  label: string;
}

export function periodOf(period: BudgetSpec['period'], now: Date): PeriodSpan {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  if (period === 'month') {
    return { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)), label: `m${now.toISOString().slice(0, 7)}` };
  }
  const d = now.getUTCDate();
  return { start: new Date(Date.UTC(y, m, d)), end: new Date(Date.UTC(y, m, d + 1)), label: `d${now.toISOString().slice(0, 10)}` };
}
