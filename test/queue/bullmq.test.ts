// The bullmq driver with real Redis and PostgreSQL, in one process: a gateway app that only enqueues
// and a worker app that consumes (separate apps: separate queues, executors and active-run registries).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { buildApp, type GatewayApp } from '../../src/app';
import { createLogger } from '../../src/log/logger';
import { RUN_QUEUE_NAME } from '../../src/queue/bullmq-queue';
import { startWorkerRuntime, type Runtime } from '../../src/runtime';
import { syncConfiguredState } from '../../src/startup';
import { startTestGateway, TEST_KEYS, testConfig, type TestGateway } from '../helpers/gateway';
import { startTcpProxy } from '../helpers/process';
import { within } from '../helpers/wait';
import { openTestStore, type TestStore } from '../helpers/store';
import { startRunUpstream, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { ADMIN, AGENT, runConfig, waitFor, waitForStatus } from '../runs/helpers';

const REDIS_URL = process.env['REDIS_URL'] || 'redis://127.0.0.1:6379';
const logger = createLogger({ level: 'error', silent: process.env['TEST_LOGS'] !== '1' });

describe('bullmq queue (Redis + PostgreSQL)', function () {
  this.timeout(30_000);
  let upstream: RunUpstream;
  let testStore: TestStore;
  let prefix: string;
  let patch: Record<string, unknown>;
  const gateways: TestGateway[] = [];
  const workers: { app: GatewayApp; runtime: Runtime }[] = [];

  async function startWorker(): Promise<GatewayApp> {
    const config = testConfig(patch);
    const app = await buildApp(config, { store: testStore.store, logger });
    const runtime = await startWorkerRuntime(app.services);
    workers.push({ app, runtime });
    return app;
  }

  async function startGateway(): Promise<TestGateway> {
    const gw = await startTestGateway({ store: testStore.store, config: patch });
    gateways.push(gw);
    return gw;
  }

  async function rawQueue<T>(use: (queue: Queue) => Promise<T>): Promise<T> {
    const queue = new Queue(RUN_QUEUE_NAME, { connection: { url: REDIS_URL, maxRetriesPerRequest: null }, prefix });
    try {
      return await use(queue);
    } finally {
      await queue.close();
    }
  }

  before(async () => {
    upstream = await startRunUpstream();
    testStore = await openTestStore('postgres');
  });
  beforeEach(() => {
    upstream.clear();
    prefix = `agwtest${randomBytes(4).toString('hex')}`;
    patch = runConfig(upstream, { queue: { driver: 'bullmq', redisUrl: REDIS_URL, prefix, concurrency: 4, leaseSeconds: 3 } });
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) {
      await w.runtime.close();
      await w.app.close();
    }
    for (const gw of gateways.splice(0)) await gw.close();
    await rawQueue((queue) => queue.obliterate({ force: true }));
  });
  after(async () => {
    await testStore?.cleanup();
    await upstream?.close();
  });

  it('a gateway only enqueues; a worker executes the run', async () => {
    const gw = await startGateway();
    const agent = (await testStore.store.agents.get(AGENT))!;
    const run = await gw.gateway.services.runs.trigger({ principal: ADMIN, agent, inputs: [{ name: 'Topic', value: 'queued' }], trigger: 'api' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await testStore.store.runs.get(run.id))?.status, 'in_progress');
    assert.equal(upstream.calls.length, 0);
    assert.deepEqual(await gw.gateway.services.runEngine.queue.depth(), { waiting: 1, active: 0, delayed: 0 });
    const worker = await startWorker();
    const done = await waitForStatus(testStore.store, run.id, 'terminal');
    assert.equal(done.status, 'success');
    assert.equal(upstream.stepCalls().length, 2);
    assert.match(await worker.services.metrics.registry.getSingleMetricAsString('agw_runs_total'), /agw_runs_total\{status="success"\} 1/);
  });

  it('a run enqueued twice is queued once (job id = run id)', async () => {
    const gw = await startGateway();
    const agent = (await testStore.store.agents.get(AGENT))!;
    const run = await gw.gateway.services.runs.trigger({ principal: ADMIN, agent, inputs: [{ name: 'Topic', value: 'twice' }], trigger: 'api' });
    await gw.gateway.services.runEngine.queue.enqueue(run.id);
    assert.equal((await gw.gateway.services.runEngine.queue.depth()).waiting, 1);
  });

  it('a cancel reaches the worker executing the run in another app: its model call is aborted', async () => {
    upstream.rule({ match: 'remote', judge: false, delayMs: 10_000 });
    const gw = await startGateway();
    await startWorker();
    const agent = (await testStore.store.agents.get(AGENT))!;
    const run = await gw.gateway.services.runs.trigger({ principal: ADMIN, agent, inputs: [{ name: 'Topic', value: 'remote' }], trigger: 'api' });
    await waitFor('model call', async () => upstream.stepCalls().some((c) => c.prompt.includes('remote')));
    await gw.gateway.services.runs.cancel(ADMIN, run, 'no longer needed');
    await waitFor('upstream abort', async () => upstream.stepCalls().find((c) => c.prompt.includes('remote'))?.aborted, 3000);
    const after = await testStore.store.runs.get(run.id);
    assert.equal(after?.status, 'cancelled');
    assert.equal(after?.result, null);
  });

  it('schedule triggers become one job scheduler each, however many gateways register them; each tick fires once', async () => {
    const agents = (patch['agents'] as Record<string, unknown>[]).map((a) =>
      a['id'] === AGENT ? { ...a, triggers: [{ type: 'schedule', cron: '* * * * * *', inputs: { Topic: 'tick' } }] } : a,
    );
    patch = { ...patch, agents };
    await syncConfiguredState(testConfig(patch), testStore.store, logger);
    const startedAt = Date.now();
    await startGateway();
    await startGateway();
    await startWorker();
    await startWorker();
    const schedulers = await rawQueue((queue) => queue.getJobSchedulers(0, -1));
    assert.deepEqual(
      schedulers.map((s) => s.key),
      [`agent-${AGENT}-0`],
    );
    // Waits for ticks as they come (a generous ceiling for a busy machine), then checks none fired twice:
    // no more runs than seconds elapsed (+1 for the tick in progress at the start).
    const scheduled = await waitFor(
      'two scheduled runs',
      async () => {
        const page = await testStore.store.runs.page({ agentId: AGENT, limit: 100, after: null, startDate: new Date(startedAt).toISOString(), endDate: null });
        const runs = await Promise.all(page.ids.map((id) => testStore.store.runs.get(id)));
        const found = runs.filter((r) => r?.trigger === 'schedule');
        return found.length >= 2 ? found : null;
      },
      20_000,
      200,
    );
    const elapsedSeconds = Math.ceil((Date.now() - startedAt) / 1000);
    assert.ok(scheduled.length <= elapsedSeconds + 1, `${scheduled.length} runs in ${elapsedSeconds} s: ticks fired more than once`);
    // Later configs without the trigger remove its scheduler.
    patch = { ...patch, agents: (patch['agents'] as Record<string, unknown>[]).map((a) => ({ ...a, triggers: [] })) };
    await syncConfiguredState(testConfig(patch), testStore.store, logger);
    await startGateway();
    assert.deepEqual(await rawQueue((queue) => queue.getJobSchedulers(0, -1)), []);
  });

  /** What a Redis restarted without persistence (`save ""`, no AOF: Debian's default here) holds of this queue: nothing. */
  async function wipeQueueKeys(): Promise<number> {
    const admin = new Redis(REDIS_URL);
    try {
      let removed = 0;
      let cursor = '0';
      do {
        const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) removed += await admin.del(...keys);
      } while (cursor !== '0');
      return removed;
    } finally {
      admin.disconnect();
    }
  }

  it('a Redis that loses its data: runs queued and running all end once, from the store; schedule triggers are registered again', async () => {
    upstream.rule({ match: /Write about slow-/, judge: false, delayMs: 1500 });
    const agents = (patch['agents'] as Record<string, unknown>[]).map((a) =>
      a['id'] === AGENT ? { ...a, triggers: [{ type: 'schedule', cron: '0 0 1 1 *', inputs: { Topic: 'yearly' } }] } : a,
    );
    patch = { ...patch, agents };
    await syncConfiguredState(testConfig(patch), testStore.store, logger);
    const gw = await startGateway();
    await startWorker();
    const agent = (await testStore.store.agents.get(AGENT))!;
    const runs = [];
    for (let i = 0; i < 10; i++)
      runs.push(await gw.gateway.services.runs.trigger({ principal: ADMIN, agent, inputs: [{ name: 'Topic', value: `slow-${i}` }], trigger: 'api' }));
    await waitFor('steps in flight', async () => upstream.stepCalls().length >= 4, 10_000);
    assert.ok((await wipeQueueKeys()) > 0);
    for (const run of runs) await waitForStatus(testStore.store, run.id, 'success', 20_000);
    const perTopic = new Map<string, number>();
    // (Runs left by the earlier tests in the shared store are recovered too: only this test's are counted.)
    for (const call of upstream.stepCalls()) if (/Write about slow-/.test(call.prompt)) perTopic.set(call.prompt, (perTopic.get(call.prompt) ?? 0) + 1);
    assert.deepEqual([...perTopic.values()], Array<number>(10).fill(1), 'each run executed once');
    const schedulers = (): Promise<{ key: string; pattern?: string }[]> => rawQueue((queue) => queue.getJobSchedulers(0, -1));
    await waitFor('the schedule trigger registered again', async () => (await schedulers()).length === 1, 20_000, 250);
    // One changed behind the gateways' backs (an older gateway's configuration) is put back as the store has it.
    await rawQueue((queue) => queue.upsertJobScheduler(`agent-${AGENT}-0`, { pattern: '* * * * *' }, { name: 'schedule', data: {} }));
    await waitFor('the stored pattern back', async () => (await schedulers())[0]?.pattern === '0 0 1 1 *', 20_000, 250);
    assert.deepEqual(
      (await schedulers()).map((s) => s.key),
      [`agent-${AGENT}-0`],
    );
  });

  it('a Redis that is away: a trigger answers at once with its committed run, queued by the recovery sweep when Redis is back', async () => {
    // The gateway reaches Redis through a relay the test cuts; the worker (and its sweeps) directly.
    const proxy = await startTcpProxy(Number(new URL(REDIS_URL).port || 6379));
    let restored = false;
    let safety: NodeJS.Timeout | undefined;
    try {
      const gw = await startTestGateway({
        store: testStore.store,
        config: { ...patch, queue: { ...(patch['queue'] as Record<string, unknown>), redisUrl: `redis://127.0.0.1:${proxy.port}` } },
      });
      gateways.push(gw);
      await startWorker();
      await proxy.cut();
      // Without the fix the trigger waited for Redis: bring it back after 8 s so that case fails on time, not by hanging.
      safety = setTimeout(() => void proxy.restore().then(() => (restored = true)), 8_000);
      const started = Date.now();
      const res = await fetch(`${gw.url}/v1/agents/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_KEYS.admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agentId: AGENT, inputs: [{ name: 'Topic', value: 'redis away' }] }),
      });
      const elapsed = Date.now() - started;
      assert.equal(res.status, 202, await res.clone().text());
      assert.ok(elapsed < 2_000, `the trigger answered after ${elapsed} ms`);
      assert.equal(restored, false);
      const { runId } = (await res.json()) as { runId: string };
      assert.equal((await testStore.store.runs.get(runId))?.status, 'in_progress');
      clearTimeout(safety);
      await proxy.restore();
      // Nobody enqueued it: the worker's recovery sweep does, once the run is older than the lease (3 s).
      assert.equal((await waitForStatus(testStore.store, runId, 'terminal', 20_000)).status, 'success');
      assert.equal(upstream.stepCalls().filter((c) => c.prompt.includes('redis away')).length, 1);
    } finally {
      clearTimeout(safety);
      await proxy.close();
    }
  });

  it('a Redis that stops answering without closing the connection: a trigger answers within the command limit (5 s)', async () => {
    const proxy = await startTcpProxy(Number(new URL(REDIS_URL).port || 6379));
    try {
      const gw = await startTestGateway({
        store: testStore.store,
        config: { ...patch, queue: { ...(patch['queue'] as Record<string, unknown>), redisUrl: `redis://127.0.0.1:${proxy.port}` } },
      });
      gateways.push(gw);
      proxy.silence();
      const outcome = await within(
        15_000,
        fetch(`${gw.url}/v1/agents/runs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TEST_KEYS.admin}`, 'content-type': 'application/json' },
          body: JSON.stringify({ agentId: AGENT, inputs: [{ name: 'Topic', value: 'redis silent' }] }),
        }),
      );
      assert.notEqual(outcome, 'still waiting', 'the trigger still waiting after 15 s');
      if (outcome === 'still waiting') return;
      const res = outcome.value;
      assert.ok(res, outcome.error?.message);
      assert.equal(res.status, 202, await res.clone().text());
      assert.ok(outcome.waited >= 4_500 && outcome.waited < 8_000, `the trigger answered after ${outcome.waited} ms`);
      const { runId } = (await res.json()) as { runId: string };
      assert.equal((await testStore.store.runs.get(runId))?.status, 'in_progress');
    } finally {
      proxy.heal();
      await proxy.close();
    }
  });
});
