// Records -> the wire shapes of the spec (Agent list item, Agent detail, Run) and of OpenAI's
// conversation items. Field names and nullability follow the spec's resource tables exactly.
import type { Permission } from '../config/types';
import { isJudged } from '../store/agent-models';
import type { AgentRecord, ConversationItemRecord, RunRecord, VisibleAgent } from '../store/types';

const PERMISSION_ORDER: readonly Permission[] = ['view', 'edit', 'delete', 'share'];

export interface AgentMetadata {
  userPermissions: Permission[];
}

function metadata(agent: VisibleAgent): AgentMetadata {
  return { userPermissions: PERMISSION_ORDER.filter((p) => agent.permissions.includes(p)) };
}

export function presentAgentListItem(agent: VisibleAgent) {
  return {
    agentId: agent.id,
    name: agent.name,
    description: agent.description,
    createdAt: agent.createdAt,
    creatorName: agent.creatorName,
    metadata: metadata(agent),
  };
}

/**
 * Model ids the agent routes through: its own model, plus the judge model when one of its steps has an
 * objective (evaluation.model, which defaults to the agent's model).
 */
export function modelsInUse(agent: AgentRecord, evaluationModel: string | undefined): string[] {
  const models = [agent.model];
  const judged = agent.steps.some(isJudged);
  if (judged && evaluationModel !== undefined && evaluationModel !== agent.model) models.push(evaluationModel);
  return models;
}

export interface AgentRunsView {
  recentRunIds: string[];
  lastRunAtUtc: string | null;
  /** undefined on the legacy path: the field is then absent, not null. */
  nextCursor?: string | null;
}

export function presentAgentDetail(agent: VisibleAgent, runs: AgentRunsView, evaluationModel: string | undefined) {
  return {
    agentId: agent.id,
    name: agent.name,
    description: agent.description,
    // Spec: ascending alphabetical order, not configuration order.
    inputs: agent.inputs.map((i) => i.label).sort((a, b) => a.localeCompare(b, 'en')),
    hasTriggers: agent.triggers.length > 0,
    modelsInUse: modelsInUse(agent, evaluationModel),
    recentRunIds: runs.recentRunIds,
    lastRunAtUtc: runs.lastRunAtUtc,
    ...(runs.nextCursor !== undefined ? { nextCursor: runs.nextCursor } : {}),
    metadata: metadata(agent),
  };
}

export function presentRun(run: RunRecord, agentDeleted: boolean) {
  return {
    runId: run.id,
    agentId: agentDeleted ? null : run.agentId,
    conversationId: run.conversationId,
    createdAtUtc: run.createdAt,
    endedAtUtc: run.status === 'in_progress' ? null : run.endedAt,
    result: run.status === 'success' ? run.result : null,
    status: run.status,
    // Extension: why a run failed or was cancelled (openapi.yaml, Run.error).
    error: run.status !== 'in_progress' && run.status !== 'success' && run.error !== null ? { code: run.errorCode ?? 'run_error', message: run.error } : null,
  };
}

/** 202 body of a run trigger (POST /v1/agents/runs, restart, webhook). */
export function presentAccepted(run: RunRecord) {
  return { runId: run.id, conversationId: run.conversationId };
}

/**
 * An item of OpenAI's conversation-items list: the stored body (content parts, call fields) with the
 * item's own id, type, role (messages) and status, which the record holds authoritatively.
 */
export function presentConversationItem(item: ConversationItemRecord): Record<string, unknown> {
  const { id: _id, type: _type, role: _role, status: _status, ...body } = item.data;
  return {
    id: item.id,
    type: item.type,
    ...(item.role !== null ? { role: item.role } : {}),
    ...body,
    status: item.status,
  };
}
