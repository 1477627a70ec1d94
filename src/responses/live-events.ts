// Live continuation of a response's events: the writer publishes each event as it is produced, readers
// (GET /v1/responses/{id}?stream=true, replay.ts) subscribe to the response. A reader may be connected
// to another gateway process than the writer (issue 17, section 4), so the mechanism follows the
// deployment:
//
//   queue.driver bullmq          → Redis pub/sub (live-events-redis.ts). A scale-out deployment has Redis
//                                  already; events reach other processes at once, without waiting for
//                                  the event log's store write. One subscriber connection per process,
//                                  one channel per response with local readers (not a connection per reader).
//   embedded store (inline)      → in this process only: the embedded store is locked by one process,
//                                  so writer and readers always share it.
//   postgres store, inline queue → PostgreSQL LISTEN/NOTIFY (live-events-postgres.ts): no Redis is
//                                  configured, several gateways may share the database. A NOTIFY carries
//                                  only "events of response X up to n are stored" (a payload is capped at
//                                  8000 bytes, an event is not), readers then read the store: other
//                                  processes follow one event-log batch (~50 ms) behind.
//   mongodb store, inline queue  → store polling by the waiting reader (no change streams without a
//                                  replica set), every 250 ms.
//
// In every mode this process's own readers get events the moment they are published, and every waiting
// reader also reads the store now and then (storePollMs): pub/sub and NOTIFY are at-most-once (a
// dropped connection loses messages), the store is the truth a reader falls back on.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'winston';
import type { StreamEvent } from './stream-event';

export type LiveMechanism = 'in-process' | 'redis' | 'postgres-notify' | 'store-poll';

/** What a subscriber is told. Called synchronously by the publisher: must not throw or block. */
export interface LiveReader {
  /** An event of the response (duplicates and reordering possible across processes: replay.ts sorts). */
  onEvent(event: StreamEvent): void;
  /** Events of the response up to `upTo` are in the store (the mechanisms that carry no event payload). */
  onStored(upTo: number): void;
}

export interface LiveSubscription {
  close(): void;
}

/** Events of one response made durable by one event-log write. */
export interface StoredRange {
  responseId: string;
  from: number;
  to: number;
}

export interface LiveEvents {
  readonly mechanism: LiveMechanism;
  /** How long a waiting reader goes without reading the store (the safety net, or the mechanism itself). */
  readonly storePollMs: number;
  /** Synchronous: this process's readers get the event now, other processes' as the mechanism carries it. */
  publish(responseId: string, event: StreamEvent): void;
  /**
   * Resolves once the subscription is in place: every event published after that, by any process,
   * reaches `reader` (as an event, or as onStored once it is stored). Read the store after this, not
   * before, and nothing falls between the two.
   */
  subscribe(responseId: string, reader: LiveReader): Promise<LiveSubscription>;
  /** The event log's report of what it just stored (NOTIFY rides on it; a no-op elsewhere). */
  stored(ranges: readonly StoredRange[]): void;
  close(): Promise<void>;
}

/** This process's readers, by response. */
export class LocalReaders {
  private readonly readers = new Map<string, Set<LiveReader>>();

  add(responseId: string, reader: LiveReader): () => void {
    let set = this.readers.get(responseId);
    if (!set) {
      set = new Set();
      this.readers.set(responseId, set);
    }
    set.add(reader);
    return () => {
      const current = this.readers.get(responseId);
      if (!current) return;
      current.delete(reader);
      if (current.size === 0) this.readers.delete(responseId);
    };
  }

  has(responseId: string): boolean {
    return this.readers.has(responseId);
  }

  deliver(responseId: string, event: StreamEvent): void {
    this.tell(responseId, (reader) => reader.onEvent(event));
  }

  poke(responseId: string, upTo: number): void {
    this.tell(responseId, (reader) => reader.onStored(upTo));
  }

  private tell(responseId: string, call: (reader: LiveReader) => void): void {
    const set = this.readers.get(responseId);
    if (!set) return;
    for (const reader of set) {
      // A reader's failure is its own: the writer publishing must never see it.
      try {
        call(reader);
      } catch {
        // ignored (see above)
      }
    }
  }
}

/** This process's mark on what it sends across processes, so that it skips its own (its readers had the events already). */
export function newOrigin(): string {
  return randomBytes(8).toString('hex');
}

/** Connection and publish failures repeat while Redis or PostgreSQL is away: logged at most this often. */
const REPORT_INTERVAL_MS = 10_000;

/** A warning about the cross-process mechanism, at most one per REPORT_INTERVAL_MS (the error's name only). */
export function throttledReporter(logger: Logger): (what: string, err: unknown) => void {
  let lastReport = 0;
  return (what, err) => {
    const now = Date.now();
    if (now - lastReport < REPORT_INTERVAL_MS) return;
    lastReport = now;
    logger.warn(what, { component: 'response-events', errorName: err instanceof Error ? err.name : 'unknown' });
  };
}

/** The default for push mechanisms: a lost message delays a reader by at most this. */
export const SAFETY_POLL_MS = 2000;
/** The store-polling mechanism's interval. */
export const STORE_POLL_MS = 250;

/** Writer and readers in one process (the embedded store), or store polling (mongodb without Redis). */
export function createInProcessLiveEvents(options: { mechanism?: 'in-process' | 'store-poll'; storePollMs?: number } = {}): LiveEvents {
  const local = new LocalReaders();
  const mechanism = options.mechanism ?? 'in-process';
  return {
    mechanism,
    storePollMs: options.storePollMs ?? (mechanism === 'store-poll' ? STORE_POLL_MS : SAFETY_POLL_MS),
    publish(responseId, event) {
      local.deliver(responseId, event);
    },
    subscribe(responseId, reader) {
      const remove = local.add(responseId, reader);
      return Promise.resolve({ close: remove });
    },
    stored() {
      // Readers here got every event when it was published.
    },
    close() {
      return Promise.resolve();
    },
  };
}
