import { callerOf, requireEditOnRunAgent, requireRunVersionWithinKey, uuidParam, visibleRun } from '../../agents/access';
import { presentRun } from '../../agents/presenters';
import type { Handler } from '../types';

/**
 * Extension: re-runs the failed step of a run in `failure` (same run id, back to in_progress,
 * endedAtUtc null, earlier steps kept). Edit permission on the agent, and a run version within the
 * key's model allow-list; another status is 409.
 */
export const retryRun: Handler = async (ctx, { store, runs }) => {
  const principal = callerOf(ctx);
  const run = await visibleRun(store, principal, uuidParam(ctx, 'runId'));
  await requireEditOnRunAgent(store, principal, run);
  await requireRunVersionWithinKey(store, principal, run);
  const retried = await runs.retryFailedStep(principal, run);
  return { status: 200, body: presentRun(retried, run.agentDeleted) };
};
