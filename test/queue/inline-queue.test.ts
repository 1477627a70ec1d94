// The inline driver: at most `concurrency` jobs at once, a key queued once while waiting or active,
// jobs enqueued before a consumer starts are kept for it, schedules fire through the processor, a run's
// trace context goes with its job, and jobs execute outside the async context of whoever enqueued them.
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createLogger } from '../../src/log/logger';
import { InlineQueue } from '../../src/queue/inline-queue';

const logger = createLogger({ level: 'error', silent: true });

describe('inline queue', () => {
  it('bounds concurrency, deduplicates keys and keeps jobs until a consumer starts', async () => {
    const queue = new InlineQueue(logger);
    for (const id of ['a', 'b', 'c', 'd', 'e']) await queue.enqueue(id);
    await queue.enqueue('a');
    assert.deepEqual(await queue.depth(), { waiting: 5, active: 0, delayed: 0 });
    let running = 0;
    let peak = 0;
    const seen: string[] = [];
    const consumer = await queue.consume(
      {
        run: async (runId) => {
          running += 1;
          peak = Math.max(peak, running);
          seen.push(runId);
          await new Promise((resolve) => setTimeout(resolve, 20));
          running -= 1;
        },
        schedule: async () => undefined,
      },
      2,
    );
    await queue.enqueue('b-retry', { key: 'b_retry1' });
    while (seen.length < 6) await new Promise((resolve) => setTimeout(resolve, 10));
    await consumer.close();
    await queue.close();
    assert.equal(peak, 2);
    assert.deepEqual([...seen].sort(), ['a', 'b', 'b-retry', 'c', 'd', 'e']);
  });

  it('fires schedule entries through the processor on their cron', async () => {
    const queue = new InlineQueue(logger);
    const fired: { agentId: string; triggerIndex: number; firedAt: string }[] = [];
    await queue.consume(
      { run: async () => undefined, schedule: async (agentId, triggerIndex, firedAt) => void fired.push({ agentId, triggerIndex, firedAt }) },
      1,
    );
    await queue.registerSchedules([{ agentId: 'agent-1', triggerIndex: 2, cron: '* * * * * *', timezone: 'Europe/Paris' }]);
    while (fired.length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
    await queue.close();
    assert.equal(fired[0]?.agentId, 'agent-1');
    assert.equal(fired[0]?.triggerIndex, 2);
    assert.equal(new Date(fired[0]!.firedAt).getUTCMilliseconds(), 0);
  });

  it('hands a run its job’s trace context, and executes jobs outside the async context that enqueued them', async () => {
    const queue = new InlineQueue(logger);
    // What a request's active span is: an async-local store set around the enqueue.
    const request = new AsyncLocalStorage<string>();
    const seen: { runId: string; trace: unknown; store: string | undefined }[] = [];
    const consumer = await queue.consume(
      { run: async (runId, trace) => void seen.push({ runId, trace, store: request.getStore() }), schedule: async () => undefined },
      1,
    );
    const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    await request.run('request-span', async () => {
      await queue.enqueue('traced', { trace });
      await queue.enqueue('plain');
    });
    while (seen.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    await consumer.close();
    await queue.close();
    assert.deepEqual(seen, [
      { runId: 'traced', trace, store: undefined },
      { runId: 'plain', trace: undefined, store: undefined },
    ]);
  });
});
