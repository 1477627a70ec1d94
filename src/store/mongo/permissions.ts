// The principal's permissions on an agent as an aggregation expression, so visibility is decided by the
// server in the query (as the SQL backends do), never by filtering afterwards. Values from the principal
// are wrapped in $literal: a user or group id starting with "$" must not be read as a field path.
import type { Document } from 'mongodb';
import { agentModelScope } from '../agent-models';
import type { Principal } from '../types';
import { ALL_PERMISSIONS } from './collections';

/**
 * Permissions (canonical order) of `principal` on the agent that `agent` (an expression, e.g. "$$ROOT"
 * or { $arrayElemAt: ["$agent", 0] }) resolves to. Callers also require the agent's orgId to equal the
 * principal's: other organizations never see it.
 */
export function agentPermissionsExpr(principal: Principal, agent: unknown): Document {
  if (principal.role === 'admin') return { $literal: [...ALL_PERMISSIONS] };
  const user = { $literal: principal.userId };
  const groups = { $literal: principal.groups };
  const granted = {
    $reduce: {
      input: {
        $filter: {
          input: { $ifNull: ['$$agent.sharedWith', []] },
          as: 'share',
          cond: { $or: [{ $eq: ['$$share.user', user] }, { $in: [{ $ifNull: ['$$share.group', null] }, groups] }] },
        },
      },
      initialValue: [],
      in: { $setUnion: ['$$value', { $ifNull: ['$$this.permissions', []] }] },
    },
  };
  return {
    $let: {
      vars: { agent },
      in: {
        $cond: [
          { $eq: ['$$agent.createdBy', user] },
          { $literal: [...ALL_PERMISSIONS] },
          { $let: { vars: { granted }, in: { $filter: { input: { $literal: [...ALL_PERMISSIONS] }, as: 'p', cond: { $in: ['$$p', '$$granted'] } } } } },
        ],
      },
    },
  };
}

/**
 * True when `agent` (an expression, as above) belongs to the principal's organization and grants the
 * principal any permission: what makes another user's run or conversation visible through its agent.
 */
export function agentGrantsAnyExpr(principal: Principal, agent: unknown): Document {
  return {
    $and: [
      { $eq: [{ $let: { vars: { doc: agent }, in: '$$doc.orgId' } }, { $literal: principal.orgId }] },
      { $gt: [{ $size: agentPermissionsExpr(principal, agent) }, 0] },
    ],
  };
}

/**
 * The $match stage that keeps a run or conversation (with a `userId` field) the principal may read:
 * any as an org admin, its own, or one for which `throughAgent` holds.
 */
export function visibleRecordMatch(principal: Principal, throughAgent: Document): Document {
  return {
    $match: {
      $expr: {
        $or: [{ $literal: principal.role === 'admin' }, { $eq: ['$userId', { $literal: principal.userId }] }, throughAgent],
      },
    },
  };
}

/**
 * True when `agent` (an expression, as above) routes only through models the principal's key may use
 * (agent-models.ts); null when the key has no allow-list. False for a missing agent: what cannot be
 * shown allowed is not.
 */
export function agentModelsExpr(principal: Principal, agent: unknown): Document | null {
  const scope = agentModelScope(principal);
  if (!scope) return null;
  const own = { $in: [{ $ifNull: ['$$agent.definition.model', null] }, { $literal: [...scope.models] }] };
  const judged = {
    $gt: [
      {
        $size: {
          $filter: {
            input: { $ifNull: ['$$agent.definition.steps', []] },
            as: 'step',
            cond: { $gt: [{ $strLenCP: { $ifNull: ['$$step.objective', ''] } }, 0] },
          },
        },
      },
      0,
    ],
  };
  return { $let: { vars: { agent }, in: scope.judgedAllowed ? own : { $and: [own, { $not: [judged] }] } } };
}

/**
 * The $match stage keeping a record (run, or with `unlessNoRun` a conversation: one without a run
 * always passes) whose agent passes agentModelsExpr; none when the key has no allow-list.
 */
export function agentModelsMatch(principal: Principal, agent: unknown, options: { unlessNoRun?: boolean } = {}): Document[] {
  const models = agentModelsExpr(principal, agent);
  if (!models) return [];
  const expr = options.unlessNoRun ? { $or: [{ $eq: [{ $ifNull: ['$runId', null] }, null] }, models] } : models;
  return [{ $match: { $expr: expr } }];
}
