// A key's model allow-list (Principal.models) bounds the agents it reaches too, and so their runs and
// run conversations: otherwise a key limited to model A could start an agent on model B. An agent is
// visible to a restricted key only when every model it routes through is on the list: its own model
// and, when a step has an objective, the judge's (evaluation.model, else the agent's own), the same
// models GET /v1/agents/{agentId} shows as modelsInUse. The backends turn this into a condition of
// their visibility queries (rows.ts, mongo/permissions.ts), never a filter applied to pages afterwards.
import type { AgentDefinition, Principal } from './types';

export interface AgentModelScope {
  /** The key's allow-list: an agent's own model must be on it. */
  models: readonly string[];
  /** Whether agents with a judged step pass too: the judge model is on the list (or is the agent's own). */
  judgedAllowed: boolean;
}

/** The principal's restriction on agents, or null when its key has no allow-list (console sessions, triggers, auth off). */
export function agentModelScope(principal: Principal): AgentModelScope | null {
  const models = principal.models;
  if (!models) return null;
  const judge = principal.evaluationModel;
  return { models, judgedAllowed: judge === undefined || judge === null || models.includes(judge) };
}

/** A step the judge evaluates (presenters.ts modelsInUse counts the judge model for the same steps). */
export const isJudged = (step: { objective?: string | undefined }): boolean => step.objective !== undefined && step.objective !== '';

/** The rule on a definition in memory (a run's own agent version, which a retry executes again). */
export function definitionAllowed(principal: Principal, definition: Pick<AgentDefinition, 'model' | 'steps'>): boolean {
  const scope = agentModelScope(principal);
  if (!scope) return true;
  return scope.models.includes(definition.model) && (scope.judgedAllowed || !definition.steps.some(isJudged));
}
