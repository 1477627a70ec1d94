// A key's model allow-list bounds the agents it reaches (src/store/agent-models.ts), decided in the
// visibility queries: agents listed and read, runs read and listed (keyset pages without gaps for an
// admin's and a member's restricted key), and run conversations. Unrestricted principals are the
// baseline each expectation is derived from.
import assert from 'node:assert/strict';
import type { Store } from '../../../src/store/port';
import type { Principal, RunListQuery, RunRecord } from '../../../src/store/types';
import { agentUpsert, at, principal, runRecord, T0, uid, type StoreHandle } from './fixtures';

const LIST: Omit<RunListQuery, 'limit'> = { agentId: null, status: null, createdAfter: null, createdBefore: null, after: null };

async function walkRuns(store: Store, who: Principal, limit: number, filters: Partial<RunListQuery> = {}): Promise<string[]> {
  const ids: string[] = [];
  let after: RunListQuery['after'] = null;
  for (;;) {
    const page = await store.runs.listVisible(who, { ...LIST, ...filters, limit, after });
    ids.push(...page.map((r) => r.id));
    const last = page[page.length - 1];
    if (page.length < limit || !last) return ids;
    after = { createdAt: last.createdAt, id: last.id };
  }
}

function newestFirst(runs: readonly RunRecord[]): string[] {
  return [...runs].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1)).map((r) => r.id);
}

const restricted = (p: Principal, models: string[], evaluationModel?: string): Principal => ({
  ...p,
  models,
  ...(evaluationModel !== undefined ? { evaluationModel } : {}),
});

export function keyModelsContract(h: StoreHandle): void {
  describe('key model allow-list: agents, runs and run conversations', () => {
    const org = uid('org');
    // alice created onA, onB and judged; carol's sharedA and sharedB are shared with bob.
    const onA = uid('a-on-a');
    const onB = uid('a-on-b');
    const judged = uid('a-judged');
    const sharedA = uid('a-shared-a');
    const sharedB = uid('a-shared-b');
    const runs: RunRecord[] = [];
    const alice = principal(org, 'alice');
    const bob = principal(org, 'bob');
    const admin = principal(org, 'root', 'admin');

    before(async () => {
      const share = [{ user: 'bob', permissions: ['view' as const] }];
      await h.store.agents.upsert(agentUpsert({ id: onA, orgId: org, createdBy: 'alice', model: 'model-a' }));
      await h.store.agents.upsert(agentUpsert({ id: onB, orgId: org, createdBy: 'alice', model: 'model-b' }));
      await h.store.agents.upsert(
        agentUpsert({ id: judged, orgId: org, createdBy: 'alice', model: 'model-a', steps: [{ prompt: 'p' }, { prompt: 'q', objective: 'o' }] }),
      );
      await h.store.agents.upsert(agentUpsert({ id: sharedA, orgId: org, createdBy: 'carol', model: 'model-a', sharedWith: share }));
      await h.store.agents.upsert(agentUpsert({ id: sharedB, orgId: org, createdBy: 'carol', model: 'model-b', sharedWith: share }));
      // Runs of every agent by alice, bob and carol, two per timestamp (ties ordered by id).
      const plan: [string, string][] = [
        [onA, 'alice'],
        [onB, 'alice'],
        [judged, 'alice'],
        [sharedA, 'carol'],
        [sharedB, 'carol'],
        [onB, 'bob'],
        [sharedB, 'bob'],
        [onA, 'bob'],
      ];
      for (let i = 0; i < 24; i++) {
        const [agentId, userId] = plan[i % plan.length]!;
        runs.push(runRecord({ orgId: org, agentId, userId, status: 'success', createdAt: at(T0 + Math.floor(i / 2) * 1000) }));
      }
      for (const run of runs) await h.store.runs.create(run);
    });

    it('lists and reads only agents whose model is on the list; no list or a console session: as before', async () => {
      const ids = async (p: Principal) => (await h.store.agents.listVisible(p, 100)).map((a) => a.id).sort();
      assert.deepEqual(await ids(alice), [onA, onB, judged].sort());
      assert.deepEqual(await ids(restricted(alice, ['model-a'])), [onA, judged].sort());
      assert.deepEqual(await ids(restricted(alice, ['model-b'])), [onB]);
      assert.deepEqual(await ids(restricted(alice, [])), []);
      assert.deepEqual(await ids(restricted(bob, ['model-a'])), [sharedA]);
      assert.deepEqual(await ids(restricted(admin, ['model-b'])), [onB, sharedB].sort());
      assert.deepEqual(await ids({ ...alice, models: null }), [onA, onB, judged].sort());
      assert.equal(await h.store.agents.getVisible(restricted(alice, ['model-a']), onB), null);
      assert.equal(await h.store.agents.getVisible(restricted(admin, ['model-a']), sharedB), null);
      assert.equal((await h.store.agents.getVisible(restricted(alice, ['model-a']), onA))?.id, onA);
      assert.deepEqual((await h.store.agents.getVisible(restricted(bob, ['model-b']), sharedB))?.permissions, ['view']);
    });

    it('an agent with a judged step also needs the judge model on the list (the agent’s own when none is configured)', async () => {
      const visible = async (p: Principal) => (await h.store.agents.getVisible(p, judged))?.id ?? null;
      assert.equal(await visible(restricted(alice, ['model-a'])), judged, 'no evaluation model: the agent’s own judges');
      assert.equal(await visible(restricted(alice, ['model-a'], 'model-a')), judged);
      assert.equal(await visible(restricted(alice, ['model-a'], 'model-b')), null);
      assert.equal(await visible(restricted(alice, ['model-a', 'model-b'], 'model-b')), judged);
      assert.equal((await h.store.agents.getVisible(restricted(alice, ['model-a'], 'model-b'), onA))?.id, onA, 'an agent without judged steps never needs it');
      const listed = (await h.store.agents.listVisible(restricted(alice, ['model-a'], 'model-b'), 100)).map((a) => a.id);
      assert.deepEqual(listed, [onA]);
      const judgedRun = runs.find((r) => r.agentId === judged)!;
      assert.equal(await h.store.runs.getVisible(restricted(alice, ['model-a'], 'model-b'), judgedRun.id), null);
      assert.deepEqual(await walkRuns(h.store, restricted(alice, ['model-a'], 'model-b'), 100, { agentId: judged }), []);
    });

    it('reads a run only when its agent is within the list, also the caller’s own run and for an admin', async () => {
      const ownOnB = runs.find((r) => r.agentId === onB && r.userId === 'alice')!;
      const ownOnA = runs.find((r) => r.agentId === onA && r.userId === 'alice')!;
      assert.equal((await h.store.runs.getVisible(alice, ownOnB.id))?.id, ownOnB.id);
      assert.equal(await h.store.runs.getVisible(restricted(alice, ['model-a']), ownOnB.id), null);
      assert.equal((await h.store.runs.getVisible(restricted(alice, ['model-a']), ownOnA.id))?.id, ownOnA.id);
      const carolsOnB = runs.find((r) => r.agentId === sharedB)!;
      assert.equal((await h.store.runs.getVisible(bob, carolsOnB.id))?.id, carolsOnB.id);
      assert.equal(await h.store.runs.getVisible(restricted(bob, ['model-a']), carolsOnB.id), null);
      assert.equal(await h.store.runs.getVisible(restricted(admin, ['model-a']), carolsOnB.id), null);
      assert.equal((await h.store.runs.getVisible(restricted(admin, ['model-b']), carolsOnB.id))?.id, carolsOnB.id);
    });

    it('lists runs of agents within the list only, paging without gaps or dupes (admin and member keys)', async () => {
      const agentOf = new Map(runs.map((r) => [r.id, r.agentId]));
      const onModelA = new Set([onA, judged, sharedA]);
      for (const who of [admin, alice, bob]) {
        const all = await walkRuns(h.store, who, 100);
        assert.ok(
          all.some((id) => !onModelA.has(agentOf.get(id)!)),
          'the baseline includes runs of agents on model-b',
        );
        const expected = all.filter((id) => onModelA.has(agentOf.get(id)!));
        assert.ok(expected.length > 0);
        for (const limit of [1, 3, 100])
          assert.deepEqual(await walkRuns(h.store, restricted(who, ['model-a']), limit), expected, `${who.userId}, limit ${limit}`);
      }
      // The admin's baseline is every run: the restricted admin key sees exactly those on model-a.
      assert.deepEqual(await walkRuns(h.store, restricted(admin, ['model-a']), 4), newestFirst(runs.filter((r) => onModelA.has(r.agentId))));
      assert.deepEqual(await walkRuns(h.store, restricted(admin, ['model-a']), 10, { agentId: onB }), [], 'filtering by a hidden agent finds nothing');
      assert.deepEqual(await walkRuns(h.store, restricted(bob, ['model-a']), 10, { agentId: onB }), []);
      assert.deepEqual(
        await walkRuns(h.store, restricted(bob, ['model-a']), 10, { agentId: onA }),
        newestFirst(runs.filter((r) => r.agentId === onA && r.userId === 'bob')),
      );
    });

    it('reads a run’s conversation only when its agent is within the list; other conversations as before', async () => {
      const ownOnB = runs.find((r) => r.agentId === onB && r.userId === 'alice')!;
      const ownOnA = runs.find((r) => r.agentId === onA && r.userId === 'alice')!;
      const create = async (runId: string | null) => {
        const id = uid('conv');
        await h.store.conversations.create({ id, orgId: org, userId: 'alice', runId, metadata: {}, createdAt: at(T0) });
        return id;
      };
      const [onBConversation, onAConversation, plain] = [await create(ownOnB.id), await create(ownOnA.id), await create(null)];
      const seen = async (p: Principal, id: string) => (await h.store.conversations.getVisible(p, id))?.id ?? null;
      assert.equal(await seen(alice, onBConversation), onBConversation);
      assert.equal(await seen(restricted(alice, ['model-a']), onBConversation), null);
      assert.equal(await seen(restricted(admin, ['model-a']), onBConversation), null);
      assert.equal(await seen(restricted(alice, ['model-a']), onAConversation), onAConversation);
      assert.equal(await seen(restricted(alice, ['model-a']), plain), plain, 'a conversation without a run has no agent to check');
    });
  });
}
