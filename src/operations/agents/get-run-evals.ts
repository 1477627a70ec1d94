import { callerOf, uuidParam, visibleRun } from '../../agents/access';
import { evaluateRun } from '../../agents/evaluation';
import type { Handler } from '../types';

/** Readable at any time (pending while the run is in progress); re-fetching is always safe. */
export const getRunEvals: Handler = async (ctx, { store }) => {
  const run = await visibleRun(store, callerOf(ctx), uuidParam(ctx, 'runId'));
  // The version the run executed says which steps exist and which have an objective.
  const [version, rows] = await Promise.all([store.agents.getVersion(run.agentId, run.agentVersion), store.steps.list(run.id)]);
  return { status: 200, body: evaluateRun(run, version?.definition.steps ?? [], rows) };
};
