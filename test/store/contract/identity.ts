import assert from 'node:assert/strict';
import { at, T0, uid, type StoreHandle } from './fixtures';

export function identityContract(h: StoreHandle): void {
  describe('organizations, users, groups', () => {
    it('upserts replace earlier values and list reads them back', async () => {
      const org = uid('org');
      await h.store.organizations.upsert({ id: org, name: 'First', models: ['a'], rateLimit: null, dlp: null });
      await h.store.organizations.upsert({ id: org, name: 'Second', models: ['a', 'b'], rateLimit: { requestsPerMinute: 5 }, dlp: null });
      const got = await h.store.organizations.get(org);
      assert.equal(got?.name, 'Second');
      assert.deepEqual(got?.models, ['a', 'b']);
      assert.deepEqual(got?.rateLimit, { requestsPerMinute: 5 });
      assert.match(got?.updatedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok((await h.store.organizations.list()).some((o) => o.id === org));
      assert.equal(await h.store.organizations.get(uid('missing')), null);

      const before = await h.store.users.count();
      const u = uid('u');
      await h.store.users.upsert({ id: u, orgId: org, name: 'Ann', role: 'member' });
      await h.store.users.upsert({ id: u, orgId: org, name: 'Ann B', role: 'admin' });
      assert.deepEqual(await h.store.users.get(u), { id: u, orgId: org, name: 'Ann B', role: 'admin' });
      assert.equal(await h.store.users.count(), before + 1);
      assert.deepEqual(
        (await h.store.users.listByOrg(org)).map((x) => x.id),
        [u],
      );
    });

    it('group upsert replaces members; groupIdsOf reads membership', async () => {
      const org = uid('org');
      await h.store.groups.upsert({ id: 'g1', orgId: org, name: 'G1', members: ['ann', 'bob'] });
      await h.store.groups.upsert({ id: 'g2', orgId: org, name: 'G2', members: ['ann'] });
      await h.store.groups.upsert({ id: 'g1', orgId: uid('other'), name: 'Other org', members: ['bob'] });
      assert.deepEqual(await h.store.groups.groupIdsOf(org, 'ann'), ['g1', 'g2']);
      await h.store.groups.upsert({ id: 'g1', orgId: org, name: 'G1 renamed', members: ['bob'] });
      assert.deepEqual(await h.store.groups.groupIdsOf(org, 'ann'), ['g2']);
      assert.deepEqual(await h.store.groups.groupIdsOf(org, 'bob'), ['g1']);
      const groups = await h.store.groups.listByOrg(org);
      assert.deepEqual(
        groups.map((g) => [g.id, g.name, g.members]),
        [
          ['g1', 'G1 renamed', ['bob']],
          ['g2', 'G2', ['ann']],
        ],
      );
    });
  });

  describe('keys', () => {
    it('creates once per hash, resolves with user and groups, revokes, reports revokedSince', async () => {
      const org = uid('org');
      const user = uid('u');
      await h.store.users.upsert({ id: user, orgId: org, name: 'Kim', role: 'member' });
      await h.store.groups.upsert({ id: 'ops', orgId: org, name: 'Ops', members: [user] });
      const hash = uid('hash');
      const key = {
        id: uid('key'),
        orgId: org,
        userId: user,
        name: 'ci',
        hash,
        prefix: 'agw_abcd',
        source: 'cli' as const,
        createdAt: at(T0),
        lastUsedAt: null,
        revokedAt: null,
        expiresAt: null,
        models: null,
        budgets: [],
      };
      const activeBefore = await h.store.keys.countActive();
      assert.equal(await h.store.keys.create(key), true);
      assert.equal(await h.store.keys.create({ ...key, id: uid('key'), name: 'again' }), false, 'same hash is left as it is');
      assert.equal(await h.store.keys.countActive(), activeBefore + 1);

      const resolved = await h.store.keys.resolve(hash);
      assert.deepEqual(resolved, { key, user: { id: user, orgId: org, name: 'Kim', role: 'member' }, groups: ['ops'] });
      assert.equal(await h.store.keys.resolve(uid('unknown')), null);

      await h.store.keys.touch([key.id], at(T0 + 5000));
      await h.store.keys.touch([key.id], at(T0 + 1000));
      assert.equal((await h.store.keys.get(key.id))?.lastUsedAt, at(T0 + 5000), 'an older batch does not move lastUsedAt back');
      await h.store.keys.touch([], at(T0));

      const revokedAt = at(Date.now() + 3_600_000);
      assert.equal(await h.store.keys.revoke(key.id, revokedAt), true);
      assert.equal(await h.store.keys.revoke(key.id, revokedAt), false, 'already revoked');
      assert.equal(await h.store.keys.revoke(uid('nokey'), revokedAt), false);
      assert.equal(await h.store.keys.resolve(hash), null);
      assert.equal((await h.store.keys.get(key.id))?.revokedAt, revokedAt);
      assert.equal(await h.store.keys.countActive(), activeBefore);
      assert.ok((await h.store.keys.revokedSince(revokedAt)).includes(key.id), 'inclusive');
      assert.ok(!(await h.store.keys.revokedSince(at(Date.parse(revokedAt) + 1))).includes(key.id));
      assert.deepEqual(
        (await h.store.keys.listByOrg(org)).map((k) => k.id),
        [key.id],
      );
    });
  });

  describe('settings', () => {
    it('setIfAbsent: first writer wins, also when writers race', async () => {
      const name = uid('setting');
      assert.equal(await h.store.settings.get(name), null);
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => h.store.settings.setIfAbsent(name, `v${i}`)));
      const winner = results[0];
      assert.ok(winner !== undefined && /^v\d$/.test(winner));
      assert.deepEqual(new Set(results), new Set([winner]));
      assert.equal(await h.store.settings.get(name), winner);
      assert.equal(await h.store.settings.setIfAbsent(name, 'later'), winner);
    });
  });
}
