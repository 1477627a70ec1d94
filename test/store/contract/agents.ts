import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Permission } from '../../../src/config/types';
import { agentUpsert, principal, uid, type StoreHandle } from './fixtures';

const ALL: Permission[] = ['view', 'edit', 'delete', 'share'];

export function agentsContract(h: StoreHandle): void {
  describe('agents: versions and soft delete', () => {
    it('makes a new version only when the definition hash changes', async () => {
      const org = uid('org');
      const id = uid('agent');
      const first = await h.store.agents.upsert(agentUpsert({ id, orgId: org, instructions: 'v1' }));
      assert.equal(first.changed, true);
      assert.equal(first.agent.version, 1);
      assert.equal(first.agent.instructions, 'v1');
      assert.deepEqual(first.agent.inputs, [{ label: 'topic', required: true }]);

      const same = await h.store.agents.upsert(agentUpsert({ id, orgId: org, instructions: 'v1' }));
      assert.equal(same.changed, false);
      assert.equal(same.agent.version, 1);

      const second = await h.store.agents.upsert(agentUpsert({ id, orgId: org, instructions: 'v2', definitionHash: 'hash-2' }));
      assert.equal(second.changed, true);
      assert.equal(second.agent.version, 2);
      assert.equal(second.agent.createdAt, first.agent.createdAt);

      const v1 = await h.store.agents.getVersion(id, 1);
      const v2 = await h.store.agents.getVersion(id, 2);
      assert.equal(v1?.definition.instructions, 'v1');
      assert.equal(v1?.definitionHash, 'hash-1');
      assert.equal(v2?.definition.instructions, 'v2');
      assert.equal(await h.store.agents.getVersion(id, 3), null);
      assert.equal((await h.store.agents.get(id))?.version, 2);
    });

    it('concurrent upserts of one new definition make one version', async () => {
      const id = uid('agent');
      const org = uid('org');
      const results = await Promise.all(Array.from({ length: 5 }, () => h.store.agents.upsert(agentUpsert({ id, orgId: org, definitionHash: 'h-new' }))));
      assert.equal(results.filter((r) => r.changed).length, 1);
      const again = await Promise.all(Array.from({ length: 5 }, () => h.store.agents.upsert(agentUpsert({ id, orgId: org, definitionHash: 'h-next' }))));
      assert.equal(again.filter((r) => r.changed).length, 1);
      assert.equal((await h.store.agents.get(id))?.version, 2);
    });

    it('softDeleteExcept deletes the others; a later upsert undeletes', async () => {
      const org = uid('org');
      const keep = uid('keep');
      const drop = uid('drop');
      await h.store.agents.upsert(agentUpsert({ id: keep, orgId: org }));
      await h.store.agents.upsert(agentUpsert({ id: drop, orgId: org }));
      const active = (await h.store.agents.listActive()).map((a) => a.id);
      const deletedAt = new Date().toISOString();
      const deleted = await h.store.agents.softDeleteExcept([keep], deletedAt);
      assert.ok(deleted.includes(drop));
      assert.ok(!deleted.includes(keep));
      assert.deepEqual(new Set(deleted), new Set(active.filter((id) => id !== keep)));
      assert.deepEqual(await h.store.agents.softDeleteExcept([keep], deletedAt), [], 'already deleted ones are not reported again');

      assert.equal((await h.store.agents.get(drop))?.deletedAt, deletedAt, 'system access still reads it');
      assert.equal(await h.store.agents.getVisible(principal(org, 'u-creator'), drop), null);
      assert.deepEqual(
        (await h.store.agents.listActive()).map((a) => a.id),
        [keep],
      );

      const back = await h.store.agents.upsert(agentUpsert({ id: drop, orgId: org }));
      assert.equal(back.agent.deletedAt, null);
      assert.equal(back.agent.version, 1, 'same definition: no new version');
      assert.ok(await h.store.agents.getVisible(principal(org, 'u-creator'), drop));
    });
  });

  describe('agents: visibility and permissions computed in the query', () => {
    const org = uid('org');
    const otherOrg = uid('org');
    const shared = uid('a-shared');
    const privateAgent = uid('a-private');
    const foreign = uid('a-foreign');
    const gone = uid('a-gone');

    before(async () => {
      await h.store.agents.upsert(
        agentUpsert({
          id: shared,
          orgId: org,
          createdBy: 'alice',
          sharedWith: [
            { user: 'bob', permissions: ['view'] },
            { group: 'finance', permissions: ['view', 'edit'] },
            { group: 'auditors', permissions: ['share', 'view'] },
          ],
        }),
      );
      await sleep(5); // distinct createdAt so "newest first" is observable
      await h.store.agents.upsert(agentUpsert({ id: privateAgent, orgId: org, createdBy: 'carol' }));
      // Same user ids in another organization: never visible across organizations.
      await h.store.agents.upsert(agentUpsert({ id: foreign, orgId: otherOrg, createdBy: 'alice', sharedWith: [{ user: 'bob', permissions: ['view'] }] }));
      await h.store.agents.upsert(agentUpsert({ id: gone, orgId: org, createdBy: 'alice' }));
      await h.store.agents.softDeleteExcept([shared, privateAgent, foreign], new Date().toISOString());
    });

    async function perms(p: ReturnType<typeof principal>, id: string): Promise<Permission[] | null> {
      return (await h.store.agents.getVisible(p, id))?.permissions ?? null;
    }

    it('creator holds all four permissions', async () => {
      assert.deepEqual(await perms(principal(org, 'alice'), shared), ALL);
    });

    it('a user share grants its permissions', async () => {
      assert.deepEqual(await perms(principal(org, 'bob'), shared), ['view']);
      assert.equal(await perms(principal(org, 'bob'), privateAgent), null);
    });

    it('group shares grant theirs; several apply as a union in canonical order', async () => {
      assert.deepEqual(await perms(principal(org, 'dave', 'member', ['finance']), shared), ['view', 'edit']);
      assert.deepEqual(await perms(principal(org, 'bob', 'member', ['finance', 'auditors']), shared), ['view', 'edit', 'share']);
      assert.equal(await perms(principal(org, 'erin', 'member', ['marketing']), shared), null);
    });

    it('org admins hold all four on every agent of their organization only', async () => {
      const admin = principal(org, 'root', 'admin');
      assert.deepEqual(await perms(admin, shared), ALL);
      assert.deepEqual(await perms(admin, privateAgent), ALL);
      assert.equal(await perms(admin, foreign), null);
      assert.equal(await perms(principal(otherOrg, 'root', 'admin'), shared), null);
    });

    it('other organizations never see an agent, even with matching user ids', async () => {
      assert.equal(await perms(principal(otherOrg, 'alice'), shared), null);
      assert.deepEqual(await perms(principal(otherOrg, 'bob'), foreign), ['view']);
    });

    it('deleted agents are invisible, even to creator and admin', async () => {
      assert.equal(await perms(principal(org, 'alice'), gone), null);
      assert.equal(await perms(principal(org, 'root', 'admin'), gone), null);
      const listed = await h.store.agents.listVisible(principal(org, 'root', 'admin'), 100);
      assert.ok(!listed.some((a) => a.id === gone));
    });

    it('listVisible returns what the principal may see, newest first, at most limit', async () => {
      const admin = await h.store.agents.listVisible(principal(org, 'root', 'admin'), 100);
      assert.deepEqual(
        admin.map((a) => a.id),
        [privateAgent, shared],
      );
      assert.deepEqual(
        admin.map((a) => a.permissions),
        [ALL, ALL],
      );
      const bob = await h.store.agents.listVisible(principal(org, 'bob'), 100);
      assert.deepEqual(
        bob.map((a) => [a.id, a.permissions]),
        [[shared, ['view']]],
      );
      assert.deepEqual(
        (await h.store.agents.listVisible(principal(org, 'root', 'admin'), 1)).map((a) => a.id),
        [privateAgent],
      );
      assert.deepEqual(await h.store.agents.listVisible(principal(org, 'nobody'), 100), []);
    });
  });
}
