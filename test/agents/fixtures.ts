// Agents of the agent/run API tests and small helpers (direct run inserts for paging and date tests,
// polling a run over HTTP). Users: u-admin (org admin), u-member, u-viewer (group finance) in acme;
// u-outsider, admin of organization other.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { Store } from '../../src/store/port';
import type { RunRecord, RunStatus } from '../../src/store/types';
import type { ConfigDocument, TestGateway } from '../helpers/gateway';
import { runRecord } from '../store/contract/fixtures';

export const AGENTS = {
  /** Created by u-member, shared with group finance (view): u-viewer sees it. */
  group: '11111111-1111-4111-8111-111111111111',
  /** Created by u-member, shared with u-viewer (view, edit). */
  user: '22222222-2222-4222-8222-222222222222',
  /** Created by u-member, shared with nobody. */
  private: '33333333-3333-4333-8333-333333333333',
  /** Created by u-admin: inputs, a webhook trigger, two steps (one judged). */
  main: '44444444-4444-4444-8444-444444444444',
} as const;

const steps = [
  { name: 'Outline', prompt: 'Write a three-point outline about {{Topic}}.', objective: 'The outline has three points about the topic.' },
  { prompt: 'Summarise the outline in one sentence.' },
];

/** Plugins of the agent tests: authentication on (keys decide who sees what), nothing else. */
export const AUTH_ON: ConfigDocument = { auth: { enabled: true } };

export function agentsConfig(): ConfigDocument {
  const common = { organization: 'acme', model: 'demo', instructions: 'You are concise.', steps, timeoutSeconds: 60 };
  return {
    plugins: AUTH_ON,
    agents: [
      { ...common, id: AGENTS.group, name: 'Group agent', description: 'g', createdBy: 'u-member', sharedWith: [{ group: 'finance', permissions: ['view'] }] },
      {
        ...common,
        id: AGENTS.user,
        name: 'User agent',
        description: 'u',
        createdBy: 'u-member',
        sharedWith: [{ user: 'u-viewer', permissions: ['view', 'edit'] }],
      },
      { ...common, id: AGENTS.private, name: 'Private agent', description: 'p', createdBy: 'u-member' },
      {
        ...common,
        id: AGENTS.main,
        name: 'Main agent',
        description: 'The one with inputs and triggers.',
        createdBy: 'u-admin',
        sharedWith: [{ user: 'u-member', permissions: ['view'] }],
        inputs: [
          { label: 'Topic', required: true },
          { label: 'notes', required: false },
          { label: 'Audience', required: false },
        ],
        triggers: [{ type: 'webhook' }],
      },
    ],
  };
}

/** Inserts a finished run straight into the store (paging and date tests need exact creation times). */
export async function insertRun(store: Store, agentId: string, createdAt: string, status: RunStatus = 'success', userId = 'u-admin'): Promise<RunRecord> {
  const run = runRecord({
    id: randomUUID(),
    orgId: 'acme',
    agentId,
    userId,
    conversationId: `conv_${randomUUID().replace(/-/g, '')}`,
    inputs: [],
    status,
    createdAt,
    endedAt: status === 'in_progress' ? null : createdAt,
    deadlineAt: '2999-01-01T00:00:00.000Z',
  });
  await store.runs.create(run);
  return run;
}

export interface RunView {
  runId: string;
  agentId: string | null;
  conversationId: string | null;
  createdAtUtc: string;
  endedAtUtc: string | null;
  result: string | null;
  status: RunStatus;
}

/** Polls GET /v1/runs/{runId} until the run leaves in_progress (at most ~15 s). */
export async function waitForRun(gw: TestGateway, runId: string, who: 'admin' | 'member' | 'viewer' = 'admin'): Promise<RunView> {
  for (let i = 0; i < 300; i++) {
    const res = await request(gw.url).get(`/v1/runs/${runId}`).set(gw.auth(who));
    if (res.status !== 200) throw new Error(`GET run ${runId}: ${res.status} ${JSON.stringify(res.body)}`);
    const run = res.body as RunView;
    if (run.status !== 'in_progress') return run;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${runId} still in progress`);
}
