import { callerOf, requireEditOnRunAgent, uuidParam, visibleRun } from '../../agents/access';
import { presentRun } from '../../agents/presenters';
import type { Handler } from '../types';

/** Extension: in_progress -> cancelled. Edit permission on the agent; another status is 409. */
export const cancelRun: Handler = async (ctx, { store, runs }) => {
  const principal = callerOf(ctx);
  const run = await visibleRun(store, principal, uuidParam(ctx, 'runId'));
  await requireEditOnRunAgent(store, principal, run);
  const cancelled = await runs.cancel(principal, run, `Cancelled through the API by ${principal.userId}.`);
  return { status: 200, body: presentRun(cancelled, run.agentDeleted) };
};
