// Crash safety and scale-out with real processes sharing Redis and PostgreSQL: a worker SIGKILLed in
// the middle of a run, a gateway SIGKILLed with runs queued, and two gateways + two workers executing
// 200 runs triggered over HTTP (none lost, none run twice: model calls counted at the fake upstream).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Queue } from 'bullmq';
import { createLogger } from '../../src/log/logger';
import { RUN_QUEUE_NAME } from '../../src/queue/bullmq-queue';
import { createStore } from '../../src/store/index';
import type { Store } from '../../src/store/port';
import { TEST_KEYS } from '../helpers/config';
import { tempDir } from '../helpers/process';
import { createTestSchema } from '../helpers/store';
import { startRunUpstream, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { AGENT, runConfig, transcript, waitFor } from '../runs/helpers';
import { killAll, startProcess, writeProcessConfig } from './processes';

const REDIS_URL = process.env['REDIS_URL'] || 'redis://127.0.0.1:6379';
const SCALE_AGENT = '5a1e0000-0000-4000-8000-0000000000aa';

async function triggerOverHttp(url: string, agentId: string, topic: string): Promise<{ runId: string; conversationId: string }> {
  const res = await fetch(`${url}/v1/agents/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_KEYS.admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agentId, inputs: [{ name: 'Topic', value: topic }] }),
  });
  assert.equal(res.status, 202, await res.clone().text());
  return (await res.json()) as { runId: string; conversationId: string };
}

async function allTerminal(store: Store, ids: readonly string[], timeoutMs: number): Promise<void> {
  await waitFor(
    `${ids.length} runs terminal`,
    async () => {
      for (const id of ids) if ((await store.runs.get(id))?.status === 'in_progress') return false;
      return true;
    },
    timeoutMs,
    250,
  );
}

describe('run processes (bullmq, Redis + PostgreSQL)', function () {
  this.timeout(90_000);
  let upstream: RunUpstream;
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let store: Store;
  let configFile: string;
  let prefix: string;

  before(async () => {
    upstream = await startRunUpstream();
    schema = await createTestSchema('runproc');
    prefix = `agwproc${randomBytes(4).toString('hex')}`;
    const patch = runConfig(upstream, {
      store: { driver: 'postgres', url: schema.url },
      queue: { driver: 'bullmq', redisUrl: REDIS_URL, prefix, concurrency: 8, leaseSeconds: 2 },
      logging: { level: 'info', accessLog: false },
    });
    const agents = [
      ...(patch['agents'] as Record<string, unknown>[]),
      {
        id: SCALE_AGENT,
        organization: 'acme',
        name: 'Scale',
        createdBy: 'u-admin',
        model: 'fake',
        inputs: [{ label: 'Topic', required: true }],
        steps: [{ prompt: 'Scale {{Topic}}.' }],
      },
    ];
    configFile = writeProcessConfig(path.join(tempDir('agw-runproc-'), 'gateway.yaml'), { ...patch, agents });
    store = await createStore(
      { driver: 'postgres', path: '', url: schema.url, retentionDays: 30, queryTimeoutMs: 15_000 },
      { logger: createLogger({ level: 'error', silent: true }) },
    );
  });

  after(async () => {
    await killAll();
    const queue = new Queue(RUN_QUEUE_NAME, { connection: { url: REDIS_URL, maxRetriesPerRequest: null }, prefix });
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await store?.close();
    await schema?.drop();
    await upstream?.close();
  });

  it('a gateway killed with runs queued loses none; a worker killed mid-run is taken over without duplicating items', async () => {
    upstream.rule({ match: 'Write about crashme', judge: false, delayMs: 5000, times: 1 });
    const first = await startProcess('serve', configFile);
    const topics = ['crashme', 'q1', 'q2', 'q3'];
    const runs = [];
    for (const topic of topics) runs.push(await triggerOverHttp(first.url, AGENT, topic));
    await first.kill('SIGKILL');

    const [gateway, worker] = await Promise.all([startProcess('serve', configFile), startProcess('worker', configFile)]);
    await waitFor('the slow step in flight', async () => upstream.stepCalls().some((c) => c.prompt.includes('crashme')), 15_000);
    await worker.kill('SIGKILL');
    await startProcess('worker', configFile);

    await allTerminal(
      store,
      runs.map((r) => r.runId),
      30_000,
    );
    for (const { runId, conversationId } of runs) {
      const res = await fetch(`${gateway.url}/v1/runs/${runId}`, { headers: { authorization: `Bearer ${TEST_KEYS.admin}` } });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { status: string; result: string | null };
      assert.equal(body.status, 'success', runId);
      const lines = await transcript(store, conversationId);
      assert.equal(new Set(lines).size, lines.length, `duplicated items in ${lines.join(' | ')}`);
      assert.equal(lines.length, 5);
    }
    const crashed = (await store.runs.get(runs[0]!.runId))!;
    assert.ok(crashed.attempts >= 2, 'the crashed run was taken over');
  });

  it('two gateways and two workers: 200 runs over HTTP all reach a terminal status, each executed once', async () => {
    upstream.clear();
    await killAll();
    const [g1, g2] = await Promise.all([
      startProcess('serve', configFile),
      startProcess('serve', configFile),
      startProcess('worker', configFile),
      startProcess('worker', configFile),
    ]);
    const before = upstream.stepCalls().length;
    const started = Date.now();
    const runs = await Promise.all(Array.from({ length: 200 }, (_, i) => triggerOverHttp(i % 2 === 0 ? g1!.url : g2!.url, SCALE_AGENT, `run-${i}`)));
    await allTerminal(
      store,
      runs.map((r) => r.runId),
      45_000,
    );
    const elapsed = Date.now() - started;
    for (const { runId } of runs) assert.equal((await store.runs.get(runId))?.status, 'success', runId);
    const calls = upstream.stepCalls().slice(before);
    assert.equal(calls.length, 200, 'one model call per run');
    const perTopic = new Map<string, number>();
    for (const call of calls) perTopic.set(call.prompt, (perTopic.get(call.prompt) ?? 0) + 1);
    assert.equal(perTopic.size, 200);
    process.stdout.write(`      200 runs through 2 gateways / 2 workers in ${elapsed} ms\n`);
  });
});
