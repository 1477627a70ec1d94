import { callerOf, uuidParam, visibleAgent } from '../../agents/access';
import { decodeCursor, encodeCursor, type CursorPosition } from '../../agents/cursor';
import { presentAgentDetail } from '../../agents/presenters';
import { LEGACY_RUN_IDS, parseRunPageRequest } from '../../agents/run-page-query';
import { installationSecret } from '../../agents/secrets';
import { GatewayError } from '../../http/errors';
import type { Handler } from '../types';

/**
 * GET /v1/agents/{agentId}. Legacy path (no paging parameter): at most 5 recentRunIds, no nextCursor
 * field. Paginated path: keyset pages, newest first, so runs created while a client pages land before
 * its cursor and every older run is returned exactly once; nextCursor always present, null at the end.
 * lastRunAtUtc ignores the filters.
 */
export const getAgent: Handler = async (ctx, { store, config }) => {
  const agentId = uuidParam(ctx, 'agentId');
  // Query errors are 400 whatever the agent: parsed before the lookup.
  const page = parseRunPageRequest(ctx.req.url);
  const agent = await visibleAgent(store, callerOf(ctx), agentId);

  if (!page.paginated) {
    const [result, lastRunAtUtc] = await Promise.all([
      store.runs.page({ agentId: agent.id, limit: LEGACY_RUN_IDS, after: null, startDate: null, endDate: null }),
      store.runs.latestCreatedAt(agent.id),
    ]);
    return { status: 200, body: presentAgentDetail(agent, { recentRunIds: result.ids, lastRunAtUtc }, config.evaluation.model) };
  }

  const secret = await installationSecret(store, 'cursor-secret');
  let after: CursorPosition | null = null;
  if (page.cursor !== null) {
    after = decodeCursor(secret, agent.id, page.cursor);
    if (after === null)
      throw new GatewayError('bad_request', "Invalid request: 'cursor' is not a cursor issued by this service for this agent.", { param: 'cursor' });
  }
  const [result, lastRunAtUtc] = await Promise.all([
    store.runs.page({ agentId: agent.id, limit: page.limit, after, startDate: page.startDate, endDate: page.endDate }),
    store.runs.latestCreatedAt(agent.id),
  ]);
  const nextCursor = result.next === null ? null : encodeCursor(secret, agent.id, result.next);
  return { status: 200, body: presentAgentDetail(agent, { recentRunIds: result.ids, lastRunAtUtc, nextCursor }, config.evaluation.model) };
};
