// Shared pieces of the run-engine tests: the agents, a fake-upstream gateway, polling.
import type { TestGateway } from '../helpers/gateway';
import type { Principal, RunInput, RunRecord } from '../../src/store/types';
import type { Store } from '../../src/store/port';
import { runUpstreamConfig, type RunUpstream } from '../fixtures/upstreams/run-upstream';

export const AGENT = '5a1e0000-0000-4000-8000-000000000001';
export const STRICT_AGENT = '5a1e0000-0000-4000-8000-000000000002';
export const QUICK_AGENT = '5a1e0000-0000-4000-8000-000000000003';

export const ADMIN: Principal = { orgId: 'acme', userId: 'u-admin', keyId: null, role: 'admin', groups: [] };

/** Config patch: the fake upstream as model `fake`, three agents, short leases. */
export function runConfig(upstream: RunUpstream, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const common = { organization: 'acme', createdBy: 'u-admin', model: 'fake', description: 'test agent' };
  return {
    ...runUpstreamConfig(upstream),
    queue: { driver: 'inline', concurrency: 8, leaseSeconds: 3 },
    agents: [
      {
        ...common,
        id: AGENT,
        name: 'Writer',
        instructions: 'Be brief.',
        inputs: [
          { label: 'Topic', required: true },
          { label: 'Tone', required: false },
        ],
        steps: [
          { name: 'Draft', prompt: 'Write about {{Topic}} in a {{Tone}} tone.', objective: 'The text is about the topic.' },
          { name: 'Summary', prompt: 'Summarise the draft.' },
        ],
        timeoutSeconds: 30,
      },
      {
        ...common,
        id: STRICT_AGENT,
        name: 'Strict',
        inputs: [
          { label: 'Invoice', required: true },
          { label: 'PO', required: true },
          { label: 'Notes', required: false },
        ],
        steps: [{ prompt: 'Compare {{Invoice}} with {{PO}}.' }],
        timeoutSeconds: 30,
      },
      {
        ...common,
        id: QUICK_AGENT,
        name: 'Quick',
        instructions: 'Answer fast.',
        steps: [{ name: 'Only', prompt: 'Slow step please.', objective: 'Answered.' }],
        timeoutSeconds: 1,
      },
    ],
    ...extra,
  };
}

export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export function waitForStatus(store: Store, runId: string, status: RunRecord['status'] | 'terminal', timeoutMs = 10_000): Promise<RunRecord> {
  return waitFor(
    `run ${runId} ${status}`,
    async () => {
      const run = await store.runs.get(runId);
      if (!run) return null;
      return (status === 'terminal' ? run.status !== 'in_progress' : run.status === status) ? run : null;
    },
    timeoutMs,
  );
}

export async function triggerRun(gw: TestGateway, agentId: string, inputs: RunInput[]): Promise<RunRecord> {
  const agent = await gw.store.agents.get(agentId);
  if (!agent) throw new Error(`agent ${agentId} not synced`);
  return gw.gateway.services.runs.trigger({ principal: ADMIN, agent, inputs, trigger: 'api' });
}

/** Conversation items as (role or type, text) pairs, in order. */
export async function transcript(store: Store, conversationId: string): Promise<string[]> {
  const items = await store.conversations.listItems(conversationId, { order: 'asc', limit: 1000 });
  return items.map((item) => {
    const content = item.data['content'];
    const text = Array.isArray(content) ? content.map((p: { text?: string }) => p.text ?? '').join('') : JSON.stringify(item.data);
    return `${item.role ?? item.type}: ${text}`;
  });
}
