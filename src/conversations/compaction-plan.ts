// Where to cut a conversation's history for compaction: pure arithmetic over item token counts, so
// the rules are testable without a model or a store. The history is the items after the current
// summary, oldest first; a cut at index i summarises items [0, i) and keeps [i, n) verbatim.
//
// Rules: the most recent items stay verbatim, as many whole turns (a user message and what followed
// it) as fit the target; a cut never separates a call from its output (the upstream refuses an output
// whose call it was not shown, and a call left without its output); a call whose output comes in the
// new turn stays verbatim with everything after it.

export interface PlanItem {
  tokens: number;
  /** A user message: a cut just before it keeps whole turns. */
  startsTurn: boolean;
  /** The call this item opens or closes (call_id), if any. */
  opens?: string;
  closes?: string;
}

export interface Budget {
  /** The model's context window, in tokens. */
  window: number;
  /** Tokens kept free for the reply (the request's max_output_tokens, or the default reserve). */
  reserve: number;
  /** What is sent besides the history and the summary: instructions, hint, tools, the new turn. */
  fixed: number;
  /** Compact when the context would pass this share of the window. */
  threshold: number;
  /** After compacting, the context (with a summary of `summaryTokens`) should fill at most this share. */
  target: number;
  /** The longest summary the summariser may write (its max output tokens). */
  summaryTokens: number;
}

/** The indices where a cut keeps every call with its output; `pending`: calls the new turn closes. */
export function safeCuts(items: readonly PlanItem[], pending: ReadonlySet<string> = new Set()): boolean[] {
  const closedAt = new Map<string, number>();
  items.forEach((item, i) => {
    if (item.closes !== undefined) closedAt.set(item.closes, i);
  });
  const openedAt = new Map<string, number>();
  items.forEach((item, i) => {
    if (item.opens !== undefined) openedAt.set(item.opens, i);
  });
  // A call and its output are an interval [open, close]: no cut may fall inside it. A call whose output
  // comes with the new turn extends to the end; an output whose call is not in the history (one never
  // summarised apart from it, or an orphan) binds nothing.
  const safe = items.map(() => true);
  safe.push(true);
  const forbid = (from: number, to: number): void => {
    for (let cut = from + 1; cut <= to; cut++) safe[cut] = false;
  };
  for (const [callId, open] of openedAt) {
    const close = closedAt.get(callId);
    if (close !== undefined && close > open) forbid(open, close);
    else if (pending.has(callId)) forbid(open, items.length);
  }
  return safe;
}

export type CompactionPlan =
  | { action: 'none'; reason: 'below_threshold' | 'nothing_to_cut' }
  /** Summarise items [0, cut). */
  | { action: 'compact'; cut: number };

/** The total context of the history `items`, a summary of `summaryTokens`, and the budget's fixed part. */
export function contextTokens(items: readonly PlanItem[], summaryTokens: number, budget: Pick<Budget, 'fixed' | 'reserve'>): number {
  let total = budget.fixed + budget.reserve + summaryTokens;
  for (const item of items) total += item.tokens;
  return total;
}

/**
 * Whether to compact, and where to cut. `currentSummary`: tokens of the summary in effect (0 without).
 * The cut keeps the longest suffix that fits the target with a new summary of the largest allowed
 * size: whole turns when one fits, else any call-safe suffix; when none fits, everything that can be
 * summarised is.
 */
export function planCompaction(items: readonly PlanItem[], currentSummary: number, budget: Budget, pending?: ReadonlySet<string>): CompactionPlan {
  if (contextTokens(items, currentSummary, budget) <= budget.threshold * budget.window) return { action: 'none', reason: 'below_threshold' };
  const safe = safeCuts(items, pending);
  const room = budget.target * budget.window - budget.fixed - budget.reserve - budget.summaryTokens;
  // kept[i]: tokens of items [i, n).
  const kept = new Array<number>(items.length + 1).fill(0);
  for (let i = items.length - 1; i >= 0; i--) kept[i] = kept[i + 1]! + items[i]!.tokens;
  let turnCut = -1;
  let anyCut = -1;
  let lastSafe = -1;
  for (let i = 1; i <= items.length; i++) {
    if (!safe[i]) continue;
    lastSafe = i;
    if (kept[i]! > room) continue;
    if (anyCut < 0) anyCut = i;
    // A whole turn kept verbatim is best; keeping none (i === n) is the last resort, not a turn cut.
    if (turnCut < 0 && i < items.length && items[i]!.startsTurn) turnCut = i;
  }
  const cut = turnCut > 0 ? turnCut : anyCut > 0 ? anyCut : lastSafe;
  return cut > 0 ? { action: 'compact', cut } : { action: 'none', reason: 'nothing_to_cut' };
}

/**
 * After the summary came back: the cut moved later (call-safe) until the context fits the window with
 * the summary's real size. Items between the planned and the returned cut are dropped without being
 * summarised: the rare case of a summary longer than asked, or a new turn too large for the plan.
 * Returns `items.length` at most (nothing verbatim left); the context may still not fit then.
 */
export function fitCut(
  items: readonly PlanItem[],
  cut: number,
  summaryTokens: number,
  budget: Pick<Budget, 'fixed' | 'reserve' | 'window'>,
  pending?: ReadonlySet<string>,
): number {
  const safe = safeCuts(items, pending);
  let at = cut;
  while (at < items.length && contextTokens(items.slice(at), summaryTokens, budget) > budget.window) {
    at += 1;
    while (at < items.length && !safe[at]) at += 1;
  }
  return at;
}

/**
 * The largest per-entry cap c such that the entries, each clipped to c tokens, total at most `budget`
 * (water-filling): short entries stay whole, the longest are clipped alike. Infinity when all fit.
 */
export function clipCap(sizes: readonly number[], budget: number): number {
  const total = sizes.reduce((sum, size) => sum + size, 0);
  if (total <= budget) return Infinity;
  const sorted = [...sizes].sort((a, b) => a - b);
  let below = 0;
  for (let i = 0; i < sorted.length; i++) {
    const rest = sorted.length - i;
    const cap = Math.floor((budget - below) / rest);
    if (cap < sorted[i]!) return Math.max(0, cap);
    below += sorted[i]!;
  }
  return Infinity;
}
