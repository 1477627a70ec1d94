// Triggering a run is atomic: the conversation, the run and its step rows are committed together, so a
// store failure at any of those writes answers 500 and leaves nothing behind; once committed, a run is
// executed even when its job never reached the queue (the committed run is its own outbox entry).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { buildApp } from '../../src/app';
import { createLogger } from '../../src/log/logger';
import { RUN_QUEUE_NAME } from '../../src/queue/bullmq-queue';
import type { RunQueue } from '../../src/queue/port';
import { startWorkerRuntime } from '../../src/runtime';
import { openPostgres, type SqlDatabase, type SqlExecutor, type SqlParam } from '../../src/store/sql/database';
import { createSqlStore } from '../../src/store/sql/sql-store';
import type { Store } from '../../src/store/port';
import { startTestGateway, testConfig, TEST_KEYS, type TestGateway } from '../helpers/gateway';
import { createTestSchema } from '../helpers/store';
import { startRunUpstream, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { AGENT, runConfig, waitForStatus } from './helpers';

const logger = createLogger({ level: 'error', silent: process.env['TEST_LOGS'] !== '1' });
const REDIS_URL = process.env['REDIS_URL'] || 'redis://127.0.0.1:6379';

/** The database, failing every statement that matches `failAt()` (inside transactions too). */
function faulty(db: SqlDatabase, failAt: () => RegExp | null): SqlDatabase {
  const guarded = (executor: SqlExecutor): SqlExecutor => ({
    async query<R extends object>(text: string, params?: readonly SqlParam[]): Promise<R[]> {
      const pattern = failAt();
      if (pattern?.test(text)) throw new Error('injected store failure');
      return executor.query<R>(text, params);
    },
  });
  return { kind: db.kind, ...guarded(db), transaction: (fn) => db.transaction((tx) => fn(guarded(tx))), close: () => db.close() };
}

/** The queue, whose next enqueue fails (as when Redis is away, or the process dies before it). */
function failNextEnqueue(queue: RunQueue): void {
  const original = queue.enqueue.bind(queue);
  Object.assign(queue, {
    enqueue: async () => {
      Object.assign(queue, { enqueue: original });
      throw new Error('injected enqueue failure');
    },
  });
}

async function post(url: string): Promise<Response> {
  return fetch(`${url}/v1/agents/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_KEYS.admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agentId: AGENT, inputs: [{ name: 'Topic', value: 'atomic' }] }),
  });
}

describe('atomic run trigger (PostgreSQL)', function () {
  this.timeout(60_000);
  let upstream: RunUpstream;
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let raw: SqlDatabase;
  let store: Store;
  let failAt: RegExp | null = null;

  before(async () => {
    upstream = await startRunUpstream();
    schema = await createTestSchema('trigger');
    raw = openPostgres({ url: schema.url, onConnectionError: () => undefined });
    store = createSqlStore(faulty(raw, () => failAt));
    await store.migrate();
  });
  afterEach(() => {
    failAt = null;
  });
  after(async () => {
    await store?.close();
    await schema?.drop();
    await upstream?.close();
  });

  async function counts(): Promise<{ runs: number; conversations: number; steps: number }> {
    const [row] = await raw.query<{ runs: number; conversations: number; steps: number }>(
      `SELECT (SELECT count(*)::int FROM runs) AS runs, (SELECT count(*)::int FROM conversations) AS conversations,
              (SELECT count(*)::int FROM step_verdicts) AS steps`,
    );
    return row!;
  }

  for (const [point, pattern] of [
    ['the conversation', /INSERT INTO conversations/],
    ['the run', /INSERT INTO runs/],
    ['the step rows', /INSERT INTO step_verdicts/],
  ] as const) {
    it(`a store failure writing ${point} answers 500 and leaves no conversation, run or step row behind`, async () => {
      const gw = await startTestGateway({ store, config: runConfig(upstream) });
      try {
        const before = await counts();
        failAt = pattern;
        const res = await post(gw.url);
        failAt = null;
        assert.equal(res.status, 500, await res.clone().text());
        const body = (await res.json()) as { error: string; message: string };
        assert.equal(body.error, 'Internal Server Error');
        assert.deepEqual(await counts(), before);
      } finally {
        await gw.close();
      }
    });
  }

  /** Triggers a run whose enqueue fails after the commit: answered 202, and the run still ends in success. */
  async function triggerWithFailingEnqueue(gw: TestGateway): Promise<void> {
    failNextEnqueue(gw.gateway.services.runEngine.queue);
    const res = await post(gw.url);
    assert.equal(res.status, 202, await res.clone().text());
    const { runId } = (await res.json()) as { runId: string };
    assert.equal((await waitForStatus(store, runId, 'terminal', 30_000)).status, 'success');
  }

  it('inline queue: a run whose enqueue failed after the commit is answered 202 and executed by the recovery sweep', async () => {
    const gw = await startTestGateway({ store, config: runConfig(upstream) });
    try {
      await triggerWithFailingEnqueue(gw);
    } finally {
      await gw.close();
    }
  });

  it('BullMQ: a run whose enqueue failed after the commit is executed by a worker’s recovery sweep', async () => {
    const prefix = `agwtrig${randomBytes(4).toString('hex')}`;
    const patch = runConfig(upstream, { queue: { driver: 'bullmq', redisUrl: REDIS_URL, prefix, concurrency: 2, leaseSeconds: 2 } });
    const gw = await startTestGateway({ store, config: patch });
    const worker = await buildApp(testConfig(patch), { store, logger });
    const runtime = await startWorkerRuntime(worker.services);
    try {
      await triggerWithFailingEnqueue(gw);
    } finally {
      await runtime.close();
      await worker.close();
      await gw.close();
      const queue = new Queue(RUN_QUEUE_NAME, { connection: { url: REDIS_URL, maxRetriesPerRequest: null }, prefix });
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
    }
  });
});
