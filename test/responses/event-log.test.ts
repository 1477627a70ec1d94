// The response event log against a real PostgreSQL store: events reach live readers at once and the
// store in batches; flush(responseId) waits for that response's events; a store outage (the events
// table renamed away) is survived with retries and logged without event text; memory stays bounded;
// a response whose events the store refuses is dropped without stalling the others.
import assert from 'node:assert/strict';
import pg from 'pg';
import { EventLogLostError, ResponseEventLog, type ResponseEventLogOptions } from '../../src/responses/event-log';
import { createInProcessLiveEvents, type LiveEvents } from '../../src/responses/live-events';
import type { StreamEvent } from '../../src/responses/stream-event';
import type { ResponseRepository } from '../../src/store/port';
import type { NewResponseEvent } from '../../src/store/types';
import { openTestStore, type TestStore } from '../helpers/store';
import { capturedLogger, numbers, range, responseId, silentLogger, textEvent, waitUntil } from './helpers';

/** The real repository, with its appendEvents calls counted (batches) and their sizes kept. */
function countingWrites(responses: ResponseRepository): { repo: Pick<ResponseRepository, 'appendEvents'>; writes: number[] } {
  const writes: number[] = [];
  return {
    writes,
    repo: {
      appendEvents(events: readonly NewResponseEvent[]) {
        writes.push(events.length);
        return responses.appendEvents(events);
      },
    },
  };
}

/** An event whose text is not JSON (a defect upstream of the log): the store refuses every write of it. */
const POISONED_EVENT: StreamEvent = {
  sequenceNumber: 0,
  event: 'response.created',
  data: { type: 'response.created', sequence_number: 0 },
  json: '{"type":"response.created","sequence_number":0,"n":}',
};

describe('response event log (postgres store)', function () {
  this.timeout(30_000);
  let t: TestStore;
  let admin: pg.Client;
  let live: LiveEvents;
  const logs: ResponseEventLog[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

  before(async () => {
    t = await openTestStore('postgres');
    admin = new pg.Client({ connectionString: t.config.url });
    await admin.connect();
    process.on('unhandledRejection', onUnhandled);
  });
  after(async () => {
    process.off('unhandledRejection', onUnhandled);
    await admin?.end();
    await t?.cleanup();
  });
  beforeEach(() => {
    live = createInProcessLiveEvents();
    unhandled.length = 0;
  });
  afterEach(async () => {
    // A test that broke the table puts it back itself; make sure for the next one.
    await admin.query('ALTER TABLE IF EXISTS response_events_away RENAME TO response_events');
    for (const log of logs.splice(0)) await log.close();
    assert.deepEqual(unhandled, [], 'no unhandled rejection');
  });

  function eventLog(options: Partial<ResponseEventLogOptions> = {}): ResponseEventLog {
    const log = new ResponseEventLog({ responses: t.store.responses, live, logger: silentLogger, ...options });
    logs.push(log);
    return log;
  }

  const stored = async (id: string): Promise<number[]> => (await t.store.responses.listEvents(id, -1)).map((e) => e.sequenceNumber);

  it('append returns at once with the event already delivered live; the store gets it in a batch, flush waits for it', async () => {
    const { repo, writes } = countingWrites(t.store.responses);
    const log = eventLog({ responses: repo, flushIntervalMs: 200 });
    const id = responseId();
    const seen: StreamEvent[] = [];
    const subscription = await live.subscribe(id, { onEvent: (e) => seen.push(e), onStored: () => undefined });
    for (let n = 0; n < 5; n++) log.append(id, textEvent(n));
    // Synchronously: every event live, nothing written yet.
    assert.deepEqual(numbers(seen), [0, 1, 2, 3, 4]);
    assert.deepEqual(writes, []);
    assert.equal(log.pending, 5);
    await log.flush(id);
    assert.deepEqual(await stored(id), [0, 1, 2, 3, 4]);
    assert.deepEqual(writes, [5], 'one write for the five events');
    assert.deepEqual((await t.store.responses.listEvents(id, -1))[2]?.data, textEvent(2).data);
    subscription.close();
    await log.flush(id); // nothing pending: resolves at once
    await log.flush(responseId());
  });

  it('writes on its own every flushIntervalMs, and at once when batchSize events wait', async () => {
    const { repo, writes } = countingWrites(t.store.responses);
    const timed = eventLog({ responses: repo, flushIntervalMs: 50, batchSize: 1000 });
    const a = responseId();
    timed.append(a, textEvent(0));
    timed.append(a, textEvent(1));
    await waitUntil('the interval write', async () => (await stored(a)).length === 2, 2000);
    assert.deepEqual(writes, [2]);

    const counted = countingWrites(t.store.responses);
    const sized = eventLog({ responses: counted.repo, flushIntervalMs: 60_000, batchSize: 10 });
    const b = responseId();
    for (let n = 0; n < 25; n++) sized.append(b, textEvent(n));
    // 20 of 25 in two full batches without waiting for the (one minute) interval; 5 wait for it.
    await waitUntil('the full batches', async () => (await stored(b)).length === 20, 5000);
    assert.deepEqual(counted.writes, [10, 10]);
    await sized.flush(b);
    assert.deepEqual(await stored(b), range(0, 24));
  });

  it('flush waits only for its own response and for what was appended before it', async () => {
    const log = eventLog({ flushIntervalMs: 60_000, batchSize: 1000 });
    const a = responseId();
    const b = responseId();
    log.append(a, textEvent(0));
    log.append(b, textEvent(0));
    log.append(a, textEvent(1));
    const flushed = log.flush(a);
    log.append(a, textEvent(2)); // after the flush call: not awaited by it
    await flushed;
    assert.deepEqual((await stored(a)).slice(0, 2), [0, 1]);
    await log.flush(a);
    await log.flush(b);
    assert.deepEqual(await stored(a), [0, 1, 2]);
    assert.deepEqual(await stored(b), [0]);
  });

  it('survives the store going away: keeps appending, retries with backoff, logs once without event text, stores everything once when it is back', async () => {
    const captured = capturedLogger();
    const log = eventLog({ logger: captured.logger, flushIntervalMs: 20, retryBaseMs: 20, retryMaxMs: 100 });
    const id = responseId();
    await admin.query('ALTER TABLE response_events RENAME TO response_events_away');
    for (let n = 0; n < 30; n++) log.append(id, textEvent(n, undefined, `SECRET-PROMPT-TEXT-${n}`));
    let flushed = false;
    const flushing = log.flush(id).then(() => (flushed = true));
    await waitUntil('a logged failure', () => captured.text().includes('store write failed'), 5000);
    await new Promise((r) => setTimeout(r, 300)); // several retries
    assert.equal(flushed, false);
    for (let n = 30; n < 40; n++) log.append(id, textEvent(n)); // the caller never waits or fails
    assert.equal(log.pending, 40);
    await admin.query('ALTER TABLE response_events_away RENAME TO response_events');
    await flushing; // the 30 appended before it
    await log.flush(id);
    assert.deepEqual(await stored(id), range(0, 39));
    const failures = captured.lines().filter((l) => String(l['message']).includes('store write failed'));
    assert.equal(failures.length, 1, 'the failure is logged once, not per retry');
    assert.equal(failures[0]?.['code'], '42P01', 'the driver error code is logged');
    assert.ok(captured.lines().some((l) => String(l['message']).includes('recovered')));
    assert.ok(!captured.text().includes('SECRET-PROMPT-TEXT'), 'no event text in the log');
  });

  it('bounds memory while the store is down: the response that overflows loses its log (flush rejects), stored as a clean prefix', async () => {
    const captured = capturedLogger();
    const log = eventLog({ logger: captured.logger, flushIntervalMs: 20, retryBaseMs: 20, retryMaxMs: 50, maxBuffered: 20, batchSize: 5 });
    const early = responseId();
    const late = responseId();
    for (let n = 0; n < 5; n++) log.append(early, textEvent(n));
    await log.flush(early); // 0..4 stored before the outage
    await admin.query('ALTER TABLE response_events RENAME TO response_events_away');
    for (let n = 5; n < 10; n++) log.append(early, textEvent(n));
    for (let n = 0; n < 15; n++) log.append(late, textEvent(n));
    assert.equal(log.pending, 20);
    const seenLive: number[] = [];
    const subscription = await live.subscribe(late, { onEvent: (e) => seenLive.push(e.sequenceNumber), onStored: () => undefined });
    log.append(late, textEvent(15)); // one too many: `late` loses its log
    log.append(late, textEvent(16));
    assert.deepEqual(seenLive, [15, 16], 'still published live');
    assert.ok(log.pending <= 20, `pending ${log.pending} within the bound`);
    await assert.rejects(log.flush(late), (err: unknown) => err instanceof EventLogLostError && err.reason === 'buffer full');
    await admin.query('ALTER TABLE response_events_away RENAME TO response_events');
    await log.flush(early);
    assert.deepEqual(await stored(early), range(0, 9));
    // Whatever of `late` was in flight when it overflowed may be stored; nothing after a hole.
    const lateStored = await stored(late);
    assert.deepEqual(lateStored, range(0, lateStored.length - 1));
    assert.ok(lateStored.length < 15);
    assert.ok(captured.lines().some((l) => l['message'] === 'response event log: events of a response dropped' && l['responseId'] === late));
    subscription.close();
  });

  it('a response whose events the store refuses is dropped after isolated retries; the others are stored', async () => {
    const captured = capturedLogger();
    const log = eventLog({ logger: captured.logger, flushIntervalMs: 10, retryBaseMs: 10, retryMaxMs: 20, isolateAfter: 2, ping: () => t.store.ping() });
    const good = responseId();
    const poisoned = responseId();
    log.append(good, textEvent(0));
    // Text that is not JSON (a defect upstream of the log): the store refuses its write every time.
    log.append(poisoned, POISONED_EVENT);
    log.append(good, textEvent(1));
    await log.flush(good);
    assert.deepEqual(await stored(good), [0, 1]);
    await assert.rejects(log.flush(poisoned), (err: unknown) => err instanceof EventLogLostError && err.reason === 'refused by the store');
    assert.deepEqual(await stored(poisoned), []);
    log.append(good, textEvent(2));
    await log.flush(good);
    assert.deepEqual(await stored(good), [0, 1, 2], 'the log goes on');
    assert.ok(captured.lines().some((l) => String(l['message']).includes('refuses') && l['responseId'] === poisoned));
  });

  it('a response refused alone is dropped too once the store answers its ping (no other write to compare with)', async () => {
    const log = eventLog({ flushIntervalMs: 10, retryBaseMs: 10, retryMaxMs: 20, isolateAfter: 2, ping: () => t.store.ping() });
    const poisoned = responseId();
    log.append(poisoned, POISONED_EVENT);
    await assert.rejects(log.flush(poisoned), (err: unknown) => err instanceof EventLogLostError && err.reason === 'refused by the store');
    assert.equal(log.pending, 0);
  });

  it('an event whose data has no JSON text loses its response its log at once; the others are stored', async () => {
    const captured = capturedLogger();
    const log = eventLog({ logger: captured.logger, flushIntervalMs: 10 });
    const good = responseId();
    const broken = responseId();
    log.append(good, textEvent(0));
    log.append(broken, textEvent(0));
    // A value no JSON encoding takes: the queue holds each event as its JSON text, made at append.
    log.append(broken, { sequenceNumber: 1, event: 'response.in_progress', data: { type: 'response.in_progress', sequence_number: 1, n: 10n } });
    log.append(good, textEvent(1));
    await assert.rejects(log.flush(broken), (err: unknown) => err instanceof EventLogLostError && err.reason === 'event not serializable');
    await log.flush(good);
    assert.deepEqual(await stored(good), [0, 1]);
    // What was queued before it may be stored (a gap-free prefix); nothing after it.
    const brokenStored = await stored(broken);
    assert.ok(brokenStored.length <= 1, `stored ${JSON.stringify(brokenStored)}`);
    assert.ok(captured.lines().some((l) => l['message'] === 'response event log: events of a response dropped' && l['responseId'] === broken));
  });

  it('an event appended with the JSON text its caller was sent is stored as that text, not serialized again', async () => {
    const log = eventLog({ flushIntervalMs: 10 });
    const id = responseId();
    const data = { type: 'response.output_text.delta', sequence_number: 0, delta: 'a' };
    // The text carries a field the object does not: what is stored can only have come from the text.
    const json = '{"type":"response.output_text.delta","sequence_number":0,"delta":"a","obfuscation":"as sent"}';
    log.append(id, { sequenceNumber: 0, event: 'response.output_text.delta', data, json });
    // A text with a U+0000 escape (model output may hold one) is stored too, the character as U+FFFD.
    const nul = { type: 'response.output_text.delta', sequence_number: 1, delta: 'b\u0000' };
    log.append(id, { sequenceNumber: 1, event: 'response.output_text.delta', data: nul, json: JSON.stringify(nul) });
    await log.flush(id);
    const [event, withNul] = await t.store.responses.listEvents(id, -1);
    assert.deepEqual(event?.data, { ...data, obfuscation: 'as sent' });
    assert.deepEqual(withNul?.data, { ...nul, delta: 'b\uFFFD' });
  });

  describe('takeRest: a response that ends takes its unstored events, to store them with its end', () => {
    it("takes the response's queued events in order and no other's; the log never writes them, and a flush does not wait for them", async () => {
      const { repo, writes } = countingWrites(t.store.responses);
      const log = eventLog({ responses: repo, flushIntervalMs: 60_000, batchSize: 1000 });
      const a = responseId();
      const b = responseId();
      log.append(a, textEvent(0));
      log.append(b, textEvent(0));
      log.append(a, textEvent(1));
      log.append(a, textEvent(2));
      assert.equal(log.pending, 4);
      const taken = await log.takeRest(a);
      assert.deepEqual(
        taken.map((e) => [e.responseId, e.sequenceNumber]),
        [
          [a, 0],
          [a, 1],
          [a, 2],
        ],
      );
      assert.equal(log.pending, 1, "only b's event waits");
      await log.flush(a); // nothing of a's is waited for any more: resolves without a write
      assert.deepEqual(writes, []);
      await log.flush(b);
      assert.deepEqual(writes, [1], "the write carries b's event alone");
      assert.deepEqual(await stored(a), [], "a's events are its caller's to store");
      assert.deepEqual(await stored(b), [0]);
      // Events appended after the take are the log's again.
      log.append(a, textEvent(3));
      await log.flush(a);
      assert.deepEqual(await stored(a), [3]);
    });

    it('waits for a write in flight that holds some of its events, then takes what that write did not', async () => {
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const writes: number[][] = [];
      const log = eventLog({
        responses: {
          async appendEvents(events) {
            writes.push(events.map((e) => e.sequenceNumber));
            await gate;
            return t.store.responses.appendEvents(events);
          },
        },
        flushIntervalMs: 60_000,
        batchSize: 2,
      });
      const id = responseId();
      log.append(id, textEvent(0));
      log.append(id, textEvent(1)); // a full batch: written at once, held at the gate
      await waitUntil('the write in flight', () => writes.length === 1, 2000);
      log.append(id, textEvent(2));
      let taken: number[] | null = null;
      const taking = log.takeRest(id).then((events) => (taken = events.map((e) => e.sequenceNumber)));
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(taken, null, 'waits while the write in flight holds events 0 and 1');
      release();
      await taking;
      assert.deepEqual(taken, [2]);
      assert.deepEqual(await stored(id), [0, 1]);
      assert.equal(log.pending, 0);
    });

    it('leaves more than batchSize waiting events to the log (flushed, none taken)', async () => {
      const log = eventLog({ flushIntervalMs: 50, batchSize: 3, retryBaseMs: 20, retryMaxMs: 50 });
      const id = responseId();
      await admin.query('ALTER TABLE response_events RENAME TO response_events_away');
      for (let n = 0; n < 5; n++) log.append(id, textEvent(n));
      const taking = log.takeRest(id);
      await new Promise((r) => setTimeout(r, 100));
      await admin.query('ALTER TABLE response_events_away RENAME TO response_events');
      assert.deepEqual(await taking, []);
      assert.deepEqual(await stored(id), range(0, 4));
    });

    it('rejects for a response whose log was dropped, as flush does', async () => {
      const log = eventLog({ flushIntervalMs: 60_000, maxBuffered: 2 });
      const id = responseId();
      for (let n = 0; n < 3; n++) log.append(id, textEvent(n));
      await assert.rejects(log.takeRest(id), EventLogLostError);
    });
  });

  it('close writes everything still queued', async () => {
    const log = new ResponseEventLog({ responses: t.store.responses, live, logger: silentLogger, flushIntervalMs: 60_000 });
    const id = responseId();
    for (let n = 0; n < 7; n++) log.append(id, textEvent(n));
    await log.close();
    assert.deepEqual(await stored(id), range(0, 6));
  });
});
