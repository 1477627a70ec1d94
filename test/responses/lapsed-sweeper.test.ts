// A gateway killed mid-stream leaves no response in progress for ever: leases renewed while a process
// lives, a lapsed one marked failed by the sweeper (once, whoever sweeps), its readers ended; and the
// runtime runs the sweep in every mode (embedded at start, postgres with the inline and bullmq queues).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ResponseEventLog } from '../../src/responses/event-log';
import { createLapsedSweeper, LAPSED_ERROR } from '../../src/responses/lapsed-sweeper';
import { ResponseLeases } from '../../src/responses/leases';
import { createInProcessLiveEvents } from '../../src/responses/live-events';
import { replayEvents } from '../../src/responses/replay';
import { startTestGateway } from '../helpers/gateway';
import { openTestStore, type TestStore } from '../helpers/store';
import { drain, inProgressResponse, silentLogger, textEvent, waitUntil } from './helpers';

const REDIS_URL = process.env['REDIS_URL'] || 'redis://127.0.0.1:6379';

describe('lapsed response leases (postgres store)', function () {
  this.timeout(30_000);
  let t: TestStore;

  before(async () => {
    t = await openTestStore('postgres');
  });
  after(async () => {
    await t?.cleanup();
  });

  it('a held lease is renewed in one write for all held responses; a released one is not', async () => {
    let now = Date.parse('2030-01-01T00:00:00.000Z');
    const leases = new ResponseLeases({ responses: t.store.responses, owner: 'gw-live', leaseMs: 3000, now: () => new Date(now), logger: silentLogger });
    const a = inProgressResponse({ lease: leases.leaseFor() });
    const b = inProgressResponse({ lease: leases.leaseFor() });
    await t.store.responses.create(a);
    await t.store.responses.create(b);
    leases.hold(a.id);
    leases.hold(b.id);
    now += 2000;
    await leases.renew();
    assert.equal((await t.store.responses.get(a.id))?.lease?.until, new Date(now + 3000).toISOString());
    assert.equal((await t.store.responses.get(b.id))?.lease?.until, new Date(now + 3000).toISOString());
    leases.release(b.id);
    now += 2000;
    await leases.renew();
    assert.equal((await t.store.responses.get(a.id))?.lease?.until, new Date(now + 3000).toISOString());
    assert.equal((await t.store.responses.get(b.id))?.lease?.until, new Date(now - 2000 + 3000).toISOString());
    // The sweeper at a time past a's lease but for the renewal: nothing lapsed.
    const sweeper = createLapsedSweeper({
      responses: t.store.responses,
      live: createInProcessLiveEvents(),
      logger: silentLogger,
      now: () => new Date(now + 2000),
    });
    const swept = await sweeper.sweep();
    assert.equal((await t.store.responses.get(a.id))?.status, 'in_progress');
    assert.equal(swept, 1, 'only b, released without finishing, lapsed');
    await leases.close();
  });

  it("a reader that finds the response failed before the sweeper's events are stored still ends with them", async () => {
    const live = createInProcessLiveEvents({ storePollMs: 60_000 });
    const record = inProgressResponse({ lease: { owner: 'gw-dead', until: new Date(Date.now() - 1000).toISOString() } });
    await t.store.responses.create(record);
    const createdAt = new Date().toISOString();
    await t.store.responses.appendEvents([0, 1].map((n) => ({ responseId: record.id, ...textEvent(n), createdAt })));
    // The sweeper's two steps with a reader's read between them: failed first, then (once the reader
    // has read the log without them) its events. Any later read by the reader waits for that write.
    const body = { ...record.body, status: 'failed', error: { code: LAPSED_ERROR.code, message: LAPSED_ERROR.message } };
    assert.ok(await t.store.responses.finish(record.id, { status: 'failed', body }, { whenStatus: 'in_progress' }));
    let firstRead!: () => void;
    const firstReadDone = new Promise<void>((resolve) => (firstRead = resolve));
    let appended!: () => void;
    const appendDone = new Promise<void>((resolve) => (appended = resolve));
    let reads = 0;
    const responses = {
      get: (id: string) => t.store.responses.get(id),
      async listEvents(id: string, after: number, limit?: number) {
        if (++reads > 1) await appendDone;
        const events = await t.store.responses.listEvents(id, after, limit);
        if (reads === 1) firstRead();
        return events;
      },
    };
    const reading = drain(replayEvents({ responses, live, responseId: record.id, startingAfter: -1 }));
    await firstReadDone;
    await t.store.responses.appendEvents([
      {
        responseId: record.id,
        sequenceNumber: 2,
        event: 'error',
        data: { type: 'error', sequence_number: 2, code: 'server_error', message: LAPSED_ERROR.message },
        createdAt,
      },
      { responseId: record.id, sequenceNumber: 3, event: 'response.failed', data: { type: 'response.failed', sequence_number: 3, response: body }, createdAt },
    ]);
    appended();
    const events = await reading;
    assert.deepEqual(
      events.map((e) => [e.sequenceNumber, e.event]),
      [
        [0, 'response.created'],
        [1, 'response.in_progress'],
        [2, 'error'],
        [3, 'response.failed'],
      ],
    );
  });

  it('marks a lapsed response failed, appends error and response.failed after its stored events, ends its waiting reader; once', async () => {
    const live = createInProcessLiveEvents({ storePollMs: 60_000 });
    const log = new ResponseEventLog({ responses: t.store.responses, live, logger: silentLogger });
    const record = inProgressResponse({ lease: { owner: 'gw-dead', until: new Date(Date.now() + 500).toISOString() } });
    await t.store.responses.create(record);
    for (let n = 0; n < 4; n++) log.append(record.id, textEvent(n));
    await log.flush(record.id);
    const reading = drain(replayEvents({ responses: t.store.responses, live, responseId: record.id, startingAfter: -1 }));

    const sweeper = createLapsedSweeper({ responses: t.store.responses, live, logger: silentLogger, now: () => new Date() });
    assert.equal(await sweeper.sweep(), 0, 'not lapsed yet');
    await new Promise((r) => setTimeout(r, 600));
    // Two gateways sweeping at once: one of them fails it.
    const counts = await Promise.all([sweeper.sweep(), sweeper.sweep()]);
    assert.deepEqual(counts.sort(), [0, 1]);

    const events = await reading;
    assert.deepEqual(
      events.map((e) => [e.sequenceNumber, e.event]),
      [
        [0, 'response.created'],
        [1, 'response.in_progress'],
        [2, 'response.output_text.delta'],
        [3, 'response.output_text.delta'],
        [4, 'error'],
        [5, 'response.failed'],
      ],
    );
    assert.deepEqual(events[4]?.data, {
      type: 'error',
      sequence_number: 4,
      code: 'server_error',
      message: LAPSED_ERROR.message,
      param: null,
      error: { type: 'server_error', code: 'server_error', message: LAPSED_ERROR.message, param: null },
    });
    const failed = await t.store.responses.get(record.id);
    assert.equal(failed?.status, 'failed');
    assert.equal(failed?.lease, null);
    assert.deepEqual(failed?.body['error'], { code: 'server_error', message: LAPSED_ERROR.message });
    assert.equal(failed?.body['status'], 'failed');
    assert.deepEqual((events[5]?.data['response'] as Record<string, unknown>)['error'], failed?.body['error']);
    assert.deepEqual(
      (await t.store.responses.listEvents(record.id, 3)).map((e) => e.event),
      ['error', 'response.failed'],
    );
    // The writer, back late, cannot overwrite it; its keeper learns it lost the response.
    assert.equal(await t.store.responses.finish(record.id, { status: 'completed', body: {} }, { whenStatus: 'in_progress' }), null);
    let lost = false;
    const leases = new ResponseLeases({ responses: t.store.responses, owner: 'gw-dead', leaseMs: 3000, now: () => new Date(), logger: silentLogger });
    leases.hold(record.id, () => (lost = true));
    await leases.renew();
    assert.equal(lost, true);
    await leases.close();
    await log.close();
  });
});

for (const mode of ['embedded/inline', 'postgres/inline', 'postgres/bullmq'] as const) {
  describe(`response lease sweep in the serve runtime (${mode})`, function () {
    this.timeout(30_000);

    it(mode === 'embedded/inline' ? 'fails at start the responses a previous life left in progress' : 'fails a response whose lease lapsed', async () => {
      const [driver, queue] = mode.split('/') as ['embedded' | 'postgres', 'inline' | 'bullmq'];
      const t = await openTestStore(driver);
      const prefix = `agwresp${randomBytes(4).toString('hex')}`;
      try {
        // Embedded: the lease is far from lapsed, yet its owner is a previous process (the store is locked).
        const until = new Date(Date.now() + (driver === 'embedded' ? 600_000 : 1000)).toISOString();
        const left = inProgressResponse({ lease: { owner: 'gw-previous', until } });
        await t.store.responses.create(left);
        const config: Record<string, unknown> = { queue: { driver: queue, redisUrl: REDIS_URL, prefix, leaseSeconds: 2 } };
        const gw = await startTestGateway({ store: t.store, config });
        try {
          // A stream this gateway started meanwhile is its own, not a previous life's.
          const own = inProgressResponse({ lease: gw.gateway.services.responseStreams.leases.leaseFor() });
          await t.store.responses.create(own);
          gw.gateway.services.responseStreams.leases.hold(own.id);
          await waitUntil('the sweep', async () => (await t.store.responses.get(left.id))?.status === 'failed', 10_000);
          // Its events are written right after the status (the same sweep).
          await waitUntil('the failure events', async () => (await t.store.responses.lastSequenceNumber(left.id)) >= 1, 5000);
          assert.deepEqual(
            (await t.store.responses.listEvents(left.id, -1)).map((e) => e.event),
            ['error', 'response.failed'],
          );
          await new Promise((r) => setTimeout(r, 1500)); // past several sweeps
          assert.equal((await t.store.responses.get(own.id))?.status, 'in_progress', 'a held lease is renewed, never swept');
        } finally {
          await gw.close();
        }
      } finally {
        await t.cleanup();
      }
    });
  });
}
