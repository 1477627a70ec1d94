import assert from 'node:assert/strict';
import type { DashboardRecord } from '../../../src/store/tool-records';
import { at, T0, uid, type StoreHandle } from './fixtures';

function dashboard(overrides: Partial<DashboardRecord> & { orgId: string }): DashboardRecord {
  return {
    id: uid('dash'),
    title: 'Sales',
    spec: { mark: 'bar', encoding: { x: { field: 'region', type: 'nominal' } } },
    data: [{ region: 'north', 'price.usd': 3, $amount: 1 }],
    version: 1,
    createdBy: 'u1',
    conversationId: 'conv-1',
    createdAt: at(T0),
    updatedAt: at(T0),
    ...overrides,
  };
}

export function dashboardsContract(h: StoreHandle): void {
  describe('dashboards', () => {
    it('stores a dashboard as given (keys with dots and dollars included) and reads it back per organization', async () => {
      const org = uid('org');
      const d = dashboard({ orgId: org });
      await h.store.dashboards.create(d);
      assert.deepEqual(await h.store.dashboards.get(d.id), d);
      assert.deepEqual(await h.store.dashboards.getInOrg(org, d.id), d);
      assert.equal(await h.store.dashboards.getInOrg(uid('org'), d.id), null);
      assert.equal(await h.store.dashboards.get(uid('dash')), null);
    });

    it('updates compare-and-set on the version, keeping what the patch leaves out', async () => {
      const org = uid('org');
      const d = dashboard({ orgId: org });
      await h.store.dashboards.create(d);
      const updated = await h.store.dashboards.update(org, d.id, { data: [{ region: 'south' }] }, 1, at(T0 + 5000));
      assert.deepEqual(updated, { ...d, data: [{ region: 'south' }], version: 2, updatedAt: at(T0 + 5000) });
      // A second writer holding version 1 loses; another organization cannot update it.
      assert.equal(await h.store.dashboards.update(org, d.id, { title: 'Late' }, 1, at(T0 + 6000)), null);
      assert.equal(await h.store.dashboards.update(uid('org'), d.id, { title: 'Theirs' }, 2, at(T0 + 6000)), null);
      const retitled = await h.store.dashboards.update(org, d.id, { title: 'Sales by region', spec: { mark: 'line' } }, 2, at(T0 + 7000));
      assert.equal(retitled?.title, 'Sales by region');
      assert.deepEqual(retitled?.spec, { mark: 'line' });
      assert.deepEqual(retitled?.data, [{ region: 'south' }]);
      assert.equal(retitled?.version, 3);
    });

    it('lists the organization’s dashboards, most recently updated first, and deletes them', async () => {
      const org = uid('org');
      const old = dashboard({ orgId: org, title: 'Old', updatedAt: at(T0) });
      const recent = dashboard({ orgId: org, title: 'Recent', updatedAt: at(T0 + 60_000) });
      await h.store.dashboards.create(old);
      await h.store.dashboards.create(recent);
      await h.store.dashboards.create(dashboard({ orgId: uid('org') }));
      const list = await h.store.dashboards.listByOrg(org, 10);
      assert.deepEqual(
        list.map((x) => x.title),
        ['Recent', 'Old'],
      );
      assert.ok(!('spec' in list[0]!) && !('data' in list[0]!), 'listings carry no spec or data');
      assert.equal((await h.store.dashboards.listByOrg(org, 1)).length, 1);
      assert.equal(await h.store.dashboards.delete(uid('org'), old.id), false);
      assert.equal(await h.store.dashboards.delete(org, old.id), true);
      assert.equal(await h.store.dashboards.get(old.id), null);
      assert.equal(await h.store.dashboards.delete(org, old.id), false);
    });
  });
}
