// Replaying a stored response's events and continuing live (GET /v1/responses/{id}?stream=true, spec
// "GET /v1/responses/{response_id}"): the events after `starting_after` in order, then the live ones,
// without a gap or a duplicate, ending after the final event.
//
// Order of operations: subscribe first (live events are buffered from then on), then read the
// response, then its stored events, then the buffer, sorted and de-duplicated by sequence number. An
// event published while the store is read is in the buffer (and perhaps in the read too: kept once);
// nothing published after the subscription can be missed. Events the writer published before this
// reader subscribed and had not stored yet are in neither: a gap, filled by reading the store again
// every gapRetryMs until the writer's batch lands (and twice shortly after subscribing, in case no
// later event shows the gap). The response is read before its events: one read as finished has its
// whole log stored (the writer flushes before finishing).
//
// A writer that died leaves its response to the lapsed-lease sweeper, which numbers its `error` and
// `response.failed` after the last event it finds stored. A reader that saw more of the dead writer's
// events live may hold that number already: an ending event numbered within what this reader has
// yielded is yielded after it, renumbered (readers see continuous numbers whatever happened upstream).
// In the store the sweeper's events take their numbers and the dead writer's unstored ones are gone.
//
// A finished response whose events stop short of a final event (log dropped, or written by a path
// without an event log) ends with a final event built from its stored body; if none of its events are
// stored at all (past the event log, or never logged) the replay is the body's output items, one
// `response.output_item.done` each, then the final event: no deltas (spec, "Resume window").
import { GatewayError } from '../http/errors';
import type { ResponseRepository } from '../store/port';
import type { ResponseRecord } from '../store/types';
import { STORE_POLL_MS, type LiveEvents, type LiveReader, type LiveSubscription } from './live-events';
import { finalEventFor, isEndingEvent, isFinalEvent, renumbered, type StreamEvent } from './stream-event';

export interface ReplayOptions {
  responses: Pick<ResponseRepository, 'get' | 'listEvents'>;
  live: LiveEvents;
  responseId: string;
  /** Events after this sequence number are replayed; -1 from the start (parseStartingAfter). */
  startingAfter: number;
  /** Ends the replay (the reader went away): the iterator returns. */
  signal?: AbortSignal;
  /** How soon the store is read again while a gap in the live events waits for the writer's batch. */
  gapRetryMs?: number;
  /**
   * Called once the first store read succeeded, before any event is yielded: from then on the replay
   * does not fail (a later failed read is retried), so its caller may commit to a stream. A failure of
   * the first read rejects the first next() instead.
   */
  onStarted?: () => void;
}

const GAP_RETRY_MS = 25;
/**
 * Store reads after subscribing, in ms: by then the writer's events from before the subscription are
 * stored (the event log writes every 50 ms; the second read allows for a slow write).
 */
const SETTLE_READS_MS = [150, 600];

/**
 * A failed response whose stored log has no final event is read once more after this long before the
 * reader ends it from the body: the lapsed sweeper marks a response failed first and stores its `error`
 * and `response.failed` right after, and a read between the two would end without the error event.
 */
const FAILED_SETTLE_MS = 100;

/** What the reader has yielded and what it holds back until the numbers before it arrive. */
class Sequencer {
  private readonly held = new Map<number, StreamEvent>();
  /** Numbers at which an `error` was yielded (a second copy of it is a duplicate, not the sweeper's). */
  private readonly errorsAt = new Set<number>();
  private readonly ready: StreamEvent[] = [];
  ended = false;

  constructor(public last: number) {}

  /** Stored events are the truth for their numbers: they replace live ones held under the same number. */
  addStored(events: readonly StreamEvent[]): void {
    if (this.ended) return;
    for (const event of events) if (event.sequenceNumber > this.last) this.held.set(event.sequenceNumber, event);
    this.drain();
  }

  addLive(event: StreamEvent): void {
    if (this.ended) return;
    if (event.sequenceNumber > this.last) {
      const held = this.held.get(event.sequenceNumber);
      // Two events under one number: the sweeper's ending event beats a dead writer's.
      if (!held || (isEndingEvent(event.event) && !isEndingEvent(held.event))) this.held.set(event.sequenceNumber, event);
      this.drain();
      return;
    }
    if (!isEndingEvent(event.event)) return; // a copy of one yielded already
    if (event.event === 'error' && this.errorsAt.has(event.sequenceNumber)) return;
    // An ending event numbered within what was yielded: the sweeper's, numbered after the stored log.
    this.emit(renumbered(event, this.last + 1));
    this.drain();
  }

  /** Stored events (or none) exhausted and the response finished: its ending from the stored body. */
  finishFrom(record: ResponseRecord, withItems: boolean): void {
    if (this.ended) return;
    const final = finalEventFor(record.status) ?? 'response.failed';
    if (withItems) {
      const output = Array.isArray(record.body['output']) ? (record.body['output'] as unknown[]) : [];
      output.forEach((item, index) => {
        const n = this.last + 1;
        this.emit({
          sequenceNumber: n,
          event: 'response.output_item.done',
          data: { type: 'response.output_item.done', sequence_number: n, output_index: index, item },
        });
      });
    }
    const n = this.last + 1;
    this.emit({ sequenceNumber: n, event: final, data: { type: final, sequence_number: n, response: record.body } });
  }

  /** Waiting on numbers that have not arrived while later ones have. */
  get gap(): boolean {
    return this.held.size > 0;
  }

  take(): StreamEvent[] {
    return this.ready.splice(0);
  }

  private drain(): void {
    for (let next = this.held.get(this.last + 1); next && !this.ended; next = this.held.get(this.last + 1)) {
      this.held.delete(next.sequenceNumber);
      this.emit(next);
    }
  }

  private emit(event: StreamEvent): void {
    this.last = event.sequenceNumber;
    this.ready.push(event);
    if (event.event === 'error') this.errorsAt.add(event.sequenceNumber);
    if (isFinalEvent(event.event)) {
      this.ended = true;
      this.held.clear();
    }
  }
}

function finished(record: ResponseRecord): boolean {
  return finalEventFor(record.status) !== null;
}

function asStreamEvents(records: readonly { sequenceNumber: number; event: string; data: Record<string, unknown> }[]): StreamEvent[] {
  return records.map((r) => ({ sequenceNumber: r.sequenceNumber, event: r.event, data: r.data }));
}

/**
 * The response's events after `startingAfter`, then live ones, ending after its final event (or when
 * the signal aborts, or the response disappears). The caller has checked the response is visible.
 */
export async function* replayEvents(options: ReplayOptions): AsyncGenerator<StreamEvent, void, undefined> {
  const { responses, live, responseId, signal } = options;
  const gapRetryMs = options.gapRetryMs ?? GAP_RETRY_MS;
  const sequencer = new Sequencer(options.startingAfter);
  const inbox: StreamEvent[] = [];
  /** Stored events announced beyond what was yielded: the store has something for this reader. */
  let storedNotice = false;
  let wake: (() => void) | null = null;
  const notify = (): void => {
    const resume = wake;
    wake = null;
    resume?.();
  };
  const reader: LiveReader = {
    onEvent(event) {
      inbox.push(event);
      notify();
    },
    onStored(upTo) {
      if (upTo <= sequencer.last) return;
      storedNotice = true;
      notify();
    },
  };
  // Live delivery that cannot be had (Redis away) leaves the store: read often enough to stream.
  const subscription: LiveSubscription | null = await live.subscribe(responseId, reader).catch(() => null);
  const pollMs = subscription ? live.storePollMs : Math.min(live.storePollMs, STORE_POLL_MS);
  signal?.addEventListener('abort', notify);

  /** Reads the response, then its events; false when it is gone. Ends the sequence if it is finished. */
  const readStore = async (): Promise<boolean> => {
    const record = await responses.get(responseId);
    if (!record) return false;
    const stored = await responses.listEvents(responseId, sequencer.last);
    sequencer.addStored(asStreamEvents(stored));
    if (record.status === 'failed' && !sequencer.ended) {
      await new Promise((resolve) => setTimeout(resolve, FAILED_SETTLE_MS));
      sequencer.addStored(asStreamEvents(await responses.listEvents(responseId, sequencer.last)));
    }
    if (finished(record) && !sequencer.ended) {
      // Nothing yielded by this reader and nothing stored at all: the log is gone (or never was).
      const logAbsent = sequencer.last === options.startingAfter && (await responses.listEvents(responseId, -1, 1)).length === 0;
      sequencer.finishFrom(record, logAbsent);
    }
    return true;
  };

  try {
    if (signal?.aborted) return;
    const subscribedAt = Date.now();
    if (!(await readStore())) return;
    options.onStarted?.();
    let lastStoreRead = Date.now();
    // Events the writer published before this reader subscribed and had not stored yet reach it
    // neither live nor in the first read: they are in the store one event-log batch later.
    const settleReads = SETTLE_READS_MS.map((ms) => subscribedAt + ms);
    for (;;) {
      for (const event of inbox.splice(0)) sequencer.addLive(event);
      for (const event of sequencer.take()) {
        yield event;
        if (signal?.aborted) return;
      }
      if (sequencer.ended || signal?.aborted) return;
      if (inbox.length > 0) continue; // arrived while the caller consumed
      const now = Date.now();
      const sinceRead = now - lastStoreRead;
      while (settleReads.length > 0 && settleReads[0]! <= lastStoreRead) settleReads.shift();
      const settle = settleReads[0] ?? Infinity;
      if (storedNotice || sinceRead >= pollMs || (sequencer.gap && sinceRead >= gapRetryMs) || now >= settle) {
        storedNotice = false;
        // The store is where a reader catches up, not its only source: a failed read (a store that is
        // briefly away) is retried at the next one while live events go on; ending here would cut the
        // stream short of its terminal event.
        if (!(await readStore().catch(() => true))) return;
        lastStoreRead = Date.now();
        continue;
      }
      const waitMs = Math.min((sequencer.gap ? gapRetryMs : pollMs) - sinceRead, settle - now);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(
          () => {
            wake = null;
            resolve();
          },
          Math.max(1, waitMs),
        );
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    wake = null;
    subscription?.close();
    signal?.removeEventListener('abort', notify);
  }
}

/**
 * The replay start from the query's `starting_after`, else the `Last-Event-ID` header (the SSE
 * reconnection header, our `id:` being the sequence number); -1 (from the start) when both are absent.
 * Anything but a non-negative integer is a 400 naming the parameter, without an error code (spec,
 * nested envelope: "invalid starting_after", no code shown).
 */
export function parseStartingAfter(query: unknown, lastEventId: string | undefined): number {
  if (query !== undefined) return sequenceNumberOf(query, 'starting_after');
  const header = lastEventId?.trim();
  // An empty Last-Event-ID is the SSE spec's "no last event" (a reset): from the start.
  if (header) return sequenceNumberOf(header, 'Last-Event-ID');
  return -1;
}

function sequenceNumberOf(value: unknown, param: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new GatewayError('invalid_starting_after', `Invalid '${param}': expected a non-negative integer sequence number.`, { param });
  }
  return n;
}
