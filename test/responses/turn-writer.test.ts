// The turn writer's group commit (src/responses/turn-writer.ts): writes queued while a commit is in
// flight share the next one; an idle writer commits at once; a failed commit is retried write by
// write so that only the bad write fails.
import assert from 'node:assert/strict';
import type { TurnBegin, TurnEnd, TurnRepository } from '../../src/store/port';
import { TurnWriter } from '../../src/responses/turn-writer';
import { isSqlRefusal } from '../../src/store/sql/database';
import { silentLogger, waitUntil } from './helpers';

function begin(id: string): TurnBegin {
  return {
    conversation: null,
    turnUntil: '2026-01-01T00:00:00.000Z',
    response: {
      id,
      orgId: 'o',
      userId: 'u',
      status: 'in_progress',
      model: 'm',
      conversationId: 'conv_1',
      previousResponseId: null,
      stored: true,
      body: {},
      inputItems: [],
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      expiresAt: null,
    },
  };
}

function end(id: string): TurnEnd {
  return { responseId: id, outcome: { status: 'completed', body: {} }, conversationId: `conv_${id}`, items: [], contextTokens: null };
}

/** A repository that records each commit and holds it until released. */
class RecordingTurns implements TurnRepository {
  readonly commits: { begins: string[]; ends: string[] }[] = [];
  private gates: (() => void)[] = [];
  held = false;
  refuse = new Set<string>();
  /** The next commits that fail as a statement never answered does (node-postgres's query_timeout), the ping answering. */
  unanswered = 0;
  /** The store away: every commit fails, and so does the ping. */
  away = false;
  readonly ping = async (): Promise<void> => {
    if (this.away) throw new Error('connect ECONNREFUSED');
  };
  /** As the SQL stores classify their errors. */
  readonly refused = isSqlRefusal;

  async commit(begins: readonly TurnBegin[], ends: readonly TurnEnd[]): Promise<{ finished: string[] }> {
    this.commits.push({ begins: begins.map((b) => b.response.id), ends: ends.map((e) => e.responseId) });
    if (this.held) await new Promise<void>((resolve) => this.gates.push(resolve));
    if (this.away) throw new Error('connect ECONNREFUSED');
    const ids = [...begins.map((b) => b.response.id), ...ends.map((e) => e.responseId)];
    // What PostgreSQL answers a write it refuses: an error with a SQLSTATE (here a unique violation).
    if (ids.some((id) => this.refuse.has(id))) throw Object.assign(new Error('refused'), { code: '23505' });
    if (this.unanswered > 0) {
      this.unanswered--;
      throw new Error('Query read timeout');
    }
    return { finished: ends.map((e) => e.responseId).filter((id) => id !== 'already-final') };
  }

  release(): void {
    this.held = false;
    for (const open of this.gates.splice(0)) open();
  }
}

describe('TurnWriter: group commit of stored turns', () => {
  it('writes queued in one turn of the event loop go in one commit; while it is in flight, the next ones wait and share the following one', async () => {
    const turns = new RecordingTurns();
    const writer = new TurnWriter(turns, silentLogger);
    turns.held = true;
    const first = [writer.begin(begin('a')), writer.begin(begin('b')), writer.end(end('c'))];
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(turns.commits.length, 1, 'one commit for the three');
    const second = [writer.begin(begin('d')), writer.end(end('e')), writer.end(end('already-final'))];
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(turns.commits.length, 1, 'nothing more while the first is in flight');
    turns.release();
    await Promise.all([...first, ...second]);
    assert.deepEqual(turns.commits, [
      { begins: ['a', 'b'], ends: ['c'] },
      { begins: ['d'], ends: ['e', 'already-final'] },
    ]);
    assert.deepEqual(await Promise.all(second.slice(1)), [true, false], 'end() says whether the terminal write applied');
  });

  it('with maxInFlight 2 a second commit starts while the first runs; a third waits for one of them', async () => {
    const turns = new RecordingTurns();
    const writer = new TurnWriter(turns, silentLogger, 2);
    turns.held = true;
    const first = writer.begin(begin('a'));
    await new Promise((resolve) => setImmediate(resolve));
    const second = writer.begin(begin('b'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(turns.commits.length, 2, 'two in flight');
    const third = [writer.end(end('c')), writer.end(end('d'))];
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(turns.commits.length, 2, 'the third waits');
    turns.release();
    await Promise.all([first, second, ...third]);
    assert.deepEqual(turns.commits[2], { begins: [], ends: ['c', 'd'] });
  });

  it('an idle writer commits a lone write at once (no waiting for a window)', async () => {
    const turns = new RecordingTurns();
    const writer = new TurnWriter(turns, silentLogger);
    const written = writer.begin(begin('solo'));
    // Issued in the next turn of the event loop, not after a timer (no wall clock: one setImmediate).
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(turns.commits, [{ begins: ['solo'], ends: [] }]);
    await written;
  });

  it('a failed group commit is retried write by write: only the bad write fails', async () => {
    const turns = new RecordingTurns();
    const writer = new TurnWriter(turns, silentLogger);
    turns.refuse.add('bad');
    const results = await Promise.allSettled([writer.begin(begin('ok1')), writer.begin(begin('bad')), writer.end(end('ok2'))]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(turns.commits, [
      { begins: ['ok1', 'bad'], ends: ['ok2'] },
      { begins: ['ok1'], ends: [] },
      { begins: ['bad'], ends: [] },
      { begins: [], ends: ['ok2'] },
    ]);
  });

  it('drain() resolves once everything queued is written', async () => {
    const turns = new RecordingTurns();
    const writer = new TurnWriter(turns, silentLogger);
    turns.held = true;
    const pending = writer.end(end('x'));
    setTimeout(() => turns.release(), 30);
    await writer.drain();
    assert.equal(await pending, true);
  });

  it('keeps an end whose write was never answered though the store answers its ping by then (a partition that healed)', async () => {
    const turns = new RecordingTurns();
    const writer = new TurnWriter(turns, silentLogger, 1, { ping: turns.ping, retryBaseMs: 10, endRetryMs: 10_000 });
    // A lone end (its own commit), then two ends and a beginning sharing one, each failing unanswered.
    turns.unanswered = 1;
    assert.equal(await writer.end(end('alone')), true);
    assert.deepEqual(turns.commits.slice(-2), [
      { begins: [], ends: ['alone'] },
      { begins: [], ends: ['alone'] },
    ]);
    turns.unanswered = 2;
    const results = await Promise.allSettled([writer.begin(begin('b1')), writer.end(end('e1')), writer.end(end('e2'))]);
    // The group commit and then b1's own fail unanswered: the beginning fails (its caller has been sent
    // nothing and answers 500), the ends are written.
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected')),
      ['rejected', true, true],
    );
  });

  describe('a store that is away (it does not answer its ping)', () => {
    const settled = async <T>(promise: Promise<T>, ms: number): Promise<boolean> => {
      let done = false;
      void promise.then(
        () => (done = true),
        () => (done = true),
      );
      await new Promise((resolve) => setTimeout(resolve, ms));
      return done;
    };

    it('fails its beginnings at once and keeps its ends, written once it is back (their callers were sent the whole response)', async () => {
      const turns = new RecordingTurns();
      const writer = new TurnWriter(turns, silentLogger, 1, { ping: turns.ping, retryBaseMs: 10, endRetryMs: 10_000 });
      turns.away = true;
      const started = writer.begin(begin('b1'));
      const ended = writer.end(end('e1'));
      await assert.rejects(started, /ECONNREFUSED/);
      await waitUntil('retries with backoff', () => turns.commits.length >= 3, 5000);
      assert.equal(await settled(ended, 50), false, 'the end waits for the store');
      // Meanwhile a new beginning is not queued behind the kept end: it fails at once too.
      await assert.rejects(writer.begin(begin('b2')), /ECONNREFUSED/);
      turns.away = false;
      assert.equal(await ended, true);
      assert.deepEqual(turns.commits.at(-1), { begins: [], ends: ['e1'] });
    });

    it('gives an end up once it was kept endRetryMs; an end the store refuses fails at once', async () => {
      const turns = new RecordingTurns();
      const writer = new TurnWriter(turns, silentLogger, 1, { ping: turns.ping, retryBaseMs: 10, endRetryMs: 150 });
      turns.away = true;
      const t0 = Date.now();
      await assert.rejects(writer.end(end('e1')), /ECONNREFUSED/);
      assert.ok(Date.now() - t0 >= 150, 'kept for endRetryMs');

      turns.away = false;
      turns.refuse.add('e2');
      const before = turns.commits.length;
      await assert.rejects(writer.end(end('e2')), /refused/);
      assert.equal(turns.commits.length - before, 1, 'not retried');
    });

    it('drain() makes one last attempt at the kept ends', async () => {
      const turns = new RecordingTurns();
      const writer = new TurnWriter(turns, silentLogger, 1, { ping: turns.ping, retryBaseMs: 60_000, endRetryMs: 120_000 });
      turns.away = true;
      const ended = writer.end(end('e1'));
      await new Promise((resolve) => setTimeout(resolve, 30));
      turns.away = false;
      await writer.drain();
      assert.equal(await ended, true);
    });
  });
});
