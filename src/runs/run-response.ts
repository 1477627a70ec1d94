// The Responses face of an agent run invoked as `model: agent/<agent_id>` (spec "POST /v1/responses"
// rule 7, "GET /v1/responses/{response_id}", "Response status"): a stored response `resp_run_<run_id>`
// with its own event log, created with the run (status in_progress, `response.created` and
// `response.in_progress` already in its log) and finished when the run ends: completed with the run's
// final assistant message as its output, or failed with the run's error.
//
// Who writes its events: the execution running the run (run-response-stream.ts), through the batched
// event log, numbered on from what is stored. A run ended by anyone else (cancelled through the API,
// cancelled by the timeout sweep) has its response ended here, like the lapsed-response sweeper does:
// `error` then `response.failed` numbered after the last stored event, stored, then published live. A
// reader that saw more of an execution's events live gets those endings renumbered after what it has
// (src/responses/replay.ts), so every stream ends with exactly one terminal event.
//
// The response carries no response lease: the run's own lease and recovery decide whether the run is
// still going (a crashed worker's run is resumed elsewhere, and its response goes on with it).
import type { Logger } from 'winston';
import { ResponsesEventStream, type ResponsesEvent } from '../formats/responses';
import type { LiveEvents, StreamEvent } from '../responses';
import type { ResponseRepository } from '../store/port';
import type { ResponseRecord, RunRecord } from '../store/types';

export const RUN_RESPONSE_PREFIX = 'resp_run_';

export const runResponseId = (runId: string): string => `${RUN_RESPONSE_PREFIX}${runId}`;

/** The run id of a `resp_run_<run_id>` response id; null for any other id. */
export function runIdOfResponse(responseId: string): string | null {
  return responseId.startsWith(RUN_RESPONSE_PREFIX) ? responseId.slice(RUN_RESPONSE_PREFIX.length) : null;
}

/**
 * What a Responses request adds to the run it starts, kept in the run's conversation metadata (written
 * with the run in one transaction): the caller's `instructions`, appended after the agent's own prompt,
 * and the caller's text when the agent declares no input to carry it (the run's first user message).
 */
export interface ResponsesInvocation {
  instructions?: string;
  message?: string;
}

/** The invocation kept in a conversation's metadata (absent or malformed: nothing). */
export function invocationOf(metadata: Record<string, unknown>): ResponsesInvocation {
  const value = metadata['invocation'];
  if (value === null || typeof value !== 'object') return {};
  const { instructions, message } = value as Record<string, unknown>;
  return {
    ...(typeof instructions === 'string' ? { instructions } : {}),
    ...(typeof message === 'string' ? { message } : {}),
  };
}

export interface NewRunResponse {
  runId: string;
  orgId: string;
  userId: string;
  /** `agent/<agent_id>`, as the caller named it. */
  model: string;
  /** The caller's body: its fields are echoed in the response object. */
  request: Record<string, unknown>;
  inputItems: Record<string, unknown>[];
  createdAt: string;
  expiresAt: string | null;
}

export interface RunResponseStoreDeps {
  responses: Pick<ResponseRepository, 'create' | 'appendEvents' | 'get' | 'finish' | 'lastSequenceNumber'>;
  live: LiveEvents;
  logger: Logger;
}

const asStreamEvent = (event: ResponsesEvent): StreamEvent => ({
  sequenceNumber: event.sequence_number,
  event: event.type,
  data: event as unknown as Record<string, unknown>,
});

/**
 * Creates the response of a run about to be triggered, with `response.created` and
 * `response.in_progress` stored in its log (so a caller streaming it hears them at once, however long
 * the run waits in the queue). Returns the in-progress response object.
 */
export async function createRunResponse(deps: RunResponseStoreDeps, init: NewRunResponse): Promise<Record<string, unknown>> {
  const id = runResponseId(init.runId);
  const stream = new ResponsesEventStream({ request: init.request, id, model: init.model, createdAt: Math.floor(Date.parse(init.createdAt) / 1000) });
  const events = stream.start().map(asStreamEvent);
  const snapshot = stream.response() as unknown as Record<string, unknown>;
  await deps.responses.create({
    id,
    orgId: init.orgId,
    userId: init.userId,
    status: 'in_progress',
    model: init.model,
    conversationId: null,
    previousResponseId: null,
    stored: true,
    body: snapshot,
    inputItems: init.inputItems,
    createdAt: init.createdAt,
    updatedAt: init.createdAt,
    expiresAt: init.expiresAt,
    lease: null,
  });
  await deps.responses.appendEvents(events.map((e) => ({ responseId: id, ...e, createdAt: init.createdAt })));
  for (const event of events) deps.live.publish(id, event);
  deps.live.stored([{ responseId: id, from: 0, to: events.length - 1 }]);
  return snapshot;
}

/** The body of a run's response that ended without its execution: failed, with the run's reason. */
export function endedBody(record: ResponseRecord, run: Pick<RunRecord, 'error' | 'errorCode'>): Record<string, unknown> {
  const error = { code: run.errorCode ?? 'run_error', message: run.error ?? 'The run ended before it completed.' };
  return { ...record.body, status: 'failed', completed_at: null, output: [], error };
}

/**
 * Ends the response of a run ended by someone other than its execution (cancel, timeout sweep, an
 * execution that never began): finished as failed, then `error` and `response.failed` stored after the
 * last stored event and published. Nothing for runs not started through the Responses interface, or
 * whose response already ended. Failures are logged, never thrown: the run's end stands.
 */
export async function endRunResponse(deps: RunResponseStoreDeps, run: RunRecord, now: Date): Promise<void> {
  if (run.trigger !== 'responses') return;
  const id = runResponseId(run.id);
  try {
    const record = await deps.responses.get(id);
    if (!record || record.status !== 'in_progress') return;
    const body = endedBody(record, run);
    const ended = await deps.responses.finish(id, { status: 'failed', body }, { whenStatus: 'in_progress' });
    if (!ended) return;
    const next = (await deps.responses.lastSequenceNumber(id)) + 1;
    const error = {
      type: 'server_error',
      code: String((body['error'] as Record<string, unknown>)['code']),
      message: String((body['error'] as Record<string, unknown>)['message']),
      param: null,
    };
    const events: StreamEvent[] = [
      { sequenceNumber: next, event: 'error', data: { type: 'error', sequence_number: next, code: error.code, message: error.message, param: null, error } },
      { sequenceNumber: next + 1, event: 'response.failed', data: { type: 'response.failed', sequence_number: next + 1, response: body } },
    ];
    const createdAt = now.toISOString();
    await deps.responses.appendEvents(events.map((e) => ({ responseId: id, ...e, createdAt })));
    for (const event of events) deps.live.publish(id, event);
    deps.live.stored([{ responseId: id, from: next, to: next + 1 }]);
  } catch (err) {
    // The run ended all the same; a reader ends from the response body at its next store read, or,
    // if the finish itself failed, the response stays in progress: logged so an operator sees it.
    deps.logger.warn('run response could not be ended', { runId: run.id, errorName: err instanceof Error ? err.name : 'unknown' });
  }
}
