// The event log's queue (src/responses/event-queue.ts): events a response's end took out (stored with
// that end) must not stay in memory until a write's head passes them. On a slow store they did: under
// stored streams at c = 64 on the embedded database the queue held 105,000 taken entries (46 MB of event
// texts) while no event waited to be written. Order, counts and the write in flight stay as they were.
import assert from 'node:assert/strict';
import { EventQueue, type QueuedEvent } from '../../src/responses/event-queue';

const entry = (responseId: string, sequenceNumber: number): QueuedEvent => ({
  responseId,
  sequenceNumber,
  event: 'response.output_text.delta',
  json: JSON.stringify({ type: 'response.output_text.delta', sequence_number: sequenceNumber, delta: 'x'.repeat(100) }),
});

const ids = (entries: readonly QueuedEvent[]): string[] => entries.map((e) => `${e.responseId}:${e.sequenceNumber}`);

describe('event log queue: entries taken with a response’s end', () => {
  it('are dropped from memory when no write passes them: 1,000 responses of 28 events taken one by one', () => {
    const queue = new EventQueue();
    let mostHeld = 0;
    for (let r = 0; r < 1000; r++) {
      for (let n = 0; n < 28; n++) queue.push(entry(`r${r}`, n));
      // Each response ends before the log writes anything (a slow store): its events go with its end.
      const taken = queue.takeResponse(`r${r}`, 500);
      assert.equal(taken?.length, 28);
      mostHeld = Math.max(mostHeld, queue.held);
    }
    assert.equal(queue.length, 0, 'nothing waits to be written');
    assert.ok(mostHeld < 100, `the queue held at most ${mostHeld} entries (28,000 without dropping taken ones)`);
    assert.deepEqual(queue.takeBatch(500), []);
  });

  it('keeps the other responses’ events, in order, and their count', () => {
    const queue = new EventQueue();
    for (let n = 0; n < 40; n++) for (const r of ['a', 'b', 'c']) queue.push(entry(r, n));
    assert.equal(queue.takeResponse('a', 500)?.length, 40);
    assert.equal(queue.takeResponse('c', 500)?.length, 40);
    assert.ok(queue.held < 120, `taken entries dropped (${queue.held} held of 120)`);
    assert.equal(queue.length, 40);
    const batch = queue.takeBatch(500);
    assert.deepEqual(
      ids(batch),
      Array.from({ length: 40 }, (_, n) => `b:${n}`),
    );
    queue.settle();
    assert.equal(queue.length, 0);
    assert.equal(queue.held, 0);
  });

  it('leaves the write in flight as it is: its entries settle, or come back for a retry, at the head', () => {
    for (const outcome of ['settled', 'retried'] as const) {
      const queue = new EventQueue();
      for (let n = 0; n < 4; n++) queue.push(entry('w', n));
      const inFlight = queue.takeBatch(4);
      assert.deepEqual(ids(inFlight), ['w:0', 'w:1', 'w:2', 'w:3']);
      // Behind the write: responses that end and take their events, enough to compact the queue.
      for (let r = 0; r < 10; r++) {
        for (let n = 0; n < 28; n++) queue.push(entry(`r${r}`, n));
        queue.takeResponse(`r${r}`, 500);
      }
      queue.push(entry('x', 0));
      assert.ok(queue.held < 100, `taken entries behind the write dropped (${queue.held} held)`);
      assert.equal(queue.inFlightHas('w'), true);
      assert.equal(queue.waiting, 1, "x's event waits behind the write");
      if (outcome === 'settled') queue.settle();
      else queue.settle(inFlight.slice(2));
      const next = queue.takeBatch(500);
      assert.deepEqual(ids(next), outcome === 'settled' ? ['x:0'] : ['w:2', 'w:3', 'x:0'], outcome);
      queue.settle();
      assert.equal(queue.length, 0, outcome);
    }
  });
});
