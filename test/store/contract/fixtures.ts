// Builders for store records used by the contract suite. Ids carry a random suffix so tests sharing a
// store never collide.
import { randomUUID } from 'node:crypto';
import type { Role } from '../../../src/config/types';
import type { Store } from '../../../src/store/port';
import type { AgentUpsert, AuditRecord, Principal, RunRecord } from '../../../src/store/types';

/** The backend under test; the suite's before() hooks set it. */
export interface StoreHandle {
  readonly store: Store;
}

export function uid(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

export function principal(orgId: string, userId: string, role: Role = 'member', groups: string[] = []): Principal {
  return { orgId, userId, keyId: null, role, groups };
}

export function agentUpsert(overrides: Partial<AgentUpsert> & { id: string; orgId: string }): AgentUpsert {
  return {
    createdBy: 'u-creator',
    creatorName: 'Creator',
    definitionHash: 'hash-1',
    name: 'Agent',
    description: 'does things',
    model: 'demo',
    instructions: 'be brief',
    inputs: [{ label: 'topic', required: true }],
    tools: [],
    steps: [],
    timeoutSeconds: 60,
    triggers: [],
    sharedWith: [],
    ...overrides,
  };
}

/** Milliseconds since epoch → ISO string, for readable fixed timestamps. */
export function at(ms: number): string {
  return new Date(ms).toISOString();
}

export const T0 = Date.parse('2025-03-01T10:00:00.000Z');

/** The audit record of a chat completion call at `atMs`; `overrides` set the rest. */
export function auditRecord(orgId: string, atMs: number, overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    id: uid('aud'),
    at: at(atMs),
    orgId,
    userId: 'u1',
    keyId: 'k1',
    method: 'POST',
    route: '/v1/chat/completions',
    operationId: 'createChatCompletion',
    resourceIds: {},
    status: 200,
    latencyMs: 2,
    requestId: uid('req'),
    ...overrides,
  };
}

export function runRecord(overrides: Partial<RunRecord> & { agentId: string; orgId: string }): RunRecord {
  const createdAt = overrides.createdAt ?? at(T0);
  return {
    id: uid('run'),
    agentVersion: 1,
    userId: 'u-runner',
    conversationId: uid('conv'),
    inputs: [{ name: 'topic', value: 'x' }],
    status: 'in_progress',
    result: null,
    error: null,
    trigger: 'api',
    sourceRunId: null,
    stepsCompleted: 0,
    createdAt,
    updatedAt: createdAt,
    endedAt: null,
    deadlineAt: at(Date.parse(createdAt) + 600_000),
    leaseOwner: null,
    leaseExpiresAt: null,
    attempts: 0,
    leaseGeneration: 0,
    revision: 0,
    keyId: null,
    errorCode: null,
    ...overrides,
  };
}
