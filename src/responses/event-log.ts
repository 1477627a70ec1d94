// The event log of streaming responses, written off the hot path (issue 17, section 4). append() is
// synchronous: the event goes to live readers at once (live-events.ts) and into one per-process queue;
// the queue is written to the store in batches (every flushIntervalMs, or at once when batchSize events
// wait), one write in flight at a time. flush(responseId) resolves once everything appended for that
// response is stored: the handler awaits it before writing the response's final state, so a response
// read as finished always has its whole log.
//
// Failure rules (fail open: the stream to the caller never waits for or fails on the store):
// - a failed write keeps its batch and is retried with exponential backoff; the first failure is logged
//   at error (counts and error name only: an event is model output), the recovery at info;
// - memory is bounded (maxBuffered events): past it, the response being appended to loses its log: its
//   queued events are dropped and it stores nothing more (its stored log stays a gap-free prefix, which
//   a replay completes from the final body), and its flush() rejects;
// - a batch failing isolateAfter times in a row is retried response by response: a response whose own
//   write keeps failing while others' succeed (an event the store refuses) is dropped the same way
//   instead of stalling every stream of the process;
// - nothing here rejects unobserved: the only promises handed out are flush()'s and close()'s.
import type { Logger } from 'winston';
import type { Metrics } from '../log/metrics';
import type { ResponseRepository } from '../store/port';
import type { ResponseEventRecord } from '../store/types';
import type { LiveEvents, StoredRange } from './live-events';
import type { StreamEvent } from './stream-event';

export interface ResponseEventLogOptions {
  responses: Pick<ResponseRepository, 'appendEvents'>;
  live: LiveEvents;
  logger: Logger;
  metrics?: Pick<Metrics, 'responseEventsPending' | 'responseEventsDropped'>;
  /** Longest an event waits before its batch is written. */
  flushIntervalMs?: number;
  /** Events per write; a full batch is written at once. */
  batchSize?: number;
  /** Events held while the store is slow or down; beyond it responses lose their log (see above). */
  maxBuffered?: number;
  /** First retry delay after a failed write, doubled per failure up to retryMaxMs. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Consecutive failures of a batch after which it is retried response by response. */
  isolateAfter?: number;
  /**
   * The store's health check (Store.ping): tells a store that is up but refuses one response's events
   * from a store that is down, when no other response's write succeeded to compare with.
   */
  ping?: () => Promise<void>;
}

export const EVENT_LOG_DEFAULTS = {
  flushIntervalMs: 50,
  batchSize: 500,
  maxBuffered: 100_000,
  retryBaseMs: 100,
  retryMaxMs: 5000,
  isolateAfter: 3,
} as const;

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

interface Entry {
  responseId: string;
  event: StreamEvent;
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
  /** Failures of this response's own writes while others' succeeded (isolation rounds). */
  failures: number;
}

/** Dropped responses remembered (appends to them are not stored); the oldest are forgotten past this. */
const LOST_REMEMBERED = 10_000;

export class ResponseEventLog {
  private readonly options: Required<Omit<ResponseEventLogOptions, 'metrics' | 'ping'>> & Pick<ResponseEventLogOptions, 'metrics' | 'ping'>;
  private entries: Entry[] = [];
  /** Index of the oldest unwritten entry in `entries`. */
  private head = 0;
  /** Entries from `head` in the write in flight. */
  private inFlight = 0;
  private readonly states = new Map<string, ResponseState>();
  private readonly lost = new Map<string, string>();
  /** The write loop while it runs. */
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private backoffUntil = 0;
  private failures = 0;
  private closed = false;
  /** flush() calls waiting: while any waits, everything queued is written without waiting for the interval. */
  private waiting = 0;

  constructor(options: ResponseEventLogOptions) {
    this.options = { ...EVENT_LOG_DEFAULTS, ...options };
  }

  /** Events waiting to be stored. */
  get pending(): number {
    return this.entries.length - this.head;
  }

  /**
   * Publishes the event to live readers now and queues it for the store. Never throws, never waits.
   * The caller numbers events (sequenceNumber and data.sequence_number) from 0 without gaps.
   */
  append(responseId: string, event: StreamEvent): void {
    try {
      this.options.live.publish(responseId, event);
    } catch (err) {
      this.options.logger.warn('live events: publish failed', { component: 'response-events', responseId, errorName: errorName(err) });
    }
    if (this.lost.has(responseId)) return;
    if (this.closed) {
      this.drop(responseId, 'shut down');
      return;
    }
    if (this.pending >= this.options.maxBuffered) {
      this.drop(responseId, 'buffer full');
      return;
    }
    let state = this.states.get(responseId);
    if (!state) {
      state = { appended: 0, durable: 0, waiters: [], failures: 0 };
      this.states.set(responseId, state);
    }
    this.entries.push({ responseId, event });
    state.appended++;
    this.writeSoon(this.pending - this.inFlight >= this.options.batchSize);
  }

  /**
   * Resolves once every event appended for the response so far is stored (at once when nothing waits);
   * rejects with EventLogLostError when its log was dropped. Starts a write now rather than at the next
   * interval. While the store is down it waits for the retries: race it with a timeout if needed.
   */
  flush(responseId: string): Promise<void> {
    const reason = this.lost.get(responseId);
    if (reason !== undefined) return Promise.reject(new EventLogLostError(responseId, reason));
    const state = this.states.get(responseId);
    if (!state || state.durable >= state.appended) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiting++;
      const settled = (): void => void this.waiting--;
      state.waiters.push({
        target: state.appended,
        resolve: () => {
          settled();
          resolve();
        },
        reject: (err) => {
          settled();
          reject(err);
        },
      });
      this.writeSoon(true);
    });
  }

  /** Stops the timers and writes what is queued (a few attempts); what stays unwritten is reported lost. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
    for (let attempt = 0; this.pending > 0 && attempt < 3; attempt++) {
      this.backoffUntil = 0;
      await this.run();
    }
    if (this.pending > 0) {
      this.options.logger.error('response events lost at shutdown: the store did not accept them', { component: 'response-events', count: this.pending });
      for (const responseId of new Set(this.entries.slice(this.head).map((e) => e.responseId))) this.drop(responseId, 'shut down');
    }
  }

  /**
   * Schedules a write: `now` in the next turn (a full batch, a flush), else at the interval (when none
   * is armed yet). A backoff in progress wins over both.
   */
  private writeSoon(now: boolean): void {
    if (this.running) return; // the running loop picks new entries up, or re-arms when it ends
    const backoff = this.backoffUntil - Date.now();
    if (backoff <= 0 && now) {
      if (this.immediate) return;
      this.immediate = setImmediate(() => {
        this.immediate = null;
        void this.run();
      });
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        void this.run(true);
      },
      Math.max(backoff, this.options.flushIntervalMs),
    );
    this.timer.unref();
  }

  /**
   * Writes what is due: with `interval` (the timer fired) everything queued now, then, as while a flush
   * waits or at shutdown, whatever is queued; otherwise only full batches (a partial one waits for the
   * interval, so that batches fill). Stops at a failure (retried after a backoff). Never rejects.
   */
  private run(interval = false): Promise<void> {
    this.running ??= this.writeDue(interval ? this.pending : 0).finally(() => {
      this.running = null;
      this.inFlight = 0;
      if (this.pending > 0 && !this.closed) this.writeSoon(this.waiting > 0 && this.backoffUntil <= Date.now());
    });
    return this.running;
  }

  private async writeDue(due: number): Promise<void> {
    try {
      while (this.pending > 0 && Date.now() >= this.backoffUntil && (due > 0 || this.pending >= this.options.batchSize || this.waiting > 0 || this.closed)) {
        if (!(await this.writeBatch())) break;
        due -= this.options.batchSize; // a batch takes up to batchSize entries from the head
      }
    } catch (err) {
      // A defect here must not become an unhandled rejection (it would end the process).
      this.options.logger.error('response event log: write loop failed', { component: 'response-events', errorName: errorName(err) });
    }
  }

  /** One batch from the head of the queue; false when it failed (kept for a retry). */
  private async writeBatch(): Promise<boolean> {
    const count = Math.min(this.options.batchSize, this.pending);
    const batch = this.entries.slice(this.head, this.head + count);
    this.inFlight = count;
    if (this.failures >= this.options.isolateAfter) return this.writeIsolated(batch);
    try {
      await this.options.responses.appendEvents(records(batch));
    } catch (err) {
      this.failed(batch.length, err);
      return false;
    } finally {
      this.inFlight = 0;
    }
    this.head += count;
    this.compact();
    this.stored(batch);
    this.recovered();
    return true;
  }

  /**
   * The batch response by response (after repeated failures): stored groups leave the queue. A group
   * failing while the store is known to be up (another group was stored, or it answers a ping) is
   * counted against its response, dropped after isolateAfter such rounds.
   */
  private async writeIsolated(batch: Entry[]): Promise<boolean> {
    const groups = new Map<string, Entry[]>();
    for (const entry of batch) {
      const group = groups.get(entry.responseId);
      if (group) group.push(entry);
      else groups.set(entry.responseId, [entry]);
    }
    const failedGroups: [string, Entry[], unknown][] = [];
    let succeeded = 0;
    try {
      for (const [responseId, group] of groups) {
        try {
          await this.options.responses.appendEvents(records(group));
          succeeded++;
          this.stored(group);
        } catch (err) {
          failedGroups.push([responseId, group, err]);
        }
      }
    } finally {
      this.inFlight = 0;
    }
    const storeIsUp = failedGroups.length > 0 && (succeeded > 0 || (await this.storeAnswers()));
    const kept: Entry[] = [];
    const refused: [string, number, unknown][] = [];
    for (const [responseId, group, err] of failedGroups) {
      const state = this.states.get(responseId);
      if (storeIsUp && state && ++state.failures >= this.options.isolateAfter) refused.push([responseId, group.length, err]);
      else if (!this.lost.has(responseId)) kept.push(...group);
    }
    // The batch leaves the head of the queue but for what is retried; then the refused responses go
    // (with anything of theirs queued behind the batch).
    this.entries.splice(this.head, batch.length, ...kept);
    for (const [responseId, count, err] of refused) {
      this.options.logger.error("response event log: the store refuses this response's events; its log is dropped", {
        component: 'response-events',
        responseId,
        count,
        errorName: errorName(err),
        code: errorCode(err),
      });
      this.options.metrics?.responseEventsDropped.inc(count);
      this.drop(responseId, 'refused by the store', true);
    }
    this.compact();
    if (failedGroups.length === 0 || succeeded > 0) {
      this.recovered();
      return true;
    }
    // Nothing stored: back off (failures keep counting, so the next round is isolated again).
    this.failed(batch.length, failedGroups[0]![2]);
    return false;
  }

  private async storeAnswers(): Promise<boolean> {
    if (!this.options.ping) return false;
    return this.options.ping().then(
      () => true,
      () => false,
    );
  }

  private failed(count: number, err: unknown): void {
    this.failures++;
    if (this.failures === 1) {
      this.options.logger.error('response event log: store write failed; retrying with backoff', {
        component: 'response-events',
        count,
        errorName: errorName(err),
        code: errorCode(err),
      });
    }
    const delay = Math.min(this.options.retryMaxMs, this.options.retryBaseMs * 2 ** Math.min(this.failures - 1, 16));
    // Jitter: gateways that lost the same database do not come back in step.
    this.backoffUntil = Date.now() + Math.round(delay * (0.5 + Math.random() / 2));
    this.options.metrics?.responseEventsPending.set(this.pending);
  }

  private recovered(): void {
    if (this.failures > 0) this.options.logger.info('response event log: store writes recovered', { component: 'response-events', count: this.pending });
    this.failures = 0;
    this.backoffUntil = 0;
    this.options.metrics?.responseEventsPending.set(this.pending);
  }

  /** Counts stored events, resolves the flushes they complete, and tells live readers elsewhere. */
  private stored(entries: readonly Entry[]): void {
    const ranges = new Map<string, StoredRange>();
    for (const { responseId, event } of entries) {
      const range = ranges.get(responseId);
      if (range) {
        range.from = Math.min(range.from, event.sequenceNumber);
        range.to = Math.max(range.to, event.sequenceNumber);
      } else {
        ranges.set(responseId, { responseId, from: event.sequenceNumber, to: event.sequenceNumber });
      }
      const state = this.states.get(responseId);
      if (state) state.durable++;
    }
    for (const responseId of ranges.keys()) {
      const state = this.states.get(responseId);
      if (!state) continue;
      if (state.waiters.length > 0) {
        const done = state.waiters.filter((w) => w.target <= state.durable);
        state.waiters = state.waiters.filter((w) => w.target > state.durable);
        for (const waiter of done) waiter.resolve();
      }
      if (state.durable >= state.appended && state.waiters.length === 0) this.states.delete(responseId);
    }
    try {
      this.options.live.stored([...ranges.values()]);
    } catch (err) {
      this.options.logger.warn('live events: stored notice failed', { component: 'response-events', errorName: errorName(err) });
    }
  }

  /** The response stores nothing more: its queued events go, its flushes reject. */
  private drop(responseId: string, reason: string, logged = false): void {
    if (this.lost.has(responseId)) return;
    this.lost.set(responseId, reason);
    if (this.lost.size > LOST_REMEMBERED) this.lost.delete(this.lost.keys().next().value!);
    const state = this.states.get(responseId);
    this.states.delete(responseId);
    // Not the write in flight (its outcome is counted for nobody now): only what waits behind it.
    const from = this.head + this.inFlight;
    let removed = 0;
    const keptTail = this.entries.slice(from).filter((e) => {
      if (e.responseId !== responseId) return true;
      removed++;
      return false;
    });
    if (removed > 0) this.entries.splice(from, this.entries.length - from, ...keptTail);
    if (!logged && (reason !== 'shut down' || removed > 0)) {
      this.options.logger.error('response event log: events of a response dropped', { component: 'response-events', responseId, reason, count: removed });
    }
    this.options.metrics?.responseEventsDropped.inc(removed);
    for (const waiter of state?.waiters ?? []) waiter.reject(new EventLogLostError(responseId, reason));
  }

  /** Drops written entries from the front of the array once they are the larger part of it. */
  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }
}

function records(entries: readonly Entry[]): ResponseEventRecord[] {
  // One timestamp per write: the log's time, not the token's (which the caller does not need to pay for).
  const createdAt = new Date().toISOString();
  return entries.map(({ responseId, event }) => ({ responseId, sequenceNumber: event.sequenceNumber, event: event.event, data: event.data, createdAt }));
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : 'unknown';
}

/** A driver's error code (e.g. a PostgreSQL SQLSTATE), never its message (which may quote values). */
function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : undefined;
}
