// The storage side of streaming responses, built once per process (buildApp) and used by the Responses
// handlers: the live event bus (live-events.ts says which mechanism and why), the batched event log,
// the leases of the responses this process generates, and the lapsed-lease sweeper the runtime runs.
import type { Logger } from 'winston';
import type { GatewayConfig } from '../config/types';
import type { Metrics } from '../log/metrics';
import type { RedisProvider } from '../queue/redis';
import type { ResponseRepository, TurnRepository } from '../store/port';
import { ResponseEventLog, type ResponseEventLogOptions } from './event-log';
import { createLapsedSweeper, type ResponseSweeper } from './lapsed-sweeper';
import { ResponseLeases } from './leases';
import { createInProcessLiveEvents, type LiveEvents } from './live-events';
import { createPostgresLiveEvents } from './live-events-postgres';
import { createRedisLiveEvents } from './live-events-redis';
import { TurnWriter } from './turn-writer';

export { EventLogLostError, ResponseEventLog } from './event-log';
export { createLapsedSweeper, LAPSED_ERROR, type ResponseSweeper } from './lapsed-sweeper';
export { ResponseLeases } from './leases';
export { TurnWriter } from './turn-writer';
export type { LiveEvents, LiveMechanism } from './live-events';
export { parseStartingAfter, replayEvents, type ReplayOptions } from './replay';
export type { StreamEvent } from './stream-event';

export interface LiveEventsDeps {
  config: Pick<GatewayConfig, 'store' | 'queue'>;
  redis: RedisProvider | null;
  logger: Logger;
}

/** The live mechanism for the deployment (live-events.ts explains the choice). */
export function createLiveEvents(deps: LiveEventsDeps): LiveEvents {
  const { config } = deps;
  if (config.queue.driver === 'bullmq') {
    if (!deps.redis) throw new Error('live events: queue.driver is bullmq but no Redis connection was given');
    return createRedisLiveEvents({ redis: deps.redis, prefix: config.queue.prefix, logger: deps.logger });
  }
  switch (config.store.driver) {
    case 'embedded':
      return createInProcessLiveEvents();
    case 'postgres':
      if (!config.store.url) throw new Error('live events: store.url is required for the postgres store');
      return createPostgresLiveEvents({ url: config.store.url, queryTimeoutMs: config.store.queryTimeoutMs, logger: deps.logger });
    case 'mongodb':
      return createInProcessLiveEvents({ mechanism: 'store-poll' });
  }
}

export interface ResponseStreams {
  readonly live: LiveEvents;
  readonly log: ResponseEventLog;
  readonly leases: ResponseLeases;
  readonly sweeper: ResponseSweeper;
  /** Group commit of stored turns (their records, conversation items and terminal writes). */
  readonly turns: TurnWriter;
  /** Writes what the log holds, stops renewing, closes the bus (before the store closes). */
  close(): Promise<void>;
}

export interface ResponseStreamsDeps extends LiveEventsDeps {
  responses: ResponseRepository;
  /** Where stored turns are written (group commit). */
  turns: TurnRepository;
  metrics: Pick<Metrics, 'responseEventsPending' | 'responseEventsDropped' | 'responsesLapsed'>;
  now(): Date;
  /** The process's owner id (the run engine's): the responses it generates are leased to it. */
  owner: string;
  /** queue.leaseSeconds in ms. */
  leaseMs: number;
  /** Store.ping: lets the event log tell a store refusing one response's events from a store that is down. */
  ping?: () => Promise<void>;
  /** Event log tuning (tests); the defaults are EVENT_LOG_DEFAULTS. */
  eventLog?: Partial<Pick<ResponseEventLogOptions, 'flushIntervalMs' | 'batchSize' | 'maxBuffered' | 'retryBaseMs' | 'retryMaxMs' | 'isolateAfter'>>;
}

export function createResponseStreams(deps: ResponseStreamsDeps): ResponseStreams {
  const live = createLiveEvents(deps);
  const log = new ResponseEventLog({
    ...deps.eventLog,
    responses: deps.responses,
    live,
    logger: deps.logger,
    metrics: deps.metrics,
    ...(deps.ping ? { ping: deps.ping } : {}),
  });
  const leases = new ResponseLeases({ responses: deps.responses, owner: deps.owner, leaseMs: deps.leaseMs, now: deps.now, logger: deps.logger });
  const sweeper = createLapsedSweeper({ responses: deps.responses, live, logger: deps.logger, metrics: deps.metrics, now: deps.now });
  // A server database commits several transactions at once; the embedded one runs one at a time.
  const turns = new TurnWriter(deps.turns, deps.logger, deps.config.store.driver === 'embedded' ? 1 : 4, {
    ...(deps.ping ? { ping: deps.ping } : {}),
    // Held as long as the response's lease: past it, the lapsed-lease sweeper may mark the response failed.
    endRetryMs: deps.leaseMs,
  });
  let closing: Promise<void> | null = null;
  return {
    live,
    log,
    leases,
    sweeper,
    turns,
    close() {
      closing ??= (async () => {
        await leases.close();
        await log.close();
        await turns.drain();
        await live.close();
      })();
      return closing;
    },
  };
}

/** expiresAt of a response created at `createdAt` under store.retentionDays (0 keeps it: null). */
export function responseExpiry(createdAt: string, retentionDays: number): string | null {
  if (retentionDays <= 0) return null;
  return new Date(Date.parse(createdAt) + retentionDays * 86_400_000).toISOString();
}
