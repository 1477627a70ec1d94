import assert from 'node:assert/strict';
import type { NewConversationItem, ResponseRecord } from '../../../src/store/types';
import { agentUpsert, at, principal, runRecord, T0, uid, type StoreHandle } from './fixtures';

function item(text: string, idempotencyKey: string | null = null): NewConversationItem {
  return {
    id: uid('msg'),
    type: 'message',
    role: 'user',
    data: { content: [{ type: 'input_text', text }] },
    status: 'completed',
    idempotencyKey,
    responseId: null,
  };
}

export function conversationsContract(h: StoreHandle): void {
  describe('conversations', () => {
    async function conversation(orgId = uid('org'), userId = 'owner', runId: string | null = null): Promise<string> {
      const id = uid('conv');
      await h.store.conversations.create({ id, orgId, userId, runId, metadata: { source: 'test' }, createdAt: at(T0) });
      return id;
    }

    it('creates and reads a conversation', async () => {
      const org = uid('org');
      const id = await conversation(org);
      assert.deepEqual(await h.store.conversations.get(id), {
        id,
        orgId: org,
        userId: 'owner',
        runId: null,
        metadata: { source: 'test' },
        createdAt: at(T0),
        summary: null,
        contextTokens: null,
      });
      assert.equal(await h.store.conversations.get(uid('missing')), null);
    });

    it('one turn at a time: claimTurn is refused while another response holds it, granted once it ends, its deadline passes or its response finished', async () => {
      const id = await conversation();
      const c = h.store.conversations;
      const until = at(T0 + 60_000);
      assert.equal(await c.claimTurn(id, 'resp_a', at(T0), until), true);
      // The same response again (a retried claim) keeps it; another is refused, from any process.
      assert.equal(await c.claimTurn(id, 'resp_a', at(T0), until), true);
      const racing = await Promise.all([c.claimTurn(id, 'resp_b', at(T0 + 1), until), c.claimTurn(id, 'resp_c', at(T0 + 1), until)]);
      assert.deepEqual(racing, [false, false]);
      // Ending the turn appends its items and records the context size, in one write.
      assert.equal(await c.endTurn(id, 'resp_a', [item('question'), item('answer')], 1234), true);
      const after = await c.get(id);
      assert.equal(after?.contextTokens, 1234);
      assert.equal((await c.listItems(id, { order: 'asc', limit: 10 })).length, 2);
      // A turn no longer held cannot end again (nothing appended).
      assert.equal(await c.endTurn(id, 'resp_a', [item('late')], 9), false);
      assert.equal((await c.listItems(id, { order: 'asc', limit: 10 })).length, 2);
      assert.equal((await c.get(id))?.contextTokens, 1234);
      // Free again: of two racing claims exactly one wins.
      const [b, d] = await Promise.all([c.claimTurn(id, 'resp_b', at(T0 + 2), until), c.claimTurn(id, 'resp_d', at(T0 + 2), until)]);
      assert.equal(Number(b) + Number(d), 1);
      const holder = b ? 'resp_b' : 'resp_d';
      // A holder that died before its response existed: free after the turn's deadline, not before.
      assert.equal(await c.claimTurn(id, 'resp_e', at(T0 + 59_000), at(T0 + 120_000)), false);
      assert.equal(await c.claimTurn(id, 'resp_e', at(T0 + 61_000), at(T0 + 120_000)), true);
      assert.equal(await c.endTurn(id, holder, [item('stale writer')], null), false, 'a turn taken over is not ended by its old holder');
      // A holder whose response finished (or was failed by the sweeper) frees the turn before its deadline.
      const holderResponse = uid('resp');
      assert.equal(await c.endTurn(id, 'resp_e', [], null), true);
      assert.equal(await c.claimTurn(id, holderResponse, at(T0 + 62_000), at(T0 + 600_000)), true);
      await h.store.responses.create({
        id: holderResponse,
        orgId: 'o',
        userId: 'u',
        status: 'in_progress',
        model: 'demo',
        conversationId: id,
        previousResponseId: null,
        stored: true,
        body: {},
        inputItems: [],
        createdAt: at(T0),
        updatedAt: at(T0),
        expiresAt: null,
      });
      assert.equal(await c.claimTurn(id, 'resp_f', at(T0 + 63_000), at(T0 + 600_000)), false, 'its response is in progress');
      await h.store.responses.finish(holderResponse, { status: 'failed', body: { status: 'failed' } }, { whenStatus: 'in_progress' });
      assert.equal(await c.claimTurn(id, 'resp_f', at(T0 + 63_000), at(T0 + 600_000)), true, 'its response failed');
      assert.equal((await c.get(id))?.contextTokens, 1234, 'an empty end keeps the last context size');
    });

    it('openTurn: by conversation or previous response, visible to the caller, claimed in one call; run conversations, others’ and unknown ones are not claimed', async () => {
      const org = uid('org');
      const c = h.store.conversations;
      const id = await conversation(org, 'owner');
      await c.append(id, [item('one')]);
      await c.setSummary(
        id,
        { text: 'earlier', through: 1, itemId: uid('cmp') },
        { id: uid('cmp'), type: 'compaction', role: null, data: { summary: 'earlier' }, status: 'completed', idempotencyKey: null, responseId: null },
      );
      const owner = principal(org, 'owner');
      const now = at(T0);
      const until = at(T0 + 60_000);
      // The response record a claim inserts (its conversation filled in by the store).
      const pending = (key: string): ResponseRecord => ({
        id: `${key}_${id}`,
        orgId: org,
        userId: 'owner',
        status: 'in_progress',
        model: 'demo',
        conversationId: null,
        previousResponseId: null,
        stored: true,
        body: { object: 'response', status: 'in_progress' },
        inputItems: [],
        createdAt: now,
        updatedAt: now,
        expiresAt: null,
        lease: { owner: 'me', until },
      });
      const opened = await c.openTurn(owner, { conversationId: id }, pending('resp_1'), now, until);
      assert.equal(opened.kind, 'claimed');
      assert.ok(opened.kind === 'claimed');
      assert.deepEqual(opened.conversation.summary, { text: 'earlier', through: 1, itemId: opened.conversation.summary?.itemId });
      // Items read with the claim (where the store can) are those after the summary, as listItems gives them.
      const after = await c.listItems(id, { order: 'asc', afterPosition: 1, limit: 100 });
      assert.equal(after.length, 1, 'the compaction item');
      if (opened.items) assert.deepEqual(opened.items, after);
      // The claim wrote the response record, in the conversation.
      const record = await h.store.responses.get(pending('resp_1').id);
      assert.equal(record?.status, 'in_progress');
      assert.equal(record?.conversationId, id);
      assert.deepEqual(record?.body['conversation'], { id });
      assert.deepEqual(record?.lease, { owner: 'me', until });
      // Held: refused to another response, from the same or another caller who may see it.
      assert.deepEqual(await c.openTurn(principal(org, 'boss', 'admin'), { conversationId: id }, pending('resp_2'), now, until), {
        kind: 'locked',
        conversationId: id,
      });
      // Not visible: another member, another organization, an unknown id.
      assert.deepEqual(await c.openTurn(principal(org, 'someone'), { conversationId: id }, pending('resp_3'), now, until), { kind: 'not_found' });
      assert.deepEqual(await c.openTurn(principal(uid('org'), 'owner', 'admin'), { conversationId: id }, pending('resp_3'), now, until), { kind: 'not_found' });
      assert.deepEqual(await c.openTurn(owner, { conversationId: uid('missing') }, pending('resp_3'), now, until), { kind: 'not_found' });
      for (const key of ['resp_2', 'resp_3']) assert.equal(await h.store.responses.get(pending(key).id), null, 'no record without the claim');
      assert.equal(await c.endTurn(id, pending('resp_1').id, [], null), true);
      // By previous response: stored, same organization, unexpired.
      const responseId = uid('resp');
      const base = {
        orgId: org,
        userId: 'owner',
        status: 'completed' as const,
        model: 'demo',
        conversationId: id,
        previousResponseId: null,
        body: {},
        inputItems: [],
        createdAt: now,
        updatedAt: now,
      };
      await h.store.responses.create({ ...base, id: responseId, stored: true, expiresAt: at(T0 + 3_600_000) });
      const byPrevious = await c.openTurn(owner, { previousResponseId: responseId }, pending('resp_4'), now, until);
      assert.equal(byPrevious.kind, 'claimed');
      assert.equal((await h.store.responses.get(pending('resp_4').id))?.conversationId, id, 'the previous response’s conversation');
      // Abandoned before it began: the record goes and the turn is free.
      await c.abandonTurn(id, pending('resp_4').id);
      assert.equal(await h.store.responses.get(pending('resp_4').id), null);
      assert.equal(await c.claimTurn(id, 'resp_after', now, until), true);
      assert.equal(await c.endTurn(id, 'resp_after', [], null), true);
      assert.deepEqual(
        await c.openTurn(owner, { previousResponseId: responseId }, pending('resp_5'), at(T0 + 3_600_001), until),
        { kind: 'not_found' },
        'expired',
      );
      assert.deepEqual(await c.openTurn(principal(uid('org'), 'owner'), { previousResponseId: responseId }, pending('resp_5'), now, until), {
        kind: 'not_found',
      });
      const unstored = uid('resp');
      await h.store.responses.create({ ...base, id: unstored, stored: false, expiresAt: null });
      assert.deepEqual(await c.openTurn(owner, { previousResponseId: unstored }, pending('resp_5'), now, until), { kind: 'not_found' });
      // A run's conversation is never claimed.
      const agentId = uid('agent');
      await h.store.agents.upsert(agentUpsert({ id: agentId, orgId: org, createdBy: 'owner' }));
      const runId = uid('run');
      const runConversation = uid('conv');
      await h.store.runs.create(runRecord({ id: runId, agentId, orgId: org, userId: 'owner', conversationId: runConversation }), {
        conversation: { id: runConversation, orgId: org, userId: 'owner', runId, metadata: {}, createdAt: now },
      });
      assert.deepEqual(await c.openTurn(owner, { conversationId: runConversation }, pending('resp_6'), now, until), {
        kind: 'run',
        conversationId: runConversation,
      });
      assert.equal(await c.claimTurn(runConversation, 'resp_7', now, until), true, 'openTurn took nothing');
    });

    it('setSummary appends the compaction item and sets the running summary together', async () => {
      const id = await conversation();
      await h.store.conversations.append(id, [item('one'), item('two')]);
      const compaction: NewConversationItem = {
        id: uid('cmp'),
        type: 'compaction',
        role: null,
        data: { type: 'compaction', summary: 'one and two', through: 2 },
        status: 'completed',
        idempotencyKey: null,
        responseId: null,
      };
      await h.store.conversations.setSummary(id, { text: 'one and two', through: 2, itemId: compaction.id }, compaction);
      assert.deepEqual((await h.store.conversations.get(id))?.summary, { text: 'one and two', through: 2, itemId: compaction.id });
      const items = await h.store.conversations.listItems(id, { order: 'asc', limit: 10 });
      assert.deepEqual(
        items.map((i) => [i.type, i.position]),
        [
          ['message', 1],
          ['message', 2],
          ['compaction', 3],
        ],
      );
    });

    it('concurrent appends get unique, gap-free positions, each call in order', async () => {
      const id = await conversation();
      const calls = Array.from({ length: 12 }, (_, c) => Array.from({ length: 1 + (c % 3) }, (_, i) => item(`c${c}-i${i}`)));
      const results = await Promise.all(calls.map((items) => h.store.conversations.append(id, items)));
      const total = calls.reduce((n, items) => n + items.length, 0);
      for (const [c, appended] of results.entries()) {
        assert.deepEqual(
          appended.map((r) => r.id),
          calls[c]?.map((i) => i.id),
        );
        // Items of one call keep their order (a backend may interleave racing calls, so no contiguity).
        for (let i = 1; i < appended.length; i++) assert.ok((appended[i]?.position ?? 0) > (appended[i - 1]?.position ?? 0));
      }
      const positions = results
        .flat()
        .map((r) => r.position)
        .sort((a, b) => a - b);
      assert.deepEqual(
        positions,
        Array.from({ length: total }, (_, i) => positions[0]! + i),
      );
      const listed = await h.store.conversations.listItems(id, { order: 'asc', limit: 100 });
      assert.deepEqual(
        listed.map((r) => r.position),
        positions,
      );
    });

    it('an idempotency key appends once, also under concurrent appenders and within one call', async () => {
      const id = await conversation();
      const [first] = await h.store.conversations.append(id, [item('hello', 'step-1')]);
      const again = await h.store.conversations.append(id, [item('hello again', 'step-1'), item('new')]);
      assert.deepEqual(again[0], first, 'the existing item is returned in its place');
      assert.equal(again[1]?.position, (first?.position ?? 0) + 1);

      const racers = await Promise.all(Array.from({ length: 6 }, (_, i) => h.store.conversations.append(id, [item(`race ${i}`, 'step-2')])));
      const ids = new Set(racers.map((r) => r[0]?.id));
      assert.equal(ids.size, 1, 'every racer sees the one stored item');

      const dup = await h.store.conversations.append(id, [item('a', 'step-3'), item('b', 'step-3')]);
      assert.equal(dup[0]?.id, dup[1]?.id);

      const all = await h.store.conversations.listItems(id, { order: 'asc', limit: 100 });
      assert.equal(all.length, 4);
      assert.deepEqual(
        all.map((r) => r.idempotencyKey),
        ['step-1', null, 'step-2', 'step-3'],
      );
      assert.deepEqual(
        all.map((r) => r.position),
        [1, 2, 3, 4],
      );
    });

    it('listItems orders ascending or descending, after a position (exclusive), with a limit; getItem', async () => {
      const id = await conversation();
      const appended = await h.store.conversations.append(
        id,
        ['a', 'b', 'c', 'd', 'e'].map((t) => item(t)),
      );
      const text = (r: { data: Record<string, unknown> }): string => ((r.data['content'] as { text: string }[])[0] ?? { text: '' }).text;
      assert.deepEqual((await h.store.conversations.listItems(id, { order: 'asc', limit: 10 })).map(text), ['a', 'b', 'c', 'd', 'e']);
      assert.deepEqual((await h.store.conversations.listItems(id, { order: 'desc', limit: 2 })).map(text), ['e', 'd']);
      const c = appended[2]!;
      assert.deepEqual((await h.store.conversations.listItems(id, { order: 'asc', afterPosition: c.position, limit: 10 })).map(text), ['d', 'e']);
      assert.deepEqual((await h.store.conversations.listItems(id, { order: 'desc', afterPosition: c.position, limit: 10 })).map(text), ['b', 'a']);
      assert.deepEqual(await h.store.conversations.getItem(id, c.id), c);
      assert.equal(await h.store.conversations.getItem(uid('other'), c.id), null);
      assert.deepEqual(await h.store.conversations.append(id, []), []);
    });

    it('getVisible: owner, org admin, or whoever may read the backing run; never another org', async () => {
      const org = uid('org');
      const agentId = uid('agent');
      await h.store.agents.upsert(agentUpsert({ id: agentId, orgId: org, createdBy: 'alice', sharedWith: [{ user: 'viewer', permissions: ['view'] }] }));
      const run = runRecord({ orgId: org, agentId, userId: 'alice' });
      await h.store.runs.create(run);
      const id = await conversation(org, 'alice', run.id);
      const plain = await conversation(org, 'alice');
      assert.equal((await h.store.conversations.getVisible(principal(org, 'alice'), id))?.id, id);
      assert.equal((await h.store.conversations.getVisible(principal(org, 'root', 'admin'), plain))?.id, plain);
      assert.equal((await h.store.conversations.getVisible(principal(org, 'viewer'), id))?.id, id);
      assert.equal(await h.store.conversations.getVisible(principal(org, 'viewer'), plain), null);
      assert.equal(await h.store.conversations.getVisible(principal(org, 'stranger'), id), null);
      assert.equal(await h.store.conversations.getVisible(principal(uid('org'), 'alice', 'admin'), id), null);
    });
  });
}
