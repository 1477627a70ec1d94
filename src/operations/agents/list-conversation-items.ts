import { callerOf } from '../../agents/access';
import { presentConversationItem } from '../../agents/presenters';
import { GatewayError } from '../../http/errors';
import type { Handler } from '../types';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

function queryString(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw new GatewayError('bad_request', `Invalid request: '${name}' may be given once.`, { param: name });
  return String(value);
}

/**
 * GET /v1/conversations/{conversation_id}/items: OpenAI's conversation-items list
 * `{object: "list", data, first_id, last_id, has_more}`; `limit` 1..100 (default 20), `order` asc|desc
 * (default desc), `after` an item id (exclusive). A run's conversationId works here; any conversation
 * the caller may not read is 404 (nested envelope, no code), like one that does not exist.
 */
export const listConversationItems: Handler = async (ctx, { store }) => {
  const conversationId = ctx.params['conversation_id'] ?? '';
  const rawLimit = queryString(ctx.query['limit'], 'limit');
  const order = queryString(ctx.query['order'], 'order') ?? 'desc';
  const after = queryString(ctx.query['after'], 'after');
  if (rawLimit !== undefined && (!/^\d{1,3}$/.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > MAX_LIMIT)) {
    throw new GatewayError('bad_request', `Invalid request: 'limit' must be an integer from 1 to ${MAX_LIMIT}.`, { param: 'limit' });
  }
  if (order !== 'asc' && order !== 'desc')
    throw new GatewayError('bad_request', 'Invalid request: \'order\' must be one of "asc", "desc".', { param: 'order' });
  const limit = rawLimit === undefined ? DEFAULT_LIMIT : Number(rawLimit);

  const conversation = conversationId.length <= 200 ? await store.conversations.getVisible(callerOf(ctx), conversationId) : null;
  if (!conversation) throw new GatewayError('not_found', `Conversation ${conversationId} not found.`);

  let afterPosition: number | undefined;
  if (after !== undefined) {
    const item = await store.conversations.getItem(conversation.id, after);
    if (!item) throw new GatewayError('bad_request', `Invalid request: 'after' names no item of conversation ${conversation.id}.`, { param: 'after' });
    afterPosition = item.position;
  }
  // One extra row tells whether another page follows.
  const rows = await store.conversations.listItems(conversation.id, {
    order,
    limit: limit + 1,
    ...(afterPosition !== undefined ? { afterPosition } : {}),
  });
  const data = rows.slice(0, limit).map(presentConversationItem);
  return {
    status: 200,
    body: {
      object: 'list',
      data,
      first_id: (data[0]?.['id'] as string | undefined) ?? null,
      last_id: (data[data.length - 1]?.['id'] as string | undefined) ?? null,
      has_more: rows.length > limit,
    },
  };
};
