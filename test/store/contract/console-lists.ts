// The console's list reads (issue 20): keys with expiry, allow-list and budgets listed per
// organization or user; runs listed with visibility decided in the query; stored responses listed per
// caller; audit records filtered and read in either order. Every page walk checks no gap and no dupe.
import assert from 'node:assert/strict';
import type { Store } from '../../../src/store/port';
import type { ApiKeyRecord, AuditQuery, AuditRecord, Principal, ResponseRecord, RunListQuery, RunRecord } from '../../../src/store/types';
import { agentUpsert, at, auditRecord, principal, runRecord, T0, uid, type StoreHandle } from './fixtures';

function key(orgId: string, userId: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: uid('key'),
    orgId,
    userId,
    name: 'k',
    hash: uid('hash'),
    prefix: 'agw_abcd',
    source: 'api',
    createdAt: at(T0),
    lastUsedAt: null,
    revokedAt: null,
    expiresAt: null,
    models: null,
    budgets: [],
    ...overrides,
  };
}

const LIST: Omit<RunListQuery, 'limit'> = { agentId: null, status: null, createdAfter: null, createdBefore: null, after: null };

/** Keyset-walks every page of the runs a principal may see. */
async function walkRuns(store: Store, who: Principal, limit: number, filters: Partial<RunListQuery> = {}): Promise<string[][]> {
  const pages: string[][] = [];
  let after: RunListQuery['after'] = null;
  for (;;) {
    const page = await store.runs.listVisible(who, { ...LIST, ...filters, limit, after });
    pages.push(page.map((r) => r.id));
    const last = page[page.length - 1];
    if (page.length < limit || !last) return pages;
    after = { createdAt: last.createdAt, id: last.id };
  }
}

function newestFirst(runs: readonly RunRecord[]): string[] {
  return [...runs].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1)).map((r) => r.id);
}

async function walkAudit(store: Store, query: Omit<AuditQuery, 'after' | 'limit'>, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let after: AuditQuery['after'] = null;
  for (;;) {
    const page = await store.audit.list({ ...query, limit, after });
    ids.push(...page.map((r) => r.id));
    const last = page[page.length - 1];
    if (page.length < limit || !last) return ids;
    after = { at: last.at, id: last.id };
  }
}

export function consoleListsContract(h: StoreHandle): void {
  describe('console: keys', () => {
    it('round-trips expiry, allow-list and budgets; lists by organization or user, revoked only when asked', async () => {
      const org = uid('org');
      const ann = key(org, 'ann', {
        createdAt: at(T0),
        expiresAt: at(T0 + 86_400_000),
        models: ['demo', 'gpt'],
        budgets: [
          { metric: 'tokens', period: 'day', limit: 1000 },
          { metric: 'cost', period: 'month', limit: 2.5 },
        ],
      });
      const annRevoked = key(org, 'ann', { createdAt: at(T0 + 1000) });
      const bob = key(org, 'bob', { createdAt: at(T0 + 2000) });
      const elsewhere = key(uid('org'), 'ann');
      await h.store.users.upsert({ id: 'ann', orgId: org, name: 'Ann', role: 'member' });
      for (const k of [ann, annRevoked, bob, elsewhere]) assert.equal(await h.store.keys.create(k), true);
      await h.store.keys.revoke(annRevoked.id, at(T0 + 5000));

      assert.deepEqual(await h.store.keys.get(ann.id), ann);
      assert.deepEqual((await h.store.keys.resolve(ann.hash))?.key, ann);
      const ids = async (userId: string | null, includeRevoked: boolean, limit = 10) =>
        (await h.store.keys.list({ orgId: org, userId, includeRevoked }, limit)).map((k) => k.id);
      assert.deepEqual(await ids(null, false), [ann.id, bob.id]);
      assert.deepEqual(await ids(null, true), [ann.id, annRevoked.id, bob.id]);
      assert.deepEqual(await ids('ann', false), [ann.id]);
      assert.deepEqual(await ids('ann', true), [ann.id, annRevoked.id]);
      assert.deepEqual(await ids('carl', true), []);
      assert.deepEqual(await ids(null, true, 2), [ann.id, annRevoked.id], 'at most limit');
      const listed = await h.store.keys.list({ orgId: org, userId: 'ann', includeRevoked: true }, 10);
      assert.equal(listed[1]?.revokedAt, at(T0 + 5000));
      assert.deepEqual(listed[0]?.budgets, ann.budgets);
    });
  });

  describe('console: runs listed with visibility in the query', () => {
    const org = uid('org');
    const shared = uid('agent');
    const byGroup = uid('agent');
    const privateAgent = uid('agent');
    const deleted = uid('agent');
    const all: RunRecord[] = [];
    const admin = principal(org, 'boss', 'admin');
    const member = principal(org, 'mia', 'member', ['team']);

    before(async () => {
      await h.store.agents.upsert(
        agentUpsert({ id: shared, orgId: org, name: 'Shared', createdBy: 'boss', sharedWith: [{ user: 'mia', permissions: ['view'] }] }),
      );
      await h.store.agents.upsert(
        agentUpsert({ id: byGroup, orgId: org, name: 'Grouped', createdBy: 'boss', sharedWith: [{ group: 'team', permissions: ['view'] }] }),
      );
      await h.store.agents.upsert(agentUpsert({ id: privateAgent, orgId: org, name: 'Private', createdBy: 'boss' }));
      await h.store.agents.upsert(agentUpsert({ id: deleted, orgId: org, name: 'Gone', createdBy: 'mia' }));
      // Soft-deletes `deleted` alone (the store is shared with the other suites' agents).
      const keep = (await h.store.agents.listActive()).map((a) => a.id).filter((id) => id !== deleted);
      assert.deepEqual(await h.store.agents.softDeleteExcept(keep, at(T0)), [deleted]);
      const statuses = ['in_progress', 'success', 'failure', 'cancelled'] as const;
      let i = 0;
      const add = (agentId: string, userId: string, count: number) => {
        for (let n = 0; n < count; n++, i++) {
          // Several runs share a timestamp: ties are ordered by id.
          all.push(runRecord({ orgId: org, agentId, userId, status: statuses[i % 4] ?? 'success', createdAt: at(T0 + Math.floor(i / 3) * 60_000) }));
        }
      };
      add(shared, 'boss', 7);
      add(byGroup, 'boss', 5);
      add(privateAgent, 'boss', 6); // invisible to mia
      add(privateAgent, 'mia', 2); // hers: visible though the agent is not shared
      add(deleted, 'boss', 3); // mia created it: visible, agent deleted
      for (const run of all) await h.store.runs.create(run);
      // Another organization's run of a same-named user never shows.
      await h.store.runs.create(runRecord({ orgId: uid('org'), agentId: shared, userId: 'mia', createdAt: at(T0) }));
    });

    const visibleTo = (who: 'admin' | 'member') =>
      all.filter((r) => who === 'admin' || r.userId === 'mia' || r.agentId === shared || r.agentId === byGroup || r.agentId === deleted);

    it('an admin pages through every run of the organization, newest first, no gap or dupe', async () => {
      const pages = await walkRuns(h.store, admin, 4);
      assert.deepEqual(pages.flat(), newestFirst(visibleTo('admin')));
      assert.ok(pages.every((p) => p.length <= 4));
    });

    it("a member sees their own runs and the runs of agents granting them access, never another's run of an unshared agent", async () => {
      const pages = await walkRuns(h.store, member, 3);
      assert.deepEqual(pages.flat(), newestFirst(visibleTo('member')));
      const seen = new Set(pages.flat());
      for (const run of all.filter((r) => r.agentId === privateAgent && r.userId === 'boss')) assert.ok(!seen.has(run.id));
      assert.deepEqual(await walkRuns(h.store, principal(org, 'nobody'), 5), [[]]);
    });

    it('filters by agent, status and inclusive creation bounds, in the query', async () => {
      const ids = async (who: Principal, filters: Partial<RunListQuery>) => (await walkRuns(h.store, who, 2, filters)).flat();
      assert.deepEqual(await ids(admin, { agentId: privateAgent }), newestFirst(all.filter((r) => r.agentId === privateAgent)));
      assert.deepEqual(
        await ids(member, { agentId: privateAgent }),
        newestFirst(all.filter((r) => r.agentId === privateAgent && r.userId === 'mia')),
        'a member filtering by an agent they cannot see gets only their own runs of it',
      );
      assert.deepEqual(await ids(member, { status: 'success' }), newestFirst(visibleTo('member').filter((r) => r.status === 'success')));
      const from = at(T0 + 60_000);
      const to = at(T0 + 3 * 60_000);
      assert.deepEqual(
        await ids(admin, { createdAfter: from, createdBefore: to, status: 'failure' }),
        newestFirst(all.filter((r) => r.createdAt >= from && r.createdAt <= to && r.status === 'failure')),
      );
    });

    it("carries the agent's name, and null with agentDeleted for a deleted agent", async () => {
      const page = await h.store.runs.listVisible(member, { ...LIST, limit: 100 });
      const byAgent = new Map(page.map((r) => [r.agentId, r]));
      assert.equal(byAgent.get(shared)?.agentName, 'Shared');
      assert.equal(byAgent.get(shared)?.agentDeleted, false);
      assert.equal(byAgent.get(deleted)?.agentName, null);
      assert.equal(byAgent.get(deleted)?.agentDeleted, true);
      const one = all.find((r) => r.agentId === byGroup)!;
      const listed = page.find((r) => r.id === one.id)!;
      const { agentName: _name, agentDeleted: _deleted, ...record } = listed;
      assert.deepEqual(record, one);
    });
  });

  describe('console: stored responses listed per caller', () => {
    it("lists the caller's stored, unexpired responses newest first (an admin: the organization's), keyset-paginated", async () => {
      const org = uid('org');
      const made: ResponseRecord[] = [];
      for (let i = 0; i < 9; i++) {
        const r: ResponseRecord = {
          id: uid('resp'),
          orgId: org,
          userId: i % 3 === 0 ? 'bob' : 'ann',
          status: 'completed',
          model: 'demo',
          conversationId: i === 4 ? 'conv-1' : null,
          previousResponseId: null,
          stored: i !== 5,
          body: {},
          inputItems: [],
          createdAt: at(T0 + Math.floor(i / 2) * 1000),
          updatedAt: at(T0),
          expiresAt: i === 7 ? at(T0 + 10_000) : null,
          lease: null,
        };
        made.push(r);
        await h.store.responses.create(r);
      }
      await h.store.responses.create({ ...made[0]!, id: uid('resp'), orgId: uid('org') });
      const now = at(T0 + 20_000);
      const walk = async (who: Principal) => {
        const ids: string[] = [];
        let after: { createdAt: string; id: string } | null = null;
        for (;;) {
          const page = await h.store.responses.listVisible(who, { now, limit: 2, after });
          ids.push(...page.map((r) => r.id));
          const last = page[page.length - 1];
          if (page.length < 2 || !last) return ids;
          after = { createdAt: last.createdAt, id: last.id };
        }
      };
      const expected = (pred: (r: ResponseRecord) => boolean) =>
        [...made]
          .filter((r) => r.stored && r.expiresAt === null && pred(r))
          .sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1))
          .map((r) => r.id);
      assert.deepEqual(
        await walk(principal(org, 'ann')),
        expected((r) => r.userId === 'ann'),
      );
      assert.deepEqual(
        await walk(principal(org, 'boss', 'admin')),
        expected(() => true),
      );
      const [first] = await h.store.responses.listVisible(principal(org, 'ann'), { now, limit: 50, after: null });
      const source = made.find((r) => r.id === first?.id)!;
      assert.deepEqual(first, {
        id: source.id,
        userId: 'ann',
        status: 'completed',
        model: 'demo',
        conversationId: source.conversationId,
        previousResponseId: null,
        createdAt: source.createdAt,
      });
      assert.equal((await h.store.responses.listVisible(principal(org, 'ann'), { now: at(T0), limit: 50, after: null })).length, 5, 'unexpired at now');
    });
  });

  describe('console: audit filters and order', () => {
    const org = uid('org');
    const records: AuditRecord[] = [];
    before(async () => {
      for (let i = 0; i < 30; i++) {
        records.push(
          auditRecord(org, T0 + Math.floor(i / 2) * 1000, {
            userId: i % 3 === 0 ? 'u2' : 'u1',
            keyId: i % 5 === 0 ? 'k2' : 'k1',
            operationId: i % 4 === 0 ? 'listModels' : 'createChatCompletion',
            status: [200, 200, 404, 429, 500, 201][i % 6]!,
            ...(i % 2 === 0 ? { model: i % 4 === 0 ? 'gpt' : 'demo' } : {}),
          }),
        );
      }
      await h.store.audit.insertMany(records);
      await h.store.audit.insertMany([auditRecord(uid('org'), T0)]);
    });
    const order = (recs: AuditRecord[], dir: 'asc' | 'desc') =>
      [...recs].sort((a, b) => (a.at === b.at ? (a.id < b.id ? -1 : 1) : a.at < b.at ? -1 : 1) * (dir === 'asc' ? 1 : -1)).map((r) => r.id);

    it('pages in either order without gaps or dupes (asc by default)', async () => {
      assert.deepEqual(await walkAudit(h.store, { orgId: org, since: null }, 7), order(records, 'asc'));
      assert.deepEqual(await walkAudit(h.store, { orgId: org, since: null, order: 'desc' }, 7), order(records, 'desc'));
    });

    it('filters by user, key, model, operation, status or status class, and time, combined', async () => {
      const cases: [Omit<AuditQuery, 'orgId' | 'since' | 'after' | 'limit'> & { since?: string }, (r: AuditRecord) => boolean][] = [
        [{ userId: 'u2' }, (r) => r.userId === 'u2'],
        [{ keyId: 'k2' }, (r) => r.keyId === 'k2'],
        [{ model: 'gpt' }, (r) => r.model === 'gpt'],
        [{ operationId: 'listModels' }, (r) => r.operationId === 'listModels'],
        [{ status: { from: 404, to: 404 } }, (r) => r.status === 404],
        [{ status: { from: 400, to: 499 } }, (r) => r.status >= 400 && r.status < 500],
        [{ status: { from: 500, to: 599 } }, (r) => r.status >= 500],
        [{ status: { from: 200, to: 299 } }, (r) => r.status < 300],
        [{ since: at(T0 + 3000), until: at(T0 + 9000) }, (r) => r.at >= at(T0 + 3000) && r.at <= at(T0 + 9000)],
        [{ userId: 'u1', model: 'demo', status: { from: 400, to: 499 } }, (r) => r.userId === 'u1' && r.model === 'demo' && r.status >= 400 && r.status < 500],
      ];
      for (const [filters, pred] of cases) {
        const { since, ...rest } = filters;
        for (const dir of ['desc', 'asc'] as const) {
          const expected = order(records.filter(pred), dir);
          assert.ok(expected.length > 0, `fixture covers ${JSON.stringify(filters)}`);
          assert.deepEqual(
            await walkAudit(h.store, { orgId: org, since: since ?? null, order: dir, ...rest }, 3),
            expected,
            `${dir} ${JSON.stringify(filters)}`,
          );
        }
      }
    });
  });
}
