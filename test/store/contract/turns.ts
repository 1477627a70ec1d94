import assert from 'node:assert/strict';
import type { TurnBegin } from '../../../src/store/port';
import type { NewConversationItem, NewResponseEvent, ResponseRecord } from '../../../src/store/types';
import { at, T0, uid, type StoreHandle } from './fixtures';

function response(conversationId: string, overrides: Partial<ResponseRecord> = {}): ResponseRecord {
  return {
    id: uid('resp'),
    orgId: 'org-turns',
    userId: 'u',
    status: 'in_progress',
    model: 'demo',
    conversationId,
    previousResponseId: null,
    stored: true,
    body: { object: 'response', status: 'in_progress', text: 'nul \u0000 kept out of jsonb' },
    inputItems: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'q' }] }],
    createdAt: at(T0),
    updatedAt: at(T0),
    expiresAt: null,
    lease: { owner: 'me', until: at(T0 + 60_000) },
    ...overrides,
  };
}

function item(text: string, role = 'user'): NewConversationItem {
  return {
    id: uid('msg'),
    type: 'message',
    role,
    data: { content: [{ type: role === 'user' ? 'input_text' : 'output_text', text }] },
    status: 'completed',
    idempotencyKey: null,
    responseId: null,
  };
}

/** An event of the response's log as the event log hands it over: its JSON text, not an object. */
function logged(responseId: string, n: number): NewResponseEvent {
  const event = n === 4 ? 'response.completed' : 'response.output_text.delta';
  const data = event === 'response.completed' ? { type: event, sequence_number: n } : { type: event, sequence_number: n, delta: `d${n}` };
  return { responseId, sequenceNumber: n, event, json: JSON.stringify(data), createdAt: at(T0 + n) };
}

const completed = (text: string) => ({ status: 'completed' as const, body: { object: 'response', status: 'completed', output: [{ type: 'message', text }] } });

export function turnsContract(h: StoreHandle, driver: string): void {
  describe('turns (group commit of stored Responses turns)', () => {
    it('begins insert new conversations with their turn held and the response records, many at once', async () => {
      const begins: TurnBegin[] = Array.from({ length: 5 }, () => {
        const conversationId = uid('conv');
        return {
          conversation: { id: conversationId, orgId: 'org-turns', userId: 'u', runId: null, metadata: { source: 'responses' }, createdAt: at(T0) },
          turnUntil: at(T0 + 600_000),
          response: response(conversationId),
        };
      });
      assert.deepEqual(await h.store.turns.commit(begins, []), { finished: [] });
      for (const begin of begins) {
        const stored = await h.store.responses.get(begin.response.id);
        assert.equal(stored?.status, 'in_progress');
        assert.equal(stored?.conversationId, begin.conversation!.id);
        assert.deepEqual(stored?.lease, begin.response.lease);
        assert.deepEqual(stored?.inputItems, begin.response.inputItems);
        const conversation = await h.store.conversations.get(begin.conversation!.id);
        assert.equal(conversation?.userId, 'u');
        // Held by its response: another cannot claim it while the response is in progress.
        assert.equal(await h.store.conversations.claimTurn(begin.conversation!.id, 'resp_other', at(T0 + 1), at(T0 + 2)), false);
      }
    });

    it('ends append items where the response holds the turn, release it, record the context size and finish; all in one commit', async () => {
      const ids = [uid('conv'), uid('conv'), uid('conv')];
      const begins: TurnBegin[] = ids.map((id) => ({
        conversation: { id, orgId: 'org-turns', userId: 'u', runId: null, metadata: {}, createdAt: at(T0) },
        turnUntil: at(T0 + 600_000),
        response: response(id),
      }));
      await h.store.turns.commit(begins, []);
      // The third's turn was taken over (its deadline passed): its end appends nothing there.
      assert.equal(await h.store.conversations.claimTurn(ids[2]!, 'resp_usurper', at(T0 + 700_000), at(T0 + 800_000)), true);
      // The second's response was already failed by the sweeper: its terminal write does not apply.
      await h.store.responses.finish(begins[1]!.response.id, { status: 'failed', body: { status: 'failed' } }, { whenStatus: 'in_progress' });
      const result = await h.store.turns.commit(
        [],
        begins.map((b, i) => ({
          responseId: b.response.id,
          outcome: completed(`answer ${i}`),
          conversationId: b.conversation!.id,
          items: [item(`question ${i}`), item(`answer ${i}`, 'assistant')],
          contextTokens: 100 + i,
        })),
      );
      assert.deepEqual(result.finished.sort(), [begins[0]!.response.id, begins[2]!.response.id].sort());
      assert.equal((await h.store.responses.get(begins[0]!.response.id))?.status, 'completed');
      assert.equal((await h.store.responses.get(begins[0]!.response.id))?.lease, null);
      assert.equal((await h.store.responses.get(begins[1]!.response.id))?.status, 'failed', 'the first terminal write wins');
      const listed = await Promise.all(ids.map((id) => h.store.conversations.listItems(id, { order: 'asc', limit: 10 })));
      assert.deepEqual(
        listed.map((items) => items.map((i) => [i.position, i.role])),
        [
          [
            [1, 'user'],
            [2, 'assistant'],
          ],
          [
            [1, 'user'],
            [2, 'assistant'],
          ],
          [],
        ],
      );
      assert.equal((await h.store.conversations.get(ids[0]!))?.contextTokens, 100);
      assert.equal((await h.store.conversations.get(ids[2]!))?.contextTokens ?? null, null, 'not the holder: nothing recorded');
      // Released: the next turn may claim the first; the usurper still holds the third.
      assert.equal(await h.store.conversations.claimTurn(ids[0]!, 'resp_next', at(T0 + 1), at(T0 + 2)), true);
      assert.equal(await h.store.conversations.claimTurn(ids[2]!, 'resp_next', at(T0 + 700_001), at(T0 + 800_000)), false);
      // A continuing turn's end appends after what is there.
      const next = response(ids[0]!);
      await h.store.turns.commit([{ conversation: null, turnUntil: at(T0 + 2), response: next }], []);
      assert.equal(await h.store.conversations.endTurn(ids[0]!, 'resp_next', [], null), true);
      assert.equal(await h.store.conversations.claimTurn(ids[0]!, next.id, at(T0 + 3), at(T0 + 600_000)), true);
      await h.store.turns.commit([], [{ responseId: next.id, outcome: completed('x'), conversationId: ids[0]!, items: [item('third')], contextTokens: null }]);
      const after = await h.store.conversations.listItems(ids[0]!, { order: 'asc', limit: 10 });
      assert.deepEqual(
        after.map((i) => i.position),
        [1, 2, 3],
      );
      assert.equal((await h.store.conversations.get(ids[0]!))?.contextTokens, 100, 'null keeps the last context size');
    });

    it("ends store their response's last events with them, whether or not the terminal write applies", async () => {
      const ids = [uid('conv'), uid('conv')];
      const begins: TurnBegin[] = ids.map((id) => ({
        conversation: { id, orgId: 'org-turns', userId: 'u', runId: null, metadata: {}, createdAt: at(T0) },
        turnUntil: at(T0 + 600_000),
        response: response(id),
      }));
      await h.store.turns.commit(begins, []);
      const [first, second] = begins.map((b) => b.response.id) as [string, string];
      // The first's earlier events were written by the event log; the end brings the rest.
      await h.store.responses.appendEvents([0, 1].map((n) => logged(first, n)));
      // The second was failed by the sweeper meanwhile: its terminal write does not apply, its events are kept.
      await h.store.responses.finish(second, { status: 'failed', body: { status: 'failed' } }, { whenStatus: 'in_progress' });
      const result = await h.store.turns.commit(
        [],
        begins.map((b, i) => ({
          responseId: b.response.id,
          outcome: completed(`answer ${i}`),
          conversationId: b.conversation!.id,
          items: [],
          contextTokens: null,
          events: i === 0 ? [2, 3, 4].map((n) => logged(first, n)) : [logged(second, 0)],
        })),
      );
      assert.deepEqual(result.finished, [first]);
      const events = await h.store.responses.listEvents(first, -1);
      assert.deepEqual(
        events.map((e) => [e.sequenceNumber, e.event]),
        [
          [0, 'response.output_text.delta'],
          [1, 'response.output_text.delta'],
          [2, 'response.output_text.delta'],
          [3, 'response.output_text.delta'],
          [4, 'response.completed'],
        ],
      );
      assert.deepEqual(events[4]!.data, { type: 'response.completed', sequence_number: 4 }, 'stored as the JSON text given');
      assert.deepEqual(
        (await h.store.responses.listEvents(second, -1)).map((e) => e.sequenceNumber),
        [0],
      );
    });

    it('many responses at once: an event-log write and a commit of ends carrying more chunks than one statement lists', async () => {
      // The SQL stores list up to 64 chunks (a response's run of consecutive events) as rows of one
      // statement, each with its events as a parameter of its own; past that the event log's write
      // takes several statements and a commit one JSON parameter of them all.
      const ids = Array.from({ length: 70 }, () => uid('conv'));
      const begins: TurnBegin[] = ids.map((id) => ({
        conversation: { id, orgId: 'org-turns', userId: 'u', runId: null, metadata: {}, createdAt: at(T0) },
        turnUntil: at(T0 + 600_000),
        response: response(id),
      }));
      await h.store.turns.commit(begins, []);
      const responses = begins.map((b) => b.response.id);
      const text = (n: number): string => `d${n} é ✓ 😀 "quoted" \\ tab\t`;
      const event = (responseId: string, n: number): NewResponseEvent => ({
        responseId,
        sequenceNumber: n,
        event: 'response.output_text.delta',
        json: JSON.stringify({ type: 'response.output_text.delta', sequence_number: n, delta: text(n) }),
        createdAt: at(T0 + n),
      });
      // 140 chunks in one write: two of each response's (its events 0-1, and 3 after a gap).
      await h.store.responses.appendEvents(responses.flatMap((r) => [event(r, 0), event(r, 1), event(r, 3)]));
      // Ends whose events are two chunks each (2, then 4 after the write's 3): 140 in one commit.
      const result = await h.store.turns.commit(
        [],
        begins.map((b) => ({
          responseId: b.response.id,
          outcome: completed('answer'),
          conversationId: b.conversation!.id,
          items: [],
          contextTokens: null,
          events: [event(b.response.id, 2), event(b.response.id, 4)],
        })),
      );
      assert.deepEqual(result.finished.slice().sort(), responses.slice().sort());
      // And a write of one chunk, after them.
      const last = begins[0]!;
      await h.store.responses.appendEvents([event(last.response.id, 5), event(last.response.id, 6)]);
      for (const r of responses) {
        const events = await h.store.responses.listEvents(r, -1);
        const expected = r === last.response.id ? [0, 1, 2, 3, 4, 5, 6] : [0, 1, 2, 3, 4];
        assert.deepEqual(
          events.map((e) => e.sequenceNumber),
          expected,
          r,
        );
        assert.deepEqual(
          events.map((e) => (e.data as { delta: string }).delta),
          expected.map(text),
        );
      }
    });

    it('all or nothing: a commit with a bad write writes none of it (SQL stores; MongoDB writes them one by one)', async function () {
      if (driver === 'mongodb') this.skip();
      const id = uid('conv');
      const good: TurnBegin = {
        conversation: { id, orgId: 'org-turns', userId: 'u', runId: null, metadata: {}, createdAt: at(T0) },
        turnUntil: at(T0 + 600_000),
        response: response(id),
      };
      const duplicate: TurnBegin = { conversation: null, turnUntil: at(T0), response: { ...response(id), id: good.response.id } };
      await assert.rejects(h.store.turns.commit([good, duplicate], []));
      assert.equal(await h.store.responses.get(good.response.id), null);
      assert.equal(await h.store.conversations.get(id), null);
    });

    it('tells a write it refuses (the same write gets the same answer) from a failure that says nothing about the write', async () => {
      const first = response(uid('conv'));
      await h.store.turns.commit([{ conversation: null, turnUntil: at(T0), response: first }], []);
      // The same response id again: a duplicate key on every store.
      const err = await h.store.turns.commit([{ conversation: null, turnUntil: at(T0), response: { ...response(uid('conv')), id: first.id } }], []).then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(err, 'the duplicate beginning is refused');
      assert.equal(h.store.turns.refused(err), true, String(err));
      // What a store cut off or too slow gives: no answer about the write.
      for (const other of [
        new Error('connect ECONNREFUSED 127.0.0.1:5432'),
        new Error('Query read timeout'),
        Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
      ]) {
        assert.equal(h.store.turns.refused(other), false, other.message);
      }
    });
  });
}
