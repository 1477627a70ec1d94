import { callerOf, uuidParam, visibleRun } from '../../agents/access';
import { presentRun } from '../../agents/presenters';
import type { Handler } from '../types';

export const getRun: Handler = async (ctx, { store }) => {
  const run = await visibleRun(store, callerOf(ctx), uuidParam(ctx, 'runId'));
  return { status: 200, body: presentRun(run, run.agentDeleted) };
};
