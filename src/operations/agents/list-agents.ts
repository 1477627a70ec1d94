import { callerOf } from '../../agents/access';
import { presentAgentListItem } from '../../agents/presenters';
import type { Handler } from '../types';

/** Spec limit: a single page of at most 500 agents; `total` is the length of `items`. */
export const MAX_LISTED_AGENTS = 500;

export const listAgents: Handler = async (ctx, { store }) => {
  const agents = await store.agents.listVisible(callerOf(ctx), MAX_LISTED_AGENTS);
  const items = agents.slice(0, MAX_LISTED_AGENTS).map(presentAgentListItem);
  return { status: 200, body: { items, total: items.length } };
};
