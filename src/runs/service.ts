// The run service (src/runs/port.ts): creates runs with their conversation and step rows and hands
// them to the queue; cancels and retries through compare-and-set moves on the run row.
//
// A trigger commits the run, its conversation and its step rows in one store transaction, then
// enqueues. The committed run (in progress, never leased) is its own outbox entry: when the enqueue
// fails, or the process dies between the commit and the enqueue, the recovery sweep queues it (at the
// next start with the inline queue, within a lease period on a BullMQ worker). A failed commit leaves
// nothing behind and the caller gets the error (500).
import type { Logger } from 'winston';
import { GatewayError } from '../http/errors';
import type { Metrics } from '../log/metrics';
import type { RunQueue } from '../queue/port';
import type { LiveEvents } from '../responses';
import type { Store } from '../store/port';
import type { Principal, RunRecord, RunStatus } from '../store/types';
import type { TraceContext, Tracing } from '../telemetry/tracing';
import type { ActiveRuns } from './active-runs';
import { newConversationId, newRunId } from './ids';
import { acceptInputs } from './inputs';
import { messageItem } from './items';
import type { RunService, TriggerRequest } from './port';
import { endRunResponse } from './run-response';
import { endRun } from './transitions';

export interface RunServiceDeps {
  store: Store;
  queue: RunQueue;
  metrics: Metrics;
  logger: Logger;
  now(): Date;
  active: ActiveRuns;
  /** Live events of responses: a cancelled run started through the Responses interface ends its response's stream. */
  live?: LiveEvents;
  /** Tracing (null or absent: off): a run's job carries its trigger's trace context. */
  tracing?: Tracing | null;
}

function conflict(run: RunRecord, status: RunStatus | undefined, action: string, needed: RunStatus): GatewayError {
  return new GatewayError('conflict', `Run ${run.id} is ${status ?? run.status}; only a run in ${needed} can be ${action}.`);
}

export function createRunService(deps: RunServiceDeps): RunService {
  const { store, queue, logger } = deps;

  /** The job is a hint: when enqueueing fails the committed run stays in progress and the recovery sweep picks it up. */
  async function enqueue(runId: string, key?: string): Promise<void> {
    // Tracing on: the active span (the triggering request's) goes with the job; off: nothing is read.
    const trace: TraceContext | null = deps.tracing ? deps.tracing.context() : null;
    try {
      await queue.enqueue(runId, { ...(key ? { key } : {}), ...(trace ? { trace } : {}) });
    } catch (err) {
      logger.warn('run could not be enqueued; recovery will pick it up', { runId, errorName: err instanceof Error ? err.name : 'unknown' });
    }
  }

  async function trigger(request: TriggerRequest): Promise<RunRecord> {
    const { agent, principal } = request;
    const inputs = acceptInputs(agent.inputs, request.inputs);
    const now = deps.now();
    const createdAt = now.toISOString();
    const id = request.runId ?? newRunId();
    const conversationId = newConversationId();
    const conversation = {
      id: conversationId,
      orgId: agent.orgId,
      userId: principal.userId,
      runId: id,
      metadata: { agentId: agent.id, trigger: request.trigger, ...(request.invocation ? { invocation: request.invocation } : {}) },
      createdAt,
    };
    const run: RunRecord = {
      id,
      orgId: agent.orgId,
      agentId: agent.id,
      agentVersion: agent.version,
      userId: principal.userId,
      keyId: principal.keyId,
      conversationId,
      inputs,
      status: 'in_progress',
      result: null,
      error: null,
      errorCode: null,
      trigger: request.trigger,
      sourceRunId: request.sourceRunId ?? null,
      stepsCompleted: 0,
      createdAt,
      updatedAt: createdAt,
      endedAt: null,
      deadlineAt: new Date(now.getTime() + agent.timeoutSeconds * 1000).toISOString(),
      leaseOwner: null,
      leaseExpiresAt: null,
      attempts: 0,
      leaseGeneration: 0,
      revision: 0,
    };
    await store.runs.create(run, { conversation, steps: agent.steps.map((step, index) => ({ stepNumber: index + 1, name: step.name ?? null })) });
    await enqueue(id);
    return run;
  }

  return {
    trigger,

    async restart(principal: Principal, source: RunRecord): Promise<RunRecord> {
      const agent = await store.agents.get(source.agentId);
      if (!agent || agent.deletedAt) throw new GatewayError('not_found', `Agent of run ${source.id} not found.`);
      return trigger({ principal, agent, inputs: source.inputs, trigger: 'restart', sourceRunId: source.id });
    },

    async cancel(_principal: Principal, run: RunRecord, reason: string): Promise<RunRecord> {
      const ended = await endRun({ store, metrics: deps.metrics, now: deps.now }, run.id, 'cancelled', { error: { code: 'cancelled', message: reason } });
      if (!ended) throw conflict(run, (await store.runs.get(run.id))?.status, 'cancelled', 'in_progress');
      // Executing here: stop now. Executing elsewhere: that worker sees it at its next lease renewal.
      deps.active.stop(run.id, 'cancelled');
      if (deps.live) await endRunResponse({ responses: store.responses, live: deps.live, logger }, ended, deps.now());
      await store.conversations
        .append(run.conversationId, [messageItem('system', `Run cancelled: ${reason}`, `${run.id}:error:cancelled`)])
        .catch(() => undefined);
      return ended;
    },

    async retryFailedStep(_principal: Principal, run: RunRecord): Promise<RunRecord> {
      const version = await store.agents.getVersion(run.agentId, run.agentVersion);
      const timeoutSeconds = version?.definition.timeoutSeconds ?? 600;
      const retried = await store.runs.update(
        run.id,
        {
          status: 'in_progress',
          result: null,
          error: null,
          errorCode: null,
          endedAt: null,
          leaseOwner: null,
          leaseExpiresAt: null,
          attempts: 0,
          // A fresh timeout for the new attempt; the old deadline has usually passed.
          deadlineAt: new Date(deps.now().getTime() + timeoutSeconds * 1000).toISOString(),
        },
        { whenStatus: ['failure'] },
      );
      if (!retried) throw conflict(run, (await store.runs.get(run.id))?.status, 'retried', 'failure');
      // A new job key: the run's first job may still be known to the queue under the plain run id.
      await enqueue(run.id, `${run.id}_retry${retried.revision}`);
      return retried;
    },
  };
}
