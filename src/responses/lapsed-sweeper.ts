// A gateway killed mid-stream leaves no response in progress for ever (issue 17, section 4): its
// responses' leases stop being renewed, and any gateway's sweep marks a response whose lease lapsed as
// failed, then appends `error` and `response.failed` to its event log and publishes them so readers
// following it live end. Several gateways may sweep at once: finish() is a compare-and-set (still in
// progress and still lapsed), so exactly one of them writes the failure and its events.
import type { Logger } from 'winston';
import type { Metrics } from '../log/metrics';
import type { ResponseRepository } from '../store/port';
import type { ResponseRecord } from '../store/types';
import type { LiveEvents } from './live-events';
import type { StreamEvent } from './stream-event';

export interface LapsedSweepDeps {
  responses: Pick<ResponseRepository, 'listLapsed' | 'finish' | 'lastSequenceNumber' | 'appendEvents'>;
  live: LiveEvents;
  logger: Logger;
  metrics?: Pick<Metrics, 'responsesLapsed'>;
  now(): Date;
}

/** What the sweeper runs as, so the runtime starts it the same way in inline and bullmq modes. */
export interface ResponseSweeper {
  /** Fails the responses whose lease lapsed before `now` (default: the clock); returns how many. */
  sweep(now?: Date): Promise<number>;
  /**
   * Fails every leased in-progress response not leased to `owner`, lapsed or not: for a process that
   * knows it is the only one (the embedded store is locked), any other lease is a previous life's.
   */
  sweepAllBut(owner: string): Promise<number>;
}

/**
 * The error a swept response carries. Its `error` event has the shape the Responses event stream gives
 * every failure (formats/responses): the spec's nested `{ error: { message, type, code } }` (Events,
 * rule 3) and the same fields flat, as the OpenAI SDKs read them.
 */
export const LAPSED_ERROR = {
  type: 'server_error',
  code: 'server_error',
  message: 'The gateway generating this response stopped before it finished; the response was not completed.',
  param: null,
} as const;

const BATCH = 100;

/** The response's body once failed by the sweeper: what GET returns and what response.failed carries. */
export function lapsedBody(record: ResponseRecord): Record<string, unknown> {
  return { ...record.body, status: 'failed', error: { code: LAPSED_ERROR.code, message: LAPSED_ERROR.message } };
}

export function createLapsedSweeper(deps: LapsedSweepDeps): ResponseSweeper {
  const fail = async (record: ResponseRecord, now: Date, lapsedBefore: string): Promise<boolean> => {
    const body = lapsedBody(record);
    const ended = await deps.responses.finish(record.id, { status: 'failed', body }, { whenStatus: 'in_progress', lapsedBefore });
    if (!ended) return false; // finished by its writer, renewed, or swept by another gateway meanwhile
    // Numbered after what is stored: events the dead writer published and never stored are gone.
    const next = (await deps.responses.lastSequenceNumber(record.id)) + 1;
    const events: StreamEvent[] = [
      {
        sequenceNumber: next,
        event: 'error',
        data: { type: 'error', sequence_number: next, code: LAPSED_ERROR.code, message: LAPSED_ERROR.message, param: null, error: { ...LAPSED_ERROR } },
      },
      { sequenceNumber: next + 1, event: 'response.failed', data: { type: 'response.failed', sequence_number: next + 1, response: body } },
    ];
    const createdAt = now.toISOString();
    // Stored before they are published, so a reader told by a NOTIFY finds them. If the write fails
    // the response is failed all the same: readers end from its body at their next store read.
    const stored = await deps.responses.appendEvents(events.map((e) => ({ responseId: record.id, ...e, createdAt }))).then(
      () => true,
      (err: unknown) => {
        deps.logger.warn('response sweeper: could not store the failure events', {
          component: 'response-sweeper',
          responseId: record.id,
          errorName: err instanceof Error ? err.name : 'unknown',
        });
        return false;
      },
    );
    for (const event of events) deps.live.publish(record.id, event);
    if (stored) deps.live.stored([{ responseId: record.id, from: next, to: next + 1 }]);
    deps.logger.warn('response failed: the gateway generating it stopped (lease lapsed)', {
      component: 'response-sweeper',
      responseId: record.id,
      orgId: record.orgId,
    });
    deps.metrics?.responsesLapsed.inc();
    return true;
  };

  const sweepWhere = async (now: Date, lapsedBefore: string, skip: (record: ResponseRecord) => boolean): Promise<number> => {
    let failed = 0;
    for (const record of await deps.responses.listLapsed(lapsedBefore, BATCH)) {
      if (!skip(record) && (await fail(record, now, lapsedBefore))) failed++;
    }
    return failed;
  };

  return {
    sweep(now = deps.now()) {
      return sweepWhere(now, now.toISOString(), () => false);
    },
    async sweepAllBut(owner) {
      const now = deps.now();
      let failed = 0;
      // Batches until one fails nothing new (ours are skipped, so a batch of only ours ends it too).
      for (;;) {
        const done = await sweepWhere(now, END_OF_TIME, (record) => record.lease?.owner === owner);
        failed += done;
        if (done === 0) return failed;
      }
    },
  };
}

/** Later than any lease: every leased in-progress response has lapsed before it. */
const END_OF_TIME = '9999-12-31T23:59:59.999Z';
