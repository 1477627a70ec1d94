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
import { EventLogResponses, storedRanges } from './event-log-responses';
import { EventQueue, eventRecords, type QueuedEvent } from './event-queue';
import type { LiveEvents } from './live-events';
import type { StreamEvent } from './stream-event';

export { EventLogLostError } from './event-log-responses';

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

export class ResponseEventLog {
  private readonly options: Required<Omit<ResponseEventLogOptions, 'metrics' | 'ping'>> & Pick<ResponseEventLogOptions, 'metrics' | 'ping'>;
  private readonly queue = new EventQueue();
  private readonly book = new EventLogResponses();
  /** The write loop while it runs. */
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private backoffUntil = 0;
  private failures = 0;
  private closed = false;

  constructor(options: ResponseEventLogOptions) {
    this.options = { ...EVENT_LOG_DEFAULTS, ...options };
  }

  /** Events waiting to be stored. */
  get pending(): number {
    return this.queue.length;
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
    if (this.book.isLost(responseId)) return;
    if (this.closed) {
      this.drop(responseId, 'shut down');
      return;
    }
    if (this.pending >= this.options.maxBuffered) {
      this.drop(responseId, 'buffer full');
      return;
    }
    let json = event.json;
    if (json === undefined) {
      try {
        json = JSON.stringify(event.data);
      } catch {
        // Not JSON (a defect of its writer): the response's log stops here, a gap-free prefix.
        this.drop(responseId, 'event not serializable');
        return;
      }
    }
    this.queue.push({ responseId, sequenceNumber: event.sequenceNumber, event: event.event, json });
    this.book.accept(responseId);
    this.writeSoon(this.queue.waiting >= this.options.batchSize);
  }

  /**
   * Resolves once every event appended for the response so far is stored (at once when nothing waits);
   * rejects with EventLogLostError when its log was dropped. Starts a write now rather than at the next
   * interval. While the store is down it waits for the retries: race it with a timeout if needed.
   */
  flush(responseId: string): Promise<void> {
    const waiting = this.book.flush(responseId);
    if (!waiting) return Promise.resolve();
    this.writeSoon(true);
    return waiting;
  }

  /**
   * For a response that ends: its events not stored yet, taken out of the log for the caller to store
   * with the response's end (TurnEnd.events), so that the end costs one commit instead of a log write
   * and then a commit. Waits while a write in flight holds some of them (they are stored by it, or
   * come back to the queue and are taken). Rejects with EventLogLostError when its log was dropped.
   * More than `batchSize` events waiting (a store that was down) are left to the log: flushed instead.
   * Call storedWithEnd() once the end is stored.
   */
  async takeRest(responseId: string): Promise<QueuedEvent[]> {
    while (this.running && !this.book.isLost(responseId) && this.queue.inFlightHas(responseId)) await this.running;
    const taken = this.book.isLost(responseId) ? null : this.queue.takeResponse(responseId, this.options.batchSize);
    if (taken === null) {
      // A dropped log: flush() rejects with why. Too many events: the log writes them.
      await this.flush(responseId);
      return [];
    }
    if (taken.length > 0) this.book.handedOff(responseId, taken.length);
    this.options.metrics?.responseEventsPending.set(this.pending);
    return taken;
  }

  /** Events takeRest() handed out are stored (with their response's end): tells live readers elsewhere. */
  storedWithEnd(entries: readonly QueuedEvent[]): void {
    if (entries.length === 0) return;
    try {
      this.options.live.stored(storedRanges(entries));
    } catch (err) {
      this.options.logger.warn('live events: stored notice failed', { component: 'response-events', errorName: errorName(err) });
    }
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
      for (const responseId of this.queue.responseIds()) this.drop(responseId, 'shut down');
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
      if (this.pending > 0 && !this.closed) this.writeSoon(this.book.waiting > 0 && this.backoffUntil <= Date.now());
    });
    return this.running;
  }

  private async writeDue(due: number): Promise<void> {
    try {
      while (
        this.pending > 0 &&
        Date.now() >= this.backoffUntil &&
        (due > 0 || this.pending >= this.options.batchSize || this.book.waiting > 0 || this.closed)
      ) {
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
    const batch = this.queue.takeBatch(this.options.batchSize);
    if (this.failures >= this.options.isolateAfter) return this.writeIsolated(batch);
    try {
      await this.options.responses.appendEvents(eventRecords(batch));
    } catch (err) {
      this.queue.release();
      this.failed(batch.length, err);
      return false;
    }
    this.queue.settle();
    this.stored(batch);
    this.recovered();
    return true;
  }

  /**
   * The batch response by response (after repeated failures): stored groups leave the queue. A group
   * failing while the store is known to be up (another group was stored, or it answers a ping) is
   * counted against its response, dropped after isolateAfter such rounds.
   */
  private async writeIsolated(batch: QueuedEvent[]): Promise<boolean> {
    const groups = new Map<string, QueuedEvent[]>();
    for (const entry of batch) {
      const group = groups.get(entry.responseId);
      if (group) group.push(entry);
      else groups.set(entry.responseId, [entry]);
    }
    const failedGroups: [string, QueuedEvent[], unknown][] = [];
    let succeeded = 0;
    for (const [responseId, group] of groups) {
      try {
        await this.options.responses.appendEvents(eventRecords(group));
        succeeded++;
        this.stored(group);
      } catch (err) {
        failedGroups.push([responseId, group, err]);
      }
    }
    const storeIsUp = failedGroups.length > 0 && (succeeded > 0 || (await this.storeAnswers()));
    const retry: QueuedEvent[] = [];
    const refused: [string, number, unknown][] = [];
    for (const [responseId, group, err] of failedGroups) {
      if (storeIsUp && this.book.refused(responseId) >= this.options.isolateAfter) refused.push([responseId, group.length, err]);
      else if (!this.book.isLost(responseId)) retry.push(...group);
    }
    // The batch leaves the queue but for what is retried; then the refused responses go (with
    // anything of theirs queued behind the batch).
    this.queue.settle(retry);
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
  private stored(entries: readonly QueuedEvent[]): void {
    const ranges = this.book.stored(entries);
    try {
      this.options.live.stored(ranges);
    } catch (err) {
      this.options.logger.warn('live events: stored notice failed', { component: 'response-events', errorName: errorName(err) });
    }
  }

  /** The response stores nothing more: its queued events go, its flushes reject. */
  private drop(responseId: string, reason: string, logged = false): void {
    if (!this.book.markLost(responseId, reason)) return;
    // Not the write in flight (its outcome is counted for nobody now): only what waits behind it.
    const removed = this.queue.removeResponse(responseId);
    if (!logged && (reason !== 'shut down' || removed > 0)) {
      this.options.logger.error('response event log: events of a response dropped', { component: 'response-events', responseId, reason, count: removed });
    }
    this.options.metrics?.responseEventsDropped.inc(removed);
  }
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : 'unknown';
}

/** A driver's error code (e.g. a PostgreSQL SQLSTATE), never its message (which may quote values). */
function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : undefined;
}
