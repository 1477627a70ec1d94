import { agentNotFound, callerOf, uuidParam, visibleRun } from '../../agents/access';
import { presentAccepted } from '../../agents/presenters';
import type { Handler } from '../types';

/**
 * POST /v1/runs/{runId}/restart: a new run with the source's original inputs on the agent's latest
 * version (no body is read). Restarting starts the agent again, so the agent itself must still exist
 * and be visible to the caller, not only the source run.
 */
export const restartRun: Handler = async (ctx, { store, runs }) => {
  const principal = callerOf(ctx);
  const source = await visibleRun(store, principal, uuidParam(ctx, 'runId'));
  if (source.agentDeleted || !(await store.agents.getVisible(principal, source.agentId))) throw agentNotFound(source.agentId);
  ctx.resourceIds['agentId'] = source.agentId;
  const run = await runs.restart(principal, source);
  ctx.resourceIds['newRunId'] = run.id;
  return { status: 202, body: presentAccepted(run) };
};
