import { ADMITTED, WINDOW_MS, waitMs, type Budget, type Verdict } from './sliding-window';

interface Counts {
  /** Window index the `current` count belongs to. */
  window: number;
  current: number;
  previous: number;
}

/** In-process counters (queue.driver inline: one gateway process, one budget). */
export class MemoryCounter {
  private readonly counts = new Map<string, Counts>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    // Budgets idle for two windows hold nothing: drop them so the map stays as small as the active set.
    this.sweeper = setInterval(() => this.sweep(), WINDOW_MS);
    this.sweeper.unref();
  }

  get size(): number {
    return this.counts.size;
  }

  /** Admits the request when every budget has room, and then counts it against all of them. */
  hit(budgets: readonly Budget[]): Verdict {
    const now = this.now();
    const window = Math.floor(now / WINDOW_MS);
    const elapsed = now - window * WINDOW_MS;
    const states: Counts[] = [];
    for (let i = 0; i < budgets.length; i++) {
      const budget = budgets[i] as Budget;
      const state = this.roll(budget.key, window);
      const wait = waitMs(budget.limit, state.current, state.previous, elapsed);
      if (wait > 0) return { denied: i, retryAfterMs: wait };
      states.push(state);
    }
    for (const state of states) state.current++;
    return ADMITTED;
  }

  sweep(): void {
    const window = Math.floor(this.now() / WINDOW_MS);
    for (const [key, state] of this.counts) if (state.window < window - 1) this.counts.delete(key);
  }

  close(): void {
    clearInterval(this.sweeper);
    this.counts.clear();
  }

  private roll(key: string, window: number): Counts {
    let state = this.counts.get(key);
    if (!state) {
      state = { window, current: 0, previous: 0 };
      this.counts.set(key, state);
    } else if (state.window !== window) {
      state.previous = state.window === window - 1 ? state.current : 0;
      state.current = 0;
      state.window = window;
    }
    return state;
  }
}
