// GET /v1/usage (token usage and cost, grouped and time-bucketed, computed by the store) and
// GET /v1/usage/budgets (the caller's budgets and their use, from the budgets plugin).
import { GatewayError } from '../../http/errors';
import { budgetGuardOf } from '../../model-call/budget-guard';
import type { UsageGroup } from '../../store/types';
import type { Handler } from '../types';

const DAY_MS = 86_400_000;
/** The default window: the last 30 days. */
const DEFAULT_DAYS = 30;
/** The longest window one query may span. */
const MAX_DAYS = 400;
/** Groups one answer may hold. */
export const MAX_USAGE_GROUPS = 10_000;

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** GET /v1/usage: admins read the organization's usage, members only their own (another user's: 403). */
export const getUsage: Handler = async (ctx, { store, clock }) => {
  const principal = ctx.principal;
  if (!principal) throw new GatewayError('unauthorized', 'An API key is required.');
  const untilText = str(ctx.query['until']);
  const sinceText = str(ctx.query['since']);
  const until = untilText ? new Date(untilText) : clock.now();
  const since = sinceText ? new Date(sinceText) : new Date(until.getTime() - DEFAULT_DAYS * DAY_MS);
  if (since.getTime() >= until.getTime()) throw new GatewayError('bad_request', '`since` must be before `until`.', { param: 'since' });
  if (until.getTime() - since.getTime() > MAX_DAYS * DAY_MS) {
    throw new GatewayError('bad_request', `The time range may span at most ${MAX_DAYS} days.`, { param: 'since' });
  }
  const groupBy = [...new Set((str(ctx.query['groupBy']) ?? 'day').split(','))] as UsageGroup[];
  let userId = str(ctx.query['userId']);
  if (principal.role !== 'admin') {
    if (userId !== undefined && userId !== principal.userId) {
      throw new GatewayError('forbidden', "Only organization admins may read another user's usage.", { param: 'userId' });
    }
    userId = principal.userId;
  }
  const keyId = str(ctx.query['keyId']);
  const model = str(ctx.query['model']);
  const rows = await store.usage.query({
    orgId: principal.orgId,
    since: since.toISOString(),
    until: until.toISOString(),
    groupBy,
    ...(userId !== undefined ? { userId } : {}),
    ...(keyId !== undefined ? { keyId } : {}),
    ...(model !== undefined ? { model } : {}),
    limit: MAX_USAGE_GROUPS + 1,
  });
  if (rows.length > MAX_USAGE_GROUPS) {
    throw new GatewayError('bad_request', `More than ${MAX_USAGE_GROUPS} groups: narrow the time range or the grouping.`, { param: 'groupBy' });
  }
  return { status: 200, body: { items: rows, since: since.toISOString(), until: until.toISOString(), currency: 'USD' } };
};

/** GET /v1/usage/budgets: the budgets of the caller's organization, of the caller and of the key in use. */
export const getUsageBudgets: Handler = async (ctx, { pipeline }) => {
  const principal = ctx.principal;
  if (!principal) throw new GatewayError('unauthorized', 'An API key is required.');
  const guard = budgetGuardOf(pipeline);
  return { status: 200, body: { items: guard ? await guard.states(principal) : [] } };
};

export const usageHandlers: Readonly<Record<string, Handler>> = { getUsage, getUsageBudgets };
