// No run stays in progress forever with the inline queue: runs left behind by a crashed or restarted
// gateway are taken up again at start (embedded) or once their lease expires (shared store), runs
// interrupted too often end as failure, overdue runs are cancelled, schedule triggers start runs.
import assert from 'node:assert/strict';
import { buildApp } from '../../src/app';
import { createLogger } from '../../src/log/logger';
import { messageItem } from '../../src/runs/items';
import { cancelOverdue } from '../../src/runs/sweepers';
import type { RunRecord } from '../../src/store/types';
import { startTestGateway, testConfig } from '../helpers/gateway';
import { openTestStore, type TestStore } from '../helpers/store';
import { syncConfiguredState } from '../../src/startup';
import { startRunUpstream, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { ADMIN, AGENT, runConfig, transcript, waitFor, waitForStatus } from './helpers';

const logger = createLogger({ level: 'error', silent: true });

/** Triggers a run on an app without a runtime: the run is created and queued in memory, never executed. */
async function createQueuedRun(testStore: TestStore, upstream: RunUpstream, topic: string): Promise<RunRecord> {
  const config = testConfig(runConfig(upstream));
  await syncConfiguredState(config, testStore.store, logger);
  const app = await buildApp(config, { store: testStore.store, logger });
  try {
    const agent = (await testStore.store.agents.get(AGENT))!;
    return await app.services.runs.trigger({ principal: ADMIN, agent, inputs: [{ name: 'Topic', value: topic }], trigger: 'api' });
  } finally {
    await app.close();
  }
}

/** What a worker that died after sending step 1's prompt leaves behind: its lease and two items. */
async function leaveHalfDone(testStore: TestStore, run: RunRecord, leaseMs: number): Promise<void> {
  const now = new Date();
  const leased = await testStore.store.runs.acquireLease(run.id, 'dead-host:1:dead', new Date(now.getTime() + leaseMs).toISOString(), now.toISOString());
  assert.ok(leased);
  await testStore.store.conversations.append(run.conversationId, [
    messageItem('system', 'Be brief.', `${run.id}:instructions`),
    messageItem('user', `Write about ${run.inputs[0]?.value ?? ''} in a  tone.`, `${run.id}:step1:user`),
  ]);
}

for (const driver of ['embedded', 'postgres'] as const) {
  describe(`run recovery (${driver} store, inline queue)`, function () {
    this.timeout(30_000);
    let upstream: RunUpstream;
    let testStore: TestStore;

    before(async () => {
      upstream = await startRunUpstream();
    });
    after(async () => {
      await upstream?.close();
    });
    beforeEach(async () => {
      upstream.clear();
      testStore = await openTestStore(driver);
    });
    afterEach(async () => {
      await testStore?.cleanup();
    });

    it('takes up a run left in progress by a crashed gateway, without duplicating conversation items', async () => {
      const run = await createQueuedRun(testStore, upstream, 'crash');
      // Embedded: the store is this process's alone, so even an unexpired lease is stale at start.
      await leaveHalfDone(testStore, run, driver === 'embedded' ? 600_000 : 1000);
      const gw = await startTestGateway({ store: testStore.store, config: runConfig(upstream) });
      try {
        const done = await waitForStatus(testStore.store, run.id, 'terminal', 10_000);
        assert.equal(done.status, 'success');
        assert.deepEqual(await transcript(testStore.store, run.conversationId), [
          'system: Be brief.',
          'user: Write about crash in a  tone.',
          'assistant: Reply to: Write about crash in a  tone.',
          'user: Summarise the draft.',
          'assistant: Reply to: Summarise the draft.',
        ]);
      } finally {
        await gw.close();
      }
    });

    it('a gateway shut down mid-run hands the run back; the next start finishes it', async () => {
      upstream.rule({ match: 'handback', judge: false, delayMs: 10_000, times: 1 });
      const first = await startTestGateway({ store: testStore.store, config: runConfig(upstream) });
      const agent = (await testStore.store.agents.get(AGENT))!;
      const run = await first.gateway.services.runs.trigger({ principal: ADMIN, agent, inputs: [{ name: 'Topic', value: 'handback' }], trigger: 'api' });
      await waitFor('model call', async () => upstream.stepCalls().some((c) => c.prompt.includes('handback')));
      await first.close();
      const parked = await testStore.store.runs.get(run.id);
      assert.equal(parked?.status, 'in_progress');
      assert.equal(parked?.leaseOwner, null);
      const second = await startTestGateway({ store: testStore.store, config: runConfig(upstream) });
      try {
        const done = await waitForStatus(testStore.store, run.id, 'terminal');
        assert.equal(done.status, 'success');
        const lines = await transcript(testStore.store, run.conversationId);
        assert.equal(lines.filter((l) => l.startsWith('user: Write about handback')).length, 1);
      } finally {
        await second.close();
      }
    });

    it('ends a run interrupted too many times as failure with an explanation', async () => {
      const run = await createQueuedRun(testStore, upstream, 'unlucky');
      const past = new Date(Date.now() - 1000).toISOString();
      for (let i = 0; i < 3; i += 1) assert.ok(await testStore.store.runs.acquireLease(run.id, `dead-${i}`, past, new Date().toISOString()));
      const gw = await startTestGateway({ store: testStore.store, config: runConfig(upstream) });
      try {
        const done = await waitForStatus(testStore.store, run.id, 'terminal');
        assert.equal(done.status, 'failure');
        assert.equal(done.result, null);
        assert.ok(done.endedAt);
        assert.match(done.error ?? '', /interrupted 3 times/);
        const lines = await transcript(testStore.store, run.conversationId);
        assert.match(lines[lines.length - 1] ?? '', /^system: Run failed: The run was interrupted/);
        assert.equal(upstream.stepCalls().filter((c) => c.prompt.includes('unlucky')).length, 0);
      } finally {
        await gw.close();
      }
    });

    it('the timeout sweep cancels an overdue run nobody executes', async () => {
      const run = await createQueuedRun(testStore, upstream, 'overdue');
      await testStore.store.runs.update(run.id, { deadlineAt: new Date(Date.now() - 1).toISOString() });
      const config = testConfig(runConfig(upstream));
      const app = await buildApp(config, { store: testStore.store, logger });
      try {
        const s = app.services;
        const count = await cancelOverdue({
          store: s.store,
          queue: s.runEngine.queue,
          metrics: s.metrics,
          logger,
          active: s.runEngine.active,
          now: () => new Date(),
        });
        assert.equal(count, 1);
        const done = await testStore.store.runs.get(run.id);
        assert.equal(done?.status, 'cancelled');
        assert.equal(done?.result, null);
        assert.ok(done?.endedAt);
        assert.match(await s.metrics.registry.getSingleMetricAsString('agw_runs_total'), /agw_runs_total\{status="cancelled"\} 1/);
      } finally {
        await app.close();
      }
    });
  });
}

describe('schedule triggers (inline)', function () {
  this.timeout(20_000);
  it('start runs on their cron as the agent creator, with the trigger inputs', async () => {
    const upstream = await startRunUpstream();
    const config = runConfig(upstream);
    const agents = (config['agents'] as Record<string, unknown>[]).map((a) =>
      a['id'] === AGENT
        ? { ...a, createdBy: 'u-member', triggers: [{ type: 'webhook' }, { type: 'schedule', cron: '* * * * * *', inputs: { Topic: 'cron' } }] }
        : a,
    );
    const gw = await startTestGateway({ config: { ...config, agents } });
    try {
      const ids = await waitFor(
        'a scheduled run',
        async () => {
          const page = await gw.store.runs.page({ agentId: AGENT, limit: 10, after: null, startDate: null, endDate: null });
          return page.ids.length > 0 ? page.ids : null;
        },
        5000,
      );
      const run = await waitForStatus(gw.store, ids[0]!, 'terminal');
      assert.equal(run.trigger, 'schedule');
      assert.equal(run.userId, 'u-member');
      assert.deepEqual(run.inputs, [{ name: 'Topic', value: 'cron' }]);
      assert.equal(run.status, 'success');
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});
