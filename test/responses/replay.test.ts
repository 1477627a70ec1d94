// Replay of a response's events (GET /v1/responses/{id}?stream=true) over a real PostgreSQL store, with
// the writer's event log in the same process: stored events after starting_after, then live ones, with
// no gap and no duplicate around the subscription; finished responses end at once; the fallback when
// the log is absent; the lapsed-lease sweeper's events reach a reader that saw more than was stored.
import assert from 'node:assert/strict';
import { errorEnvelope } from '../../src/http/envelope';
import { GatewayError } from '../../src/http/errors';
import { ResponseEventLog } from '../../src/responses/event-log';
import { createLapsedSweeper } from '../../src/responses/lapsed-sweeper';
import { createInProcessLiveEvents, type LiveEvents } from '../../src/responses/live-events';
import { parseStartingAfter, replayEvents } from '../../src/responses/replay';
import type { StreamEvent } from '../../src/responses/stream-event';
import type { ResponseRepository } from '../../src/store/port';
import { openTestStore, type TestStore } from '../helpers/store';
import { COMPLETED_BODY_OUTPUT, completedEvent, drain, inProgressResponse, numbers, range, silentLogger, textEvent, waitUntil } from './helpers';

/** Pulls events from a replay as they come, so a test can act between them. */
class Reader {
  readonly events: StreamEvent[] = [];
  done = false;
  readonly finished: Promise<void>;

  constructor(source: AsyncIterable<StreamEvent>) {
    this.finished = (async () => {
      for await (const event of source) this.events.push(event);
      this.done = true;
    })();
  }

  async until(what: string, count: number, timeoutMs = 5000): Promise<void> {
    await waitUntil(`${what} (${count} events, have ${this.events.length})`, () => this.events.length >= count, timeoutMs);
  }
}

describe('response replay (postgres store, in-process live events)', function () {
  this.timeout(30_000);
  let t: TestStore;
  let live: LiveEvents;
  let log: ResponseEventLog;

  before(async () => {
    t = await openTestStore('postgres');
  });
  after(async () => {
    await t?.cleanup();
  });
  beforeEach(() => {
    // The safety poll is pushed out of the way: each test shows which path delivered what.
    live = createInProcessLiveEvents({ storePollMs: 60_000 });
  });
  afterEach(async () => {
    await log?.close();
  });

  /** A writer whose events are stored only when a test flushes them (or after `flushIntervalMs`). */
  function writer(flushIntervalMs = 60_000): ResponseEventLog {
    log = new ResponseEventLog({ responses: t.store.responses, live, logger: silentLogger, flushIntervalMs });
    return log;
  }

  async function finish(id: string): Promise<void> {
    await log.flush(id);
    const done = await t.store.responses.finish(
      id,
      { status: 'completed', body: { id, object: 'response', status: 'completed', output: COMPLETED_BODY_OUTPUT } },
      { whenStatus: 'in_progress' },
    );
    assert.ok(done);
  }

  it('a finished response replays its events after starting_after and ends with its final event at once', async () => {
    const record = inProgressResponse();
    await t.store.responses.create(record);
    const w = writer();
    for (let n = 0; n < 6; n++) w.append(record.id, textEvent(n));
    w.append(record.id, completedEvent(6, record.id));
    await finish(record.id);

    const all = await drain(replayEvents({ responses: t.store.responses, live, responseId: record.id, startingAfter: -1 }));
    assert.deepEqual(numbers(all), range(0, 6));
    assert.deepEqual(all[3], textEvent(3));
    assert.equal(all[6]?.event, 'response.completed');
    const rest = await drain(replayEvents({ responses: t.store.responses, live, responseId: record.id, startingAfter: 3 }));
    assert.deepEqual(numbers(rest), [4, 5, 6]);
  });

  it('events published while the reader reads the store arrive live, kept once, at once (it subscribed before reading)', async () => {
    const record = inProgressResponse();
    await t.store.responses.create(record);
    const w = writer();
    for (let n = 0; n < 10; n++) w.append(record.id, textEvent(n));
    await w.flush(record.id);
    // The reader's store read is where the race is: while it runs, the writer publishes 10..14 and
    // stores 10..12 (read back too: duplicates), then publishes 15..17 that are never stored during
    // the test (only the live path can deliver them: the poll is a minute away).
    let raced = false;
    const racing: Pick<ResponseRepository, 'get' | 'listEvents'> = {
      get: (id) => t.store.responses.get(id),
      async listEvents(id, after, limit) {
        if (!raced) {
          raced = true;
          for (let n = 10; n < 13; n++) w.append(record.id, textEvent(n));
          await w.flush(record.id);
          for (let n = 13; n < 18; n++) w.append(record.id, textEvent(n));
        }
        return t.store.responses.listEvents(id, after, limit);
      },
    };
    const reader = new Reader(replayEvents({ responses: racing, live, responseId: record.id, startingAfter: 4 }));
    await reader.until('the raced events', 13, 1000);
    assert.deepEqual(numbers(reader.events), range(5, 17));
    w.append(record.id, textEvent(18));
    w.append(record.id, completedEvent(19, record.id));
    await finish(record.id);
    await reader.finished;
    assert.deepEqual(numbers(reader.events), range(5, 19), 'each event once, in order, no gap');
  });

  it('events published before the reader subscribed and not yet stored are read once the writer stores them', async () => {
    const record = inProgressResponse();
    await t.store.responses.create(record);
    const w = writer(100); // the usual kind of interval: stored shortly after
    for (let n = 0; n < 8; n++) w.append(record.id, textEvent(n));
    // 0..7 published to nobody and not stored yet: the reader must find them in the store.
    const reader = new Reader(replayEvents({ responses: t.store.responses, live, responseId: record.id, startingAfter: -1 }));
    await reader.until('the unstored events', 8, 3000);
    // Later events are live; one published now, then the end.
    w.append(record.id, textEvent(8));
    w.append(record.id, completedEvent(9, record.id));
    await finish(record.id);
    await reader.finished;
    assert.deepEqual(numbers(reader.events), range(0, 9));
  });

  it('fills a gap in the live events from the store (events of the writer unstored at subscription, then later ones live)', async () => {
    const record = inProgressResponse();
    await t.store.responses.create(record);
    const w = writer();
    for (let n = 0; n < 5; n++) w.append(record.id, textEvent(n));
    const reader = new Reader(replayEvents({ responses: t.store.responses, live, responseId: record.id, startingAfter: -1, gapRetryMs: 10 }));
    // After the reader's reads that follow its subscription (0..4 still unstored then).
    await new Promise((r) => setTimeout(r, 800));
    for (let n = 5; n < 10; n++) w.append(record.id, textEvent(n)); // live, after a gap of 0..4
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(reader.events, [], 'nothing before the gap is filled');
    await w.flush(record.id);
    await reader.until('the filled gap', 10, 2000);
    assert.deepEqual(numbers(reader.events), range(0, 9));
    w.append(record.id, completedEvent(10, record.id));
    await finish(record.id);
    await reader.finished;
    assert.deepEqual(numbers(reader.events), range(0, 10));
  });

  it('past its event log (none stored), a finished response replays its final items, then response.completed, numbered after starting_after', async () => {
    for (const startingAfter of [-1, 7]) {
      const record = inProgressResponse();
      await t.store.responses.create(record);
      writer();
      await finish(record.id);
      const events = await drain(replayEvents({ responses: t.store.responses, live, responseId: record.id, startingAfter }));
      assert.deepEqual(
        events.map((e) => e.event),
        ['response.output_item.done', 'response.output_item.done', 'response.completed'],
      );
      assert.deepEqual(numbers(events), [startingAfter + 1, startingAfter + 2, startingAfter + 3]);
      assert.deepEqual(events[1]?.data, {
        type: 'response.output_item.done',
        sequence_number: startingAfter + 2,
        output_index: 1,
        item: COMPLETED_BODY_OUTPUT[1],
      });
      assert.equal((events[2]?.data['response'] as { status: string }).status, 'completed');
    }
  });

  it('a finished response whose log the reader has read to the end ends with its final event again, numbered next', async () => {
    const record = inProgressResponse();
    await t.store.responses.create(record);
    const w = writer();
    for (let n = 0; n < 3; n++) w.append(record.id, textEvent(n));
    w.append(record.id, completedEvent(3, record.id));
    await finish(record.id);
    const events = await drain(replayEvents({ responses: t.store.responses, live, responseId: record.id, startingAfter: 3 }));
    assert.deepEqual(
      events.map((e) => [e.sequenceNumber, e.event]),
      [[4, 'response.completed']],
    );
  });

  it("ends a reader that saw more than was stored when the sweeper fails the response: the sweeper's events come after what it saw", async () => {
    const record = inProgressResponse({ lease: { owner: 'dead-gateway', until: new Date(Date.now() + 60_000).toISOString() } });
    await t.store.responses.create(record);
    const w = writer();
    for (let n = 0; n < 6; n++) w.append(record.id, textEvent(n));
    await w.flush(record.id); // 0..5 stored
    const reader = new Reader(replayEvents({ responses: t.store.responses, live, responseId: record.id, startingAfter: -1 }));
    await reader.until('the stored events', 6);
    for (let n = 6; n < 12; n++) w.append(record.id, textEvent(n)); // seen live, never stored: the writer dies
    await reader.until('the live events', 12);
    const sweeper = createLapsedSweeper({ responses: t.store.responses, live, logger: silentLogger, now: () => new Date(Date.now() + 120_000) });
    assert.equal(await sweeper.sweep(), 1);
    await reader.finished;
    assert.deepEqual(
      reader.events.slice(11).map((e) => [e.sequenceNumber, e.event, e.data['sequence_number']]),
      [
        [11, 'response.output_text.delta', 11],
        [12, 'error', 12],
        [13, 'response.failed', 13],
      ],
    );
    // In the store the sweeper's events follow the stored log; a later replay ends there.
    const replayed = await drain(replayEvents({ responses: t.store.responses, live, responseId: record.id, startingAfter: -1 }));
    assert.deepEqual(replayed.map((e) => e.event).slice(5), ['response.output_text.delta', 'error', 'response.failed']);
  });

  it('ends when the signal aborts (the client went away), leaving no subscription behind', async () => {
    const record = inProgressResponse();
    await t.store.responses.create(record);
    const controller = new AbortController();
    const reader = new Reader(replayEvents({ responses: t.store.responses, live, responseId: record.id, startingAfter: -1, signal: controller.signal }));
    await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    await reader.finished;
    assert.deepEqual(reader.events, []);
  });

  it('ends at once when the response does not exist', async () => {
    assert.deepEqual(await drain(replayEvents({ responses: t.store.responses, live, responseId: 'resp_missing', startingAfter: -1 })), []);
  });
});

describe('parseStartingAfter', () => {
  it('absent: from the start; Last-Event-ID honoured only when the query is absent', () => {
    assert.equal(parseStartingAfter(undefined, undefined), -1);
    assert.equal(parseStartingAfter(undefined, ''), -1);
    assert.equal(parseStartingAfter(undefined, '12'), 12);
    assert.equal(parseStartingAfter('3', '12'), 3);
    assert.equal(parseStartingAfter('0', undefined), 0);
    assert.equal(parseStartingAfter(5, undefined), 5);
  });

  it('negative or non-integer: 400 naming the parameter, with no error code in the nested envelope', () => {
    for (const [query, header, param] of [
      ['-1', undefined, 'starting_after'],
      ['1.5', undefined, 'starting_after'],
      ['abc', undefined, 'starting_after'],
      ['', undefined, 'starting_after'],
      [['1', '2'], undefined, 'starting_after'],
      [-3, undefined, 'starting_after'],
      ['99999999999999999999', undefined, 'starting_after'],
      [undefined, 'x7', 'Last-Event-ID'],
      [undefined, '-2', 'Last-Event-ID'],
    ] as const) {
      assert.throws(
        () => parseStartingAfter(query, header),
        (err: unknown) => {
          assert.ok(err instanceof GatewayError);
          assert.equal(err.status, 400);
          assert.equal(err.param, param);
          assert.match(err.message, new RegExp(`'${param}'`));
          assert.deepEqual(errorEnvelope(err, 'openai'), { error: { message: err.message, type: 'invalid_request_error', code: null, param } });
          return true;
        },
        `${String(query)} / ${String(header)}`,
      );
    }
  });
});
