// Stored responses: the writer's lease and the sweeper's guard, the event log's idempotent append,
// expiry (absent when expired, pruned with its events) and organization isolation. Times are in an era
// of their own (2001) so the store-wide queries (listLapsed, prune) see only this file's responses.
import assert from 'node:assert/strict';
import type { ResponseEventRecord, ResponseRecord } from '../../../src/store/types';
import { at, principal, uid, type StoreHandle } from './fixtures';

const ERA = Date.parse('2001-01-01T00:00:00.000Z');

function response(overrides: Partial<ResponseRecord> = {}): ResponseRecord {
  return {
    id: uid('resp'),
    orgId: 'org-resp',
    userId: 'u',
    status: 'in_progress',
    model: 'demo',
    conversationId: null,
    previousResponseId: null,
    stored: true,
    body: { object: 'response', status: 'in_progress', output: [] },
    inputItems: [],
    createdAt: at(ERA),
    updatedAt: at(ERA),
    expiresAt: null,
    lease: null,
    ...overrides,
  };
}

function event(responseId: string, n: number, data: Record<string, unknown> = { n }): ResponseEventRecord {
  return { responseId, sequenceNumber: n, event: 'response.output_text.delta', data, createdAt: at(ERA + n) };
}

const completed = { status: 'completed' as const, body: { object: 'response', status: 'completed', output: [{ type: 'message' }] } };
const failed = { status: 'failed' as const, body: { object: 'response', status: 'failed', error: { code: 'server_error' } } };

export function responsesContract(h: StoreHandle): void {
  describe('responses: leases, finish, events, expiry', () => {
    it('keeps the lease create was given; a response created without one has none', async () => {
      const leased = response({ lease: { owner: 'gw-1', until: at(ERA + 30_000) } });
      const plain = response();
      await h.store.responses.create(leased);
      await h.store.responses.create(plain);
      assert.deepEqual((await h.store.responses.get(leased.id))?.lease, { owner: 'gw-1', until: at(ERA + 30_000) });
      assert.equal((await h.store.responses.get(plain.id))?.lease, null);
    });

    it("renews only the owner's leases on in-progress responses, in one call, and says which", async () => {
      const mine = response({ lease: { owner: 'gw-renew', until: at(ERA + 1000) } });
      const mineToo = response({ lease: { owner: 'gw-renew', until: at(ERA + 1000) } });
      const theirs = response({ lease: { owner: 'gw-other', until: at(ERA + 1000) } });
      const finished = response({ lease: { owner: 'gw-renew', until: at(ERA + 1000) } });
      for (const r of [mine, mineToo, theirs, finished]) await h.store.responses.create(r);
      assert.ok(await h.store.responses.finish(finished.id, completed, { whenStatus: 'in_progress' }));

      const renewed = await h.store.responses.renewLeases([mine.id, mineToo.id, theirs.id, finished.id, uid('none')], 'gw-renew', at(ERA + 9000));
      assert.deepEqual([...renewed].sort(), [mine.id, mineToo.id].sort());
      assert.equal((await h.store.responses.get(mine.id))?.lease?.until, at(ERA + 9000));
      assert.equal((await h.store.responses.get(theirs.id))?.lease?.until, at(ERA + 1000), "another owner's lease is untouched");
      assert.equal((await h.store.responses.get(finished.id))?.lease, null);
      assert.deepEqual(await h.store.responses.renewLeases([], 'gw-renew', at(ERA + 9000)), []);
    });

    it('lists in-progress responses whose lease lapsed, longest lapsed first, bounded', async () => {
      const now = ERA + 100_000;
      const lapsedLong = response({ lease: { owner: 'dead', until: at(now - 50_000) } });
      const lapsedShort = response({ lease: { owner: 'dead', until: at(now - 10) } });
      const alive = response({ lease: { owner: 'alive', until: at(now + 10_000) } });
      const unleased = response();
      const done = response({ lease: { owner: 'dead', until: at(now - 40_000) } });
      for (const r of [lapsedShort, alive, unleased, lapsedLong, done]) await h.store.responses.create(r);
      await h.store.responses.finish(done.id, completed, { whenStatus: 'in_progress' });

      const mine = new Set([lapsedLong.id, lapsedShort.id, alive.id, unleased.id, done.id]);
      const listed = (await h.store.responses.listLapsed(at(now), 100)).filter((r) => mine.has(r.id));
      assert.deepEqual(
        listed.map((r) => r.id),
        [lapsedLong.id, lapsedShort.id],
      );
      assert.equal(listed[0]?.lease?.owner, 'dead');
      assert.equal((await h.store.responses.listLapsed(at(now), 1)).length, 1);
      assert.deepEqual(await h.store.responses.listLapsed(at(now), 0), []);
    });

    it('finish: the first terminal write wins (a late writer after the sweeper changes nothing, and the other way round)', async () => {
      const now = at(ERA + 60_000);
      // The sweeper first: the writer's lease lapsed, it is marked failed; the writer, back late, loses.
      const swept = response({ lease: { owner: 'gw-slow', until: at(ERA + 1000) } });
      await h.store.responses.create(swept);
      const failedRecord = await h.store.responses.finish(swept.id, failed, { whenStatus: 'in_progress', lapsedBefore: now });
      assert.equal(failedRecord?.status, 'failed');
      assert.deepEqual(failedRecord?.body, failed.body);
      assert.equal(failedRecord?.lease, null, 'finishing clears the lease');
      assert.equal(await h.store.responses.finish(swept.id, completed, { whenStatus: 'in_progress' }), null);
      assert.deepEqual((await h.store.responses.get(swept.id))?.body, failed.body);

      // The writer first: the sweeper's guarded write finds nothing in progress.
      const written = response({ lease: { owner: 'gw-fast', until: at(ERA + 1000) } });
      await h.store.responses.create(written);
      assert.equal((await h.store.responses.finish(written.id, completed, { whenStatus: 'in_progress' }))?.status, 'completed');
      assert.equal(await h.store.responses.finish(written.id, failed, { whenStatus: 'in_progress', lapsedBefore: now }), null);
      assert.equal((await h.store.responses.get(written.id))?.status, 'completed');

      // A lease renewed after the sweeper listed it: the sweeper's write is refused.
      const renewed = response({ lease: { owner: 'gw-alive', until: at(ERA + 1000) } });
      await h.store.responses.create(renewed);
      await h.store.responses.renewLeases([renewed.id], 'gw-alive', at(ERA + 120_000));
      assert.equal(await h.store.responses.finish(renewed.id, failed, { whenStatus: 'in_progress', lapsedBefore: now }), null);
      assert.equal((await h.store.responses.get(renewed.id))?.status, 'in_progress');
      // An unleased response never lapses.
      const unleased = response();
      await h.store.responses.create(unleased);
      assert.equal(await h.store.responses.finish(unleased.id, failed, { whenStatus: 'in_progress', lapsedBefore: now }), null);
      assert.equal(await h.store.responses.finish(uid('none'), completed, { whenStatus: 'in_progress' }), null);
    });

    it('appendEvents is idempotent on (response, sequence number): a retried batch and a duplicate within one batch keep the first', async () => {
      const id = uid('resp');
      await h.store.responses.appendEvents([event(id, 0), event(id, 1), event(id, 1, { n: 'dup in batch' })]);
      // A retried batch overlapping what was written, with a different payload for 1: no error, no change.
      await h.store.responses.appendEvents([event(id, 1, { n: 'retry' }), event(id, 2)]);
      const all = await h.store.responses.listEvents(id, -1);
      assert.deepEqual(all, [event(id, 0), event(id, 1), event(id, 2)]);
      assert.deepEqual(
        (await h.store.responses.listEvents(id, -1, 2)).map((e) => e.sequenceNumber),
        [0, 1],
      );
      assert.deepEqual(await h.store.responses.listEvents(id, 0, 0), []);
      assert.equal(await h.store.responses.lastSequenceNumber(id), 2);
      assert.equal(await h.store.responses.lastSequenceNumber(uid('none')), -1);
    });

    it('listEvents after a number past the 32-bit range (a huge starting_after) is empty, not an error', async () => {
      const id = uid('resp');
      await h.store.responses.appendEvents([event(id, 0), event(id, 1)]);
      for (const after of [2 ** 31 - 1, 2 ** 31, Number.MAX_SAFE_INTEGER]) {
        assert.deepEqual(await h.store.responses.listEvents(id, after), [], `after ${after}`);
        assert.deepEqual(await h.store.responses.listEvents(id, after, 1), [], `after ${after}, limit 1`);
      }
    });

    it('stores an event whose text holds U+0000 without failing its batch', async () => {
      const id = uid('resp');
      // A literal backslash followed by "u0000" is ordinary text and stays as it is.
      await h.store.responses.appendEvents([event(id, 0, { delta: 'a\u0000b' }), event(id, 1, { delta: 'c\\u0000d' })]);
      const [first, second] = await h.store.responses.listEvents(id, -1);
      assert.match(String(first?.data['delta']), /^a.b$/);
      assert.equal(second?.data['delta'], 'c\\u0000d');
    });

    it('stores an event whose text holds a lone surrogate (an escape JSON allows) without failing its batch; a pair stays', async () => {
      const id = uid('resp');
      await h.store.responses.appendEvents([event(id, 0, { delta: 'a\ud800b', low: '\udc00' }), event(id, 1, { delta: 'c\\ud800d', pair: '\ud83d\ude00' })]);
      const [first, second] = await h.store.responses.listEvents(id, -1);
      assert.match(String(first?.data['delta']), /^a.b$/);
      assert.equal(first?.data['delta'], 'a\ufffdb');
      assert.equal(second?.data['delta'], 'c\\ud800d', 'a literal backslash and "ud800" are text');
      assert.equal(second?.data['pair'], '\ud83d\ude00');
    });

    it('an expired response is absent before it is pruned; prune deletes expired responses and their events, in bounded batches', async () => {
      const org = uid('org');
      const now = ERA + 500_000;
      const expired = [1, 2, 3].map((i) => response({ orgId: org, status: 'completed', expiresAt: at(now - i * 1000) }));
      const exactlyNow = response({ orgId: org, status: 'completed', expiresAt: at(now) });
      const later = response({ orgId: org, status: 'completed', expiresAt: at(now + 1000) });
      const forever = response({ orgId: org, status: 'completed', expiresAt: null });
      const all = [...expired, exactlyNow, later, forever];
      for (const r of all) {
        await h.store.responses.create(r);
        await h.store.responses.appendEvents([event(r.id, 0), event(r.id, 1)]);
      }
      const reader = principal(org, 'someone');
      for (const r of [...expired, exactlyNow]) assert.equal(await h.store.responses.getVisible(reader, r.id, at(now)), null, 'expired is absent');
      assert.equal((await h.store.responses.getVisible(reader, later.id, at(now)))?.id, later.id);
      assert.equal(await h.store.responses.getVisible(principal(uid('org'), 'someone'), later.id, at(now)), null, "another organization's is absent");

      assert.equal(await h.store.responses.prune(at(now), 3), 3);
      assert.equal(await h.store.responses.prune(at(now), 3), 1);
      assert.equal(await h.store.responses.prune(at(now), 3), 0);
      for (const r of [...expired, exactlyNow]) {
        assert.equal(await h.store.responses.get(r.id), null);
        assert.deepEqual(await h.store.responses.listEvents(r.id, -1), []);
      }
      for (const r of [later, forever]) {
        assert.ok(await h.store.responses.get(r.id));
        assert.equal((await h.store.responses.listEvents(r.id, -1)).length, 2);
      }
    });
  });
}
