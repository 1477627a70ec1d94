// Live events across processes sharing a PostgreSQL store without Redis (live-events.ts says why):
// after event-log writes (and stored responses' ends, which store their last events) the writer sends
// one NOTIFY per turn of its event loop naming the responses and sequence numbers it stored; a process
// with readers of one of them tells them to read the store. One connection per process LISTENs (and
// sends the NOTIFYs). NOTIFY is delivered only to sessions listening at the time, at most once: while
// the connection is down readers fall back on their periodic store read, and a subscribe made then
// resolves (with that fallback) once the connection fails or is given up (CONNECT_TIMEOUT_MS for a
// server that does not answer) rather than failing the reader.
import type PgModule from 'pg';
import type { Logger } from 'winston';
import { CONNECT_TIMEOUT_MS, postgresTimeouts } from '../store/sql/database';
import { LocalReaders, SAFETY_POLL_MS, newOrigin, throttledReporter, type LiveEvents, type StoredRange } from './live-events';

export interface PostgresLiveEventsOptions {
  url: string;
  logger: Logger;
  /** The NOTIFY channel (database-wide, whatever the schema). */
  channel?: string;
  storePollMs?: number;
  /** store.queryTimeoutMs: a NOTIFY not answered in time drops the connection (a new one is made). */
  queryTimeoutMs?: number;
  /** How long making the listening connection may take (default CONNECT_TIMEOUT_MS); past it, as if the server were down. */
  connectTimeoutMs?: number;
}

export const DEFAULT_CHANNEL = 'agw_response_events';

/** A NOTIFY payload must be shorter than 8000 bytes (PostgreSQL docs, NOTIFY). */
const MAX_PAYLOAD_BYTES = 7900;
const RECONNECT_MS = 1000;
/** Ranges kept for a NOTIFY that failed, at most. */
const MAX_PENDING_RANGES = 10_000;

interface Announcement {
  o: string;
  r: [string, number, number][];
}

function loadPg(): typeof PgModule {
  // Loaded only by gateways on the postgres store (an embedded one never carries node-postgres).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('pg') as typeof PgModule;
}

/** The ranges as NOTIFY payloads, each under the size limit. */
export function announcements(origin: string, ranges: readonly StoredRange[]): string[] {
  const payloads: string[] = [];
  let entries: string[] = [];
  let size = 0;
  const head = `{"o":${JSON.stringify(origin)},"r":[`;
  for (const range of ranges) {
    const entry = JSON.stringify([range.responseId, range.from, range.to]);
    if (entries.length > 0 && head.length + size + entry.length + 3 > MAX_PAYLOAD_BYTES) {
      payloads.push(`${head}${entries.join(',')}]}`);
      entries = [];
      size = 0;
    }
    entries.push(entry);
    size += entry.length + 1;
  }
  if (entries.length > 0) payloads.push(`${head}${entries.join(',')}]}`);
  return payloads;
}

export function createPostgresLiveEvents(options: PostgresLiveEventsOptions): LiveEvents {
  const local = new LocalReaders();
  const origin = newOrigin();
  const channel = options.channel ?? DEFAULT_CHANNEL;
  let connecting: Promise<PgModule.Client | null> | null = null;
  let readers = 0;
  let closed = false;
  let reconnectTimer: NodeJS.Timeout | null = null;
  const report = throttledReporter(options.logger);

  const onNotification = (message: PgModule.Notification): void => {
    if (message.channel !== channel || !message.payload) return;
    let announcement: Announcement;
    try {
      announcement = JSON.parse(message.payload) as Announcement;
    } catch {
      return;
    }
    // Readers in the writer's own process had the events when they were published.
    if (announcement.o === origin || !Array.isArray(announcement.r)) return;
    for (const [responseId, , to] of announcement.r) if (local.has(responseId)) local.poke(responseId, to);
  };

  let current: PgModule.Client | null = null;
  /** Ranges stored since the last NOTIFY, announced at the next turn of the event loop. */
  let announcing: StoredRange[] = [];
  let announceScheduled = false;
  /**
   * One NOTIFY in flight at a time on the one connection (node-postgres deprecates a query issued
   * while another runs, and pg 9 refuses it): ranges stored while one is in flight go in the next.
   */
  let notifying = false;
  const announce = async (): Promise<void> => {
    announceScheduled = false;
    if (notifying) return;
    notifying = true;
    let client: PgModule.Client | null = null;
    let ranges: StoredRange[] = [];
    let failed = false;
    try {
      while (!closed && announcing.length > 0) {
        ranges = announcing;
        announcing = [];
        client = await connection();
        // No connection: readers fall back on their periodic store read (see the file's head).
        if (!client) return;
        for (const payload of announcements(origin, ranges)) await client.query('SELECT pg_notify($1, $2)', [channel, payload]);
      }
    } catch (err) {
      report('live events: notify failed', err);
      failed = true;
      // Unanswered (a partition), the NOTIFY stays in flight and every later one would queue behind it:
      // the next announcement gets a new connection.
      if (client) lost(client);
      // Announced again there (a reader told twice reads the store twice), up to a bound while the
      // server stays away: past it the readers' periodic store read finds the rest.
      if (announcing.length < MAX_PENDING_RANGES) announcing = ranges.concat(announcing);
    } finally {
      notifying = false;
      // Ranges stored while this NOTIFY was in flight, or the failed one's, are not left waiting for
      // the next store write, which an idle gateway may not make.
      if (!closed && announcing.length > 0 && !announceScheduled) {
        announceScheduled = true;
        if (failed) setTimeout(() => void announce(), RECONNECT_MS).unref();
        else setImmediate(() => void announce());
      }
    }
  };

  /** The connection ended (error, server gone, failed start): forget it, and reconnect if readers wait. */
  const lost = (client: PgModule.Client): void => {
    if (current !== client) return;
    current = null;
    connecting = null;
    client.removeAllListeners('notification');
    client.end().catch(() => undefined);
    // Readers waiting now would otherwise be left on the slow store read until the next subscribe.
    if (!closed && readers > 0 && !reconnectTimer) {
      reconnectTimer = setTimeout(() => {
        reconnectTimer = null;
        void connection();
      }, RECONNECT_MS);
      reconnectTimer.unref();
    }
  };

  /** The listening connection, connected on first use; null while it cannot be had. */
  const connection = (): Promise<PgModule.Client | null> => {
    if (closed) return Promise.resolve(null);
    connecting ??= (async () => {
      const pg = loadPg();
      const client = new pg.Client({
        connectionString: options.url,
        connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
        ...postgresTimeouts(options.queryTimeoutMs),
      });
      current = client;
      client.on('error', (err: Error) => {
        report('live events: notification connection lost', err);
        lost(client);
      });
      client.on('end', () => lost(client));
      client.on('notification', onNotification);
      try {
        await client.connect();
        await client.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
        return client;
      } catch (err) {
        report('live events: cannot listen for stored events', err);
        lost(client);
        return null;
      }
    })();
    return connecting;
  };

  return {
    mechanism: 'postgres-notify',
    storePollMs: options.storePollMs ?? SAFETY_POLL_MS,
    publish(responseId, event) {
      local.deliver(responseId, event);
    },
    async subscribe(responseId, reader) {
      const remove = local.add(responseId, reader);
      readers++;
      let released = false;
      await connection();
      return {
        close() {
          if (released) return;
          released = true;
          readers--;
          remove();
        },
      };
    },
    stored(ranges: readonly StoredRange[]) {
      if (closed || ranges.length === 0) return;
      // Announced once per turn of the event loop: every stored response's end announces its own
      // events, and a NOTIFY each (a round trip and a backend's statement) would outnumber the writes.
      for (const range of ranges) announcing.push(range);
      if (announceScheduled || notifying) return;
      announceScheduled = true;
      setImmediate(() => void announce());
    },
    async close() {
      closed = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      await connecting;
      const client = current;
      current = null;
      connecting = null;
      if (client) {
        client.removeAllListeners('notification');
        await client.end().catch(() => undefined);
      }
    },
  };
}
