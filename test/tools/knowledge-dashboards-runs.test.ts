// svc_knowledge_store_search and svc_dashboard_generate in an agent run, on both deployments
// (embedded/inline, postgres/bullmq): the agent's model searches the organization's knowledge store
// and charts what it found; both calls are svc_call items of the run's conversation, and the
// dashboard is stored in the agent's organization.
import assert from 'node:assert/strict';
import { startWorkerRuntime, type Runtime } from '../../src/runtime';
import { startRunUpstream, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { BACKENDS, openBackend, type BackendEnv } from '../helpers/backends';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { runConfig, triggerRun, waitForStatus } from '../runs/helpers';

type Json = Record<string, unknown>;
type Message = { role: string; content?: unknown };
const toolMessages = (body: Json): Message[] => ((body['messages'] as Message[]) ?? []).filter((m) => m.role === 'tool');
const ANALYST = '5a1e0000-0000-4000-8000-0000000000d5';

for (const backend of BACKENDS) {
  describe(`knowledge search and dashboards in agent runs (${backend})`, function () {
    this.timeout(90_000);
    let upstream: RunUpstream;
    let gw: TestGateway;
    let deployment: BackendEnv | null = null;
    let worker: Runtime | null = null;

    before(async function () {
      this.timeout(120_000);
      upstream = await startRunUpstream();
      deployment = await openBackend(backend, 'kdash');
      const base = runConfig(upstream);
      const agents = [
        ...(base['agents'] as Json[]),
        {
          id: ANALYST,
          organization: 'acme',
          createdBy: 'u-admin',
          model: 'fake',
          description: 'charts what the knowledge store says',
          name: 'Analyst',
          instructions: 'Search, then chart.',
          tools: [{ type: 'svc_knowledge_store_search' }, { type: 'svc_dashboard_generate' }],
          steps: [{ name: 'Chart', prompt: 'Chart Q1 revenue by region.' }],
          timeoutSeconds: 60,
        },
      ];
      gw = await startTestGateway({
        config: { ...base, ...deployment.config, agents, server: { publicUrl: 'http://gateway.test' } },
        ...(deployment.pg ? { store: deployment.pg.store } : {}),
      });
      if (backend === 'postgres/bullmq') worker = await startWorkerRuntime(gw.gateway.services);
      const at = new Date().toISOString();
      await gw.store.knowledge.createStore({ id: 'ks_run_notes', orgId: 'acme', name: 'notes', description: null, createdBy: null, createdAt: at });
      await gw.store.knowledge.addDocument({
        id: 'kdoc_q1',
        orgId: 'acme',
        storeId: 'ks_run_notes',
        title: 'Q1 regional revenue',
        source: 'finance/q1.md',
        metadata: {},
        text: 'Revenue in Q1: north 120, south 80.',
        createdAt: at,
      });
    });
    after(async () => {
      await worker?.close();
      await gw?.close();
      await upstream?.close();
      await deployment?.cleanup();
    });

    it('the run searches the store, makes the dashboard, and records both calls', async () => {
      upstream.script((body) => {
        const tools = toolMessages(body);
        if (tools.length === 0) return { toolCalls: [{ id: 's1', name: 'svc_knowledge_store_search', arguments: JSON.stringify({ query: 'Q1 revenue' }) }] };
        if (tools.length === 1) {
          const spec = { mark: 'bar', encoding: { x: { field: 'region', type: 'nominal' }, y: { field: 'revenue', type: 'quantitative' } } };
          return {
            toolCalls: [
              { id: 'd1', name: 'svc_dashboard_generate', arguments: JSON.stringify({ title: 'Q1', csv: 'region,revenue\nnorth,120\nsouth,80', spec }) },
            ],
          };
        }
        return { reply: `Done: ${String(tools[1]!.content)}` };
      });
      const run = await triggerRun(gw, ANALYST, []);
      const done = await waitForStatus(gw.store, run.id, 'terminal', 45_000);
      assert.equal(done.status, 'success', JSON.stringify(done));
      const calls = (await gw.store.conversations.listItems(run.conversationId, { order: 'asc', limit: 100 })).filter((i) => i.type === 'svc_call');
      assert.deepEqual(
        calls.map((c) => [c.data['name'], c.status]),
        [
          ['svc_knowledge_store_search', 'completed'],
          ['svc_dashboard_generate', 'completed'],
        ],
      );
      const found = JSON.parse(String(calls[0]!.data['output'])) as { results: { document_id: string; source: string }[] };
      assert.deepEqual(
        found.results.map((r) => [r.document_id, r.source]),
        [['kdoc_q1', 'finance/q1.md']],
      );
      const made = JSON.parse(String(calls[1]!.data['output'])) as { dashboard_id: string; rows: number; url: string };
      assert.equal(made.rows, 2);
      assert.ok(made.url.startsWith('http://gateway.test/v1/dashboards/'));
      const stored = await gw.store.dashboards.get(made.dashboard_id);
      assert.equal(stored?.orgId, 'acme');
      assert.equal(stored?.conversationId, run.conversationId);
    });
  });
}
