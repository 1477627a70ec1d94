import { callerOf } from '../../agents/access';
import type { Handler } from '../types';
import { keysetAfter, keysetPage, queryLimit } from './keyset-cursor';

const DEFAULT_LIMIT = 20;

/** GET /v1/responses: stored, unexpired responses of the caller (an org admin: the organization's), newest first. */
export const listResponses: Handler = async (ctx, { store, clock }) => {
  const principal = callerOf(ctx);
  const limit = queryLimit(ctx.query, DEFAULT_LIMIT);
  const responses = await store.responses.listVisible(principal, { now: clock.now().toISOString(), limit: limit + 1, after: keysetAfter(ctx.query) });
  const { page, nextCursor } = keysetPage(responses, limit);
  const items = page.map((r) => ({
    id: r.id,
    createdAt: r.createdAt,
    model: r.model,
    status: r.status,
    conversationId: r.conversationId,
    previousResponseId: r.previousResponseId,
    userId: r.userId,
  }));
  return { status: 200, body: { items, nextCursor } };
};
