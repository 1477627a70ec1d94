// Agent runs are metered like gateway calls: each step's model call and each judge call leaves a usage
// record attributed to the run's organization, user, key and model, and counts in the token metrics.
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestGateway, TEST_KEYS, type TestGateway } from '../helpers/gateway';
import { openTestStore, type TestStore } from '../helpers/store';
import { runUpstreamConfig, startRunUpstream, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { AGENT, runConfig, waitForStatus } from './helpers';

interface UsageRow {
  org_id: string;
  user_id: string | null;
  key_id: string | null;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  request_id: string;
}

describe('run metering (PostgreSQL)', function () {
  this.timeout(60_000);
  let upstream: RunUpstream;
  let testStore: TestStore;
  let gw: TestGateway;

  before(async () => {
    upstream = await startRunUpstream();
    testStore = await openTestStore('postgres');
    const base = runUpstreamConfig(upstream);
    gw = await startTestGateway({
      store: testStore.store,
      config: runConfig(upstream, {
        plugins: { auth: { enabled: true } },
        // The judge on a model of its own, so its usage is told apart from the steps'.
        models: [...(base['models'] as Record<string, unknown>[]), { id: 'judge', provider: 'fake' }],
        evaluation: { model: 'judge' },
      }),
    });
  });
  after(async () => {
    await gw?.close();
    await testStore?.cleanup();
    await upstream?.close();
  });

  it("a run with a judged step leaves usage records of its steps' and its judge's tokens for the run's org, user, key and model", async () => {
    upstream.rule({ match: 'Write about meters', judge: false, usage: { prompt: 101, completion: 11 } });
    upstream.rule({ match: 'Summarise the draft.', judge: false, usage: { prompt: 202, completion: 22 } });
    upstream.rule({ match: 'Objective', judge: true, usage: { prompt: 303, completion: 33 } });
    const res = await fetch(`${gw.url}/v1/agents/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEYS.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agentId: AGENT, inputs: [{ name: 'Topic', value: 'meters' }] }),
    });
    assert.equal(res.status, 202, await res.clone().text());
    const { runId } = (await res.json()) as { runId: string };
    assert.equal((await waitForStatus(testStore.store, runId, 'terminal', 30_000)).status, 'success');
    assert.equal(upstream.judgeCalls().length, 1);

    const keys = await testStore.store.keys.listByOrg('acme');
    const adminKey = keys.find((k) => k.userId === 'u-admin');
    assert.ok(adminKey);
    const client = new pg.Client({ connectionString: testStore.config.url });
    await client.connect();
    let rows: UsageRow[];
    try {
      rows = (await client.query<UsageRow>('SELECT * FROM usage_records WHERE request_id = $1 ORDER BY prompt_tokens', [runId])).rows;
    } finally {
      await client.end();
    }
    assert.deepEqual(
      rows.map((r) => [r.org_id, r.user_id, r.key_id, r.model, r.prompt_tokens, r.completion_tokens]),
      [
        ['acme', 'u-admin', adminKey.id, 'fake', 101, 11],
        ['acme', 'u-admin', adminKey.id, 'fake', 202, 22],
        ['acme', 'u-admin', adminKey.id, 'judge', 303, 33],
      ],
    );
    const totals = await testStore.store.usage.totals('acme', null);
    assert.deepEqual(
      totals.filter((t) => t.model === 'judge').map((t) => [t.requests, t.promptTokens, t.completionTokens]),
      [[1, 303, 33]],
    );
    const metrics = await gw.gateway.services.metrics.registry.getSingleMetricAsString('agw_upstream_tokens_total');
    assert.match(metrics, /agw_upstream_tokens_total\{org="acme",model="fake",kind="prompt"\} 303/);
    assert.match(metrics, /agw_upstream_tokens_total\{org="acme",model="judge",kind="completion"\} 33/);
  });
});
