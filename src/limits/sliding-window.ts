// The sliding-window counter (as Cloudflare and nginx-style limiters use it): two fixed one-minute
// windows, the previous one weighted by how much of it still overlaps the last 60 seconds. It smooths
// the burst a fixed window allows at its boundary, with two integers of state per budget.
// The Redis script (redis-counter.ts) implements the same arithmetic; keep them in step.

export const WINDOW_MS = 60_000;

export interface Budget {
  /** Counter key (an organization, a user, a client address). */
  readonly key: string;
  /** Requests allowed per window. */
  readonly limit: number;
}

export interface Verdict {
  /** Index of the first budget that denied the request, or -1 when it is admitted. */
  readonly denied: number;
  /** When denied: milliseconds until one more request fits that budget. */
  readonly retryAfterMs: number;
}

export const ADMITTED: Verdict = { denied: -1, retryAfterMs: 0 };

/**
 * Milliseconds until one more request fits, or 0 when it fits now. `current`/`previous` are the counts
 * of this and the previous window, `elapsed` how far into this window we are.
 */
export function waitMs(limit: number, current: number, previous: number, elapsed: number, windowMs = WINDOW_MS): number {
  const remaining = windowMs - elapsed;
  const estimate = (previous * remaining) / windowMs + current;
  if (estimate + 1 <= limit) return 0;
  if (current + 1 > limit) {
    // This window alone is full: wait for the next one, then until this window's weight has decayed enough.
    return remaining + Math.ceil(windowMs * (1 - (limit - 1) / current));
  }
  // The previous window's weight is what is in the way: wait until it has decayed enough.
  return Math.ceil(remaining - (windowMs * (limit - 1 - current)) / previous);
}
