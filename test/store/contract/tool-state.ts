import assert from 'node:assert/strict';
import { openTestStore, type TestStoreDriver } from '../../helpers/store';
import { at, T0, uid, type StoreHandle } from './fixtures';

export function toolStateContract(h: StoreHandle, driver: TestStoreDriver): void {
  describe('tool state', () => {
    it('keeps one value per (organization, conversation, key): set replaces, delete removes, others untouched', async () => {
      const conversation = uid('conv');
      const org = uid('org');
      assert.equal(await h.store.toolState.get(org, conversation, 'egress.profile'), null);
      await h.store.toolState.set(org, conversation, 'egress.profile', 'office', at(T0));
      await h.store.toolState.set(org, conversation, 'egress.profile', 'lab', at(T0 + 1));
      await h.store.toolState.set(org, conversation, 'other', 'x', at(T0));
      // The same conversation id under another organization is another entry (ids are not trusted to be global).
      await h.store.toolState.set('org-elsewhere', conversation, 'egress.profile', 'theirs', at(T0));
      assert.equal(await h.store.toolState.get(org, conversation, 'egress.profile'), 'lab');
      assert.equal(await h.store.toolState.get('org-elsewhere', conversation, 'egress.profile'), 'theirs');

      assert.equal(await h.store.toolState.delete(org, conversation, 'egress.profile'), true);
      assert.equal(await h.store.toolState.delete(org, conversation, 'egress.profile'), false, 'nothing left to delete');
      assert.equal(await h.store.toolState.get(org, conversation, 'egress.profile'), null);
      assert.equal(await h.store.toolState.get(org, conversation, 'other'), 'x');
      assert.equal(await h.store.toolState.get('org-elsewhere', conversation, 'egress.profile'), 'theirs');
    });

    it('forgets a conversation: one key, or all of its keys, in every organization', async () => {
      const conversation = uid('conv');
      const kept = uid('conv');
      await h.store.toolState.set('org-a', conversation, 'egress.profile', 'office', at(T0));
      await h.store.toolState.set('org-a', conversation, 'browser', '{}', at(T0));
      await h.store.toolState.set('org-b', conversation, 'egress.profile', 'lab', at(T0));
      await h.store.toolState.set('org-a', kept, 'egress.profile', 'office', at(T0));

      assert.equal(await h.store.toolState.forget(conversation, 'egress.profile'), 2);
      assert.equal(await h.store.toolState.get('org-a', conversation, 'browser'), '{}');
      assert.equal(await h.store.toolState.forget(conversation), 1);
      assert.equal(await h.store.toolState.get('org-a', conversation, 'browser'), null);
      assert.equal(await h.store.toolState.get('org-a', kept, 'egress.profile'), 'office');
    });

    it('is pruned with its conversation, or when not written since the cutoff and its conversation is gone; a live conversation keeps it', async () => {
      const t = await openTestStore(driver);
      try {
        const s = t.store;
        const org = uid('org');
        const live = uid('conv');
        await s.conversations.create({ id: live, orgId: org, userId: 'u', runId: null, metadata: {}, createdAt: at(T0 + 20_000) });
        const stateless = uid('resp-scope');
        const recent = uid('resp-scope');
        await s.toolState.set(org, live, 'egress.profile', 'office', at(T0));
        await s.toolState.set(org, stateless, 'egress.profile', 'office', at(T0));
        await s.toolState.set(org, recent, 'egress.profile', 'office', at(T0 + 20_000));

        // A conversation retention deletes takes its tool state along, however recently written.
        const idle = uid('conv');
        await s.conversations.create({ id: idle, orgId: org, userId: 'u', runId: null, metadata: {}, createdAt: at(T0) });
        await s.toolState.set(org, idle, 'egress.profile', 'office', at(T0 + 20_000));
        await s.toolState.set(org, idle, 'browser', '{}', at(T0 + 20_000));

        const pruned = await s.prune(at(T0 + 10_000));
        assert.deepEqual(pruned.gone, [{ orgId: org, id: idle }]);
        assert.equal(await s.toolState.get(org, idle, 'egress.profile'), null, 'its conversation went');
        assert.equal(await s.toolState.get(org, idle, 'browser'), null, 'every key of it');
        assert.equal(await s.toolState.get(org, live, 'egress.profile'), 'office', 'its conversation is still there');
        assert.equal(await s.toolState.get(org, stateless, 'egress.profile'), null, 'old, and no conversation of that id');
        assert.equal(await s.toolState.get(org, recent, 'egress.profile'), 'office', 'written after the cutoff');
      } finally {
        await t.cleanup();
      }
    });
  });
}
