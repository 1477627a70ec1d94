// An agent as configured, turned into what the store keeps. The definition hash decides whether a
// restart with an edited config makes a new version: same definition, same hash, same version.
import { createHash } from 'node:crypto';
import type { AgentConfig } from '../config/types';
import type { AgentDefinition, AgentUpsert } from '../store/types';

/** JSON with object keys sorted at every level and undefined members dropped: equal values, equal text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export function agentDefinition(agent: AgentConfig): AgentDefinition {
  return {
    name: agent.name,
    description: agent.description,
    model: agent.model,
    instructions: agent.instructions,
    inputs: agent.inputs.map((i) => ({ label: i.label, required: i.required })),
    tools: agent.tools,
    steps: agent.steps.map((s) => ({
      prompt: s.prompt,
      ...(s.name !== undefined ? { name: s.name } : {}),
      ...(s.objective !== undefined ? { objective: s.objective } : {}),
    })),
    timeoutSeconds: agent.timeoutSeconds,
    triggers: agent.triggers,
    sharedWith: agent.sharedWith.map((s) => ({
      permissions: s.permissions,
      ...(s.user !== undefined ? { user: s.user } : {}),
      ...(s.group !== undefined ? { group: s.group } : {}),
    })),
  };
}

/**
 * SHA-256 over the canonical definition plus who owns it (organization, creator): any change an
 * operator makes to the agent's block in the config gives a different hash, key order and YAML
 * formatting give the same one.
 */
export function definitionHash(orgId: string, createdBy: string, definition: AgentDefinition): string {
  return createHash('sha256').update(canonicalJson({ orgId, createdBy, definition })).digest('hex');
}

export function agentUpsert(agent: AgentConfig, creatorName: string): AgentUpsert {
  const definition = agentDefinition(agent);
  return {
    ...definition,
    id: agent.id,
    orgId: agent.organization,
    createdBy: agent.createdBy,
    creatorName,
    definitionHash: definitionHash(agent.organization, agent.createdBy, definition),
  };
}
