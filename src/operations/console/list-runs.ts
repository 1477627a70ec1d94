import { callerOf } from '../../agents/access';
import { presentRun } from '../../agents/presenters';
import type { RunStatus } from '../../store/types';
import type { Handler } from '../types';
import { keysetAfter, keysetPage, queryLimit, queryTime } from './keyset-cursor';

const DEFAULT_LIMIT = 20;

/**
 * GET /v1/runs: the runs the caller may read (visibility in the store query), newest first, filtered,
 * keyset-paginated. Each item is the Run of GET /v1/runs/{runId} with its agent's name and who
 * triggered it (null for schedule and webhook triggers, which run as the agent's creator).
 */
export const listRuns: Handler = async (ctx, { store }) => {
  const principal = callerOf(ctx);
  const q = ctx.query;
  const limit = queryLimit(q, DEFAULT_LIMIT);
  // One more than asked tells whether another page exists without a second query.
  const runs = await store.runs.listVisible(principal, {
    agentId: typeof q['agentId'] === 'string' ? q['agentId'] : null,
    status: typeof q['status'] === 'string' ? (q['status'] as RunStatus) : null,
    createdAfter: queryTime(q, 'createdAfter'),
    createdBefore: queryTime(q, 'createdBefore'),
    limit: limit + 1,
    after: keysetAfter(q),
  });
  const { page, nextCursor } = keysetPage(runs, limit);
  const items = page.map((run) => ({
    ...presentRun(run, run.agentDeleted),
    agentName: run.agentName,
    triggeredBy: run.trigger === 'schedule' || run.trigger === 'webhook' ? null : run.userId,
  }));
  return { status: 200, body: { items, nextCursor } };
};
