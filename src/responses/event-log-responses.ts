// The event log's book of responses: how many events of each were accepted and stored, the flush()
// calls waiting for them, and the responses whose log was dropped (their appends are not stored any
// more, so what is stored stays a gap-free prefix).
import type { StoredRange } from './live-events';
import type { QueuedEvent } from './event-queue';

/** flush() of a response whose log was dropped (buffer full, store refusing it, or shut down unwritten). */
export class EventLogLostError extends Error {
  constructor(
    readonly responseId: string,
    readonly reason: string,
  ) {
    super(`response ${responseId}: its event log was not stored (${reason})`);
    this.name = 'EventLogLostError';
  }
}

interface Waiter {
  target: number;
  resolve(): void;
  reject(err: Error): void;
}

interface ResponseState {
  /** Events accepted for the store. */
  appended: number;
  /** Of those, stored. */
  durable: number;
  waiters: Waiter[];
  /** Failures of this response's own writes while the store was up (isolation rounds). */
  refusals: number;
}

/** Dropped responses remembered; the oldest are forgotten past this. */
const LOST_REMEMBERED = 10_000;

export class EventLogResponses {
  /** Responses with events accepted and not all stored, or flushes waiting. */
  private readonly states = new Map<string, ResponseState>();
  /** Dropped responses and why. */
  private readonly lost = new Map<string, string>();
  /** flush() calls waiting, all responses together. */
  waiting = 0;

  isLost(responseId: string): boolean {
    return this.lost.has(responseId);
  }

  /** One more event of the response accepted for the store. */
  accept(responseId: string): void {
    let state = this.states.get(responseId);
    if (!state) {
      state = { appended: 0, durable: 0, waiters: [], refusals: 0 };
      this.states.set(responseId, state);
    }
    state.appended++;
  }

  /** Resolves once the events accepted so far are stored; null when nothing waits (resolve at once). */
  flush(responseId: string): Promise<void> | null {
    const reason = this.lost.get(responseId);
    if (reason !== undefined) return Promise.reject(new EventLogLostError(responseId, reason));
    const state = this.states.get(responseId);
    if (!state || state.durable >= state.appended) return null;
    return new Promise<void>((resolve, reject) => {
      this.waiting++;
      state.waiters.push({
        target: state.appended,
        resolve: () => {
          this.waiting--;
          resolve();
        },
        reject: (err) => {
          this.waiting--;
          reject(err);
        },
      });
    });
  }

  /** Counts stored events and resolves the flushes they complete; returns the stored ranges. */
  stored(entries: readonly QueuedEvent[]): StoredRange[] {
    for (const { responseId } of entries) {
      const state = this.states.get(responseId);
      if (state) state.durable++;
    }
    const ranges = storedRanges(entries);
    for (const { responseId } of ranges) this.settle(responseId);
    return ranges;
  }

  /**
   * `count` accepted events of the response left the log (taken to be stored with the response's end):
   * not counted against its flushes any more.
   */
  handedOff(responseId: string, count: number): void {
    const state = this.states.get(responseId);
    if (!state) return;
    state.appended -= count;
    // A flush waiting for them now waits only for what stays in the log.
    for (const waiter of state.waiters) waiter.target = Math.min(waiter.target, state.appended);
    this.settle(responseId);
  }

  /** Resolves the flushes the stored count reached; forgets a response with nothing outstanding. */
  private settle(responseId: string): void {
    const state = this.states.get(responseId);
    if (!state) return;
    if (state.waiters.length > 0) {
      const done = state.waiters.filter((w) => w.target <= state.durable);
      state.waiters = state.waiters.filter((w) => w.target > state.durable);
      for (const waiter of done) waiter.resolve();
    }
    if (state.durable >= state.appended && state.waiters.length === 0) this.states.delete(responseId);
  }

  /** Counts a write of the response's own refused while the store was up; returns the count so far. */
  refused(responseId: string): number {
    const state = this.states.get(responseId);
    return state ? ++state.refusals : 0;
  }

  /** The response stores nothing more; its waiting flushes reject. False if it was dropped already. */
  markLost(responseId: string, reason: string): boolean {
    if (this.lost.has(responseId)) return false;
    this.lost.set(responseId, reason);
    if (this.lost.size > LOST_REMEMBERED) this.lost.delete(this.lost.keys().next().value!);
    const state = this.states.get(responseId);
    this.states.delete(responseId);
    for (const waiter of state?.waiters ?? []) waiter.reject(new EventLogLostError(responseId, reason));
    return true;
  }
}

/** The range of sequence numbers stored per response. */
export function storedRanges(entries: readonly Pick<QueuedEvent, 'responseId' | 'sequenceNumber'>[]): StoredRange[] {
  const ranges = new Map<string, StoredRange>();
  for (const { responseId, sequenceNumber } of entries) {
    const range = ranges.get(responseId);
    if (range) {
      range.from = Math.min(range.from, sequenceNumber);
      range.to = Math.max(range.to, sequenceNumber);
    } else {
      ranges.set(responseId, { responseId, from: sequenceNumber, to: sequenceNumber });
    }
  }
  return [...ranges.values()];
}
