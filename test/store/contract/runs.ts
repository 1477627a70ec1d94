import assert from 'node:assert/strict';
import type { Store } from '../../../src/store/port';
import { LeaseLostError, type NewConversationItem, type RunRecord } from '../../../src/store/types';
import { agentUpsert, at, principal, runRecord, T0, uid, type StoreHandle } from './fixtures';

/** Keyset-walks every page of an agent's runs. */
async function walk(store: Store, agentId: string, limit: number, filters: { startDate?: string; endDate?: string } = {}): Promise<string[][]> {
  const pages: string[][] = [];
  let after: { createdAt: string; id: string } | null = null;
  for (;;) {
    const page = await store.runs.page({ agentId, limit, after, startDate: filters.startDate ?? null, endDate: filters.endDate ?? null });
    pages.push(page.ids);
    if (!page.next) return pages;
    after = page.next;
  }
}

function newestFirst(runs: readonly RunRecord[]): string[] {
  return [...runs].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1)).map((r) => r.id);
}

export function runsContract(h: StoreHandle): void {
  describe('runs: pagination', () => {
    const org = uid('org');
    const agentId = uid('agent');
    const runs: RunRecord[] = [];

    before(async () => {
      // 23 runs, several sharing a timestamp (ties ordered by id), plus another agent's runs interleaved.
      for (let i = 0; i < 23; i++) runs.push(runRecord({ orgId: org, agentId, createdAt: at(T0 + Math.floor(i / 3) * 60_000) }));
      for (const run of runs) await h.store.runs.create(run);
      await h.store.runs.create(runRecord({ orgId: org, agentId: uid('other-agent'), createdAt: at(T0 + 30_000) }));
    });

    it('pages newest first by (createdAt, id) with no gaps or duplicates', async () => {
      const pages = await walk(h.store, agentId, 5);
      assert.deepEqual(
        pages.map((p) => p.length),
        [5, 5, 5, 5, 3],
      );
      assert.deepEqual(pages.flat(), newestFirst(runs));
    });

    it('the last page has next null, also when it is exactly full', async () => {
      const pages = await walk(h.store, agentId, 23);
      assert.equal(pages.length, 1);
      const empty = await h.store.runs.page({ agentId: uid('no-runs'), limit: 5, after: null, startDate: null, endDate: null });
      assert.deepEqual(empty, { ids: [], next: null });
    });

    it('is stable while newer runs are inserted between pages', async () => {
      const seen: string[] = [];
      let after: { createdAt: string; id: string } | null = null;
      let inserted = 0;
      for (;;) {
        const page = await h.store.runs.page({ agentId, limit: 4, after, startDate: null, endDate: null });
        seen.push(...page.ids);
        // A newer run arrives between every two page reads.
        await h.store.runs.create(runRecord({ orgId: org, agentId, createdAt: at(T0 + 3_600_000 + inserted++ * 1000) }));
        if (!page.next) break;
        after = page.next;
      }
      assert.deepEqual(seen, newestFirst(runs));
      assert.equal(new Set(seen).size, seen.length);
    });

    it('date filters are inclusive at both ends and compose with the keyset', async () => {
      const start = at(T0 + 2 * 60_000);
      const end = at(T0 + 4 * 60_000);
      const expected = newestFirst(runs.filter((r) => r.createdAt >= start && r.createdAt <= end));
      assert.equal(expected.length, 9, 'three timestamps of three runs each, boundaries included');
      assert.deepEqual((await walk(h.store, agentId, 2, { startDate: start, endDate: end })).flat(), expected);
      const from = at(T0 + 7 * 60_000);
      const fromOn = (await walk(h.store, agentId, 3, { startDate: from })).flat();
      const mine = new Set(runs.map((r) => r.id));
      assert.deepEqual(
        fromOn.filter((id) => mine.has(id)),
        newestFirst(runs.filter((r) => r.createdAt >= from)),
      );
      assert.ok(fromOn.filter((id) => !mine.has(id)).length > 0, 'the newer runs inserted meanwhile are included');
      assert.deepEqual((await walk(h.store, agentId, 50, { endDate: at(T0) })).flat(), newestFirst(runs.slice(0, 3)));
    });

    it('latestCreatedAt ignores filters and is null without runs', async () => {
      const latest = await h.store.runs.latestCreatedAt(agentId);
      assert.ok(latest !== null && latest >= at(T0 + 3_600_000));
      assert.equal(await h.store.runs.latestCreatedAt(uid('none')), null);
    });
  });

  describe('runs: visibility', () => {
    const org = uid('org');
    const agentId = uid('agent');
    const privateAgent = uid('agent');
    let run: RunRecord;
    let ownRun: RunRecord;

    before(async () => {
      await h.store.agents.upsert(agentUpsert({ id: agentId, orgId: org, createdBy: 'alice', sharedWith: [{ group: 'team', permissions: ['view'] }] }));
      await h.store.agents.upsert(agentUpsert({ id: privateAgent, orgId: org, createdBy: 'alice' }));
      run = runRecord({ orgId: org, agentId, userId: 'alice' });
      ownRun = runRecord({ orgId: org, agentId: privateAgent, userId: 'bob' });
      await h.store.runs.create(run);
      await h.store.runs.create(ownRun);
    });

    it('admin, triggering user, or a principal who sees the agent; never another org', async () => {
      assert.equal((await h.store.runs.getVisible(principal(org, 'root', 'admin'), run.id))?.id, run.id);
      assert.equal((await h.store.runs.getVisible(principal(org, 'alice'), run.id))?.agentDeleted, false);
      assert.equal((await h.store.runs.getVisible(principal(org, 'tom', 'member', ['team']), run.id))?.id, run.id);
      assert.equal(await h.store.runs.getVisible(principal(org, 'tom'), run.id), null);
      assert.equal(await h.store.runs.getVisible(principal(uid('org'), 'alice', 'admin'), run.id), null);
      // bob triggered a run of an agent he cannot see: he still reads his own run.
      assert.equal((await h.store.runs.getVisible(principal(org, 'bob'), ownRun.id))?.id, ownRun.id);
      assert.equal(await h.store.runs.getVisible(principal(org, 'tom', 'member', ['team']), ownRun.id), null);
      assert.equal(await h.store.runs.getVisible(principal(org, 'root', 'admin'), uid('missing')), null);
    });

    it('stays visible after the agent is soft-deleted, flagged agentDeleted', async () => {
      const keep = (await h.store.agents.listActive()).map((a) => a.id).filter((id) => id !== agentId);
      await h.store.agents.softDeleteExcept(keep, new Date().toISOString());
      const seen = await h.store.runs.getVisible(principal(org, 'tom', 'member', ['team']), run.id);
      assert.equal(seen?.agentDeleted, true);
      assert.equal(seen?.agentId, agentId, 'the record keeps the id; the API decides to show null');
      assert.equal((await h.store.runs.getVisible(principal(org, 'root', 'admin'), run.id))?.agentDeleted, true);
    });
  });

  describe('runs: compare-and-set updates and leases', () => {
    const org = uid('org');
    const agentId = uid('agent');

    it('applies a patch, increments revision, honours whenStatus and whenRevision', async () => {
      const run = runRecord({ orgId: org, agentId });
      await h.store.runs.create(run);
      assert.deepEqual(await h.store.runs.get(run.id), run);
      const updated = await h.store.runs.update(run.id, { stepsCompleted: 1, result: '"hi"' }, { whenStatus: ['in_progress'], whenRevision: 0 });
      assert.equal(updated?.revision, 1);
      assert.equal(updated?.stepsCompleted, 1);
      assert.equal(updated?.result, '"hi"');
      assert.equal(updated?.status, 'in_progress', 'fields not in the patch are kept');
      assert.equal(await h.store.runs.update(run.id, { stepsCompleted: 2 }, { whenRevision: 0 }), null, 'stale revision');
      assert.equal(await h.store.runs.update(run.id, { stepsCompleted: 2 }, { whenStatus: ['success', 'failure'] }), null, 'status guard');
      const ended = at(T0 + 1000);
      const done = await h.store.runs.update(run.id, { status: 'success', endedAt: ended, leaseOwner: null, leaseExpiresAt: null });
      assert.equal(done?.revision, 2);
      assert.equal(done?.endedAt, ended);
      assert.equal(await h.store.runs.update(uid('missing'), { status: 'failure' }), null);
    });

    it('exactly one of several concurrent updaters holding the same revision wins', async () => {
      const run = runRecord({ orgId: org, agentId });
      await h.store.runs.create(run);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          h.store.runs.update(run.id, { status: i % 2 ? 'cancelled' : 'failure', error: `w${i}` }, { whenStatus: ['in_progress'], whenRevision: 0 }),
        ),
      );
      const winners = results.filter((r): r is RunRecord => r !== null);
      assert.equal(winners.length, 1);
      const stored = await h.store.runs.get(run.id);
      assert.equal(stored?.error, winners[0]?.error);
      assert.equal(stored?.revision, 1);
    });

    it('status-guarded updates race: exactly one moves the run out of in_progress', async () => {
      const run = runRecord({ orgId: org, agentId });
      await h.store.runs.create(run);
      const results = await Promise.all(Array.from({ length: 6 }, () => h.store.runs.update(run.id, { status: 'cancelled' }, { whenStatus: ['in_progress'] })));
      assert.equal(results.filter((r) => r !== null).length, 1);
    });

    it('acquireLease: exactly one owner among racers; same owner renews; expired leases are taken over', async () => {
      const run = runRecord({ orgId: org, agentId });
      await h.store.runs.create(run);
      const now = at(T0);
      const until = at(T0 + 30_000);
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => h.store.runs.acquireLease(run.id, `worker-${i}`, until, now)));
      const owners = results.filter((r): r is RunRecord => r !== null);
      assert.equal(owners.length, 1);
      const owner = owners[0]?.leaseOwner ?? '';
      assert.equal(owners[0]?.attempts, 1);
      assert.equal(owners[0]?.leaseExpiresAt, until);

      const renewed = await h.store.runs.acquireLease(run.id, owner, at(T0 + 60_000), at(T0 + 10_000));
      assert.equal(renewed?.attempts, 2);
      assert.equal(await h.store.runs.acquireLease(run.id, 'intruder', at(T0 + 90_000), at(T0 + 20_000)), null, 'held by someone else');
      const taken = await h.store.runs.acquireLease(run.id, 'rescuer', at(T0 + 120_000), at(T0 + 60_001));
      assert.equal(taken?.leaseOwner, 'rescuer');
      assert.equal(taken?.attempts, 3);

      await h.store.runs.update(run.id, { status: 'success' });
      assert.equal(await h.store.runs.acquireLease(run.id, 'rescuer', at(T0 + 200_000), at(T0 + 150_000)), null, 'finished runs have no lease');
    });
  });

  describe('runs: lease fencing and atomic creation', () => {
    const org = uid('org');
    const agentId = uid('agent');
    const item = (key: string): NewConversationItem => ({
      id: uid('msg'),
      type: 'message',
      role: 'user',
      data: { content: [{ type: 'input_text', text: key }] },
      status: 'completed',
      idempotencyKey: key,
      responseId: null,
    });

    async function createWithParts(): Promise<RunRecord> {
      const run = runRecord({ orgId: org, agentId });
      await h.store.runs.create(run, {
        conversation: { id: run.conversationId, orgId: org, userId: run.userId, runId: run.id, metadata: {}, createdAt: run.createdAt },
        steps: [
          { stepNumber: 1, name: 'one' },
          { stepNumber: 2, name: null },
        ],
      });
      return run;
    }

    it('creates the run with its conversation and step rows; a failed creation leaves none of them', async () => {
      const run = await createWithParts();
      assert.equal((await h.store.runs.get(run.id))?.status, 'in_progress');
      assert.equal((await h.store.conversations.get(run.conversationId))?.runId, run.id);
      assert.deepEqual(
        (await h.store.steps.list(run.id)).map((s) => [s.stepNumber, s.name]),
        [
          [1, 'one'],
          [2, null],
        ],
      );
      // The same run id again: the run write fails after the conversation and step writes were made.
      const clash = { ...runRecord({ orgId: org, agentId }), id: run.id };
      await assert.rejects(
        h.store.runs.create(clash, {
          conversation: { id: clash.conversationId, orgId: org, userId: clash.userId, runId: clash.id, metadata: {}, createdAt: clash.createdAt },
          steps: [{ stepNumber: 3, name: 'extra' }],
        }),
      );
      assert.equal(await h.store.conversations.get(clash.conversationId), null, 'no conversation left behind');
      assert.deepEqual(
        (await h.store.steps.list(run.id)).map((s) => s.stepNumber),
        [1, 2],
        'no step row left behind',
      );
    });

    it('a takeover fences the old holder: its run, item and step writes are refused, the new holder writes', async () => {
      const run = await createWithParts();
      const first = await h.store.runs.acquireLease(run.id, 'stalled', at(T0 + 2000), at(T0));
      assert.ok(first);
      const old = { runId: run.id, generation: first.leaseGeneration };
      // The old holder writes while it holds the lease.
      assert.ok(await h.store.runs.update(run.id, { stepsCompleted: 0 }, { whenGeneration: old.generation }));
      await h.store.conversations.append(run.conversationId, [item('before')], old);
      await h.store.steps.update(run.id, 1, { completed: true }, old);

      // Its lease expires (it stalled) and another process takes the run over.
      const taken = await h.store.runs.acquireLease(run.id, 'rescuer', at(T0 + 60_000), at(T0 + 5000));
      assert.equal(taken?.leaseOwner, 'rescuer');
      assert.ok(taken.leaseGeneration > old.generation, 'the generation moved on');
      const current = { runId: run.id, generation: taken.leaseGeneration };

      // The old holder wakes up: every write it attempts is refused, nothing of it lands.
      assert.equal(await h.store.runs.update(run.id, { stepsCompleted: 1, leaseExpiresAt: at(T0 + 99_000) }, { whenGeneration: old.generation }), null);
      await assert.rejects(h.store.conversations.append(run.conversationId, [item('after')], old), LeaseLostError);
      await assert.rejects(h.store.steps.update(run.id, 2, { completed: true, result: 'pass' }, old), LeaseLostError);
      const stored = await h.store.runs.get(run.id);
      assert.equal(stored?.stepsCompleted, 0);
      assert.equal(stored?.leaseOwner, 'rescuer');
      const items = await h.store.conversations.listItems(run.conversationId, { order: 'asc', limit: 10 });
      assert.deepEqual(
        items.map((i) => i.idempotencyKey),
        ['before'],
      );
      assert.deepEqual(
        (await h.store.steps.list(run.id)).map((s) => [s.completed, s.result]),
        [
          [true, null],
          [false, null],
        ],
      );

      // The new holder's writes go through.
      assert.equal((await h.store.runs.update(run.id, { stepsCompleted: 1 }, { whenGeneration: current.generation }))?.stepsCompleted, 1);
      await h.store.conversations.append(run.conversationId, [item('rescued')], current);
      await h.store.steps.update(run.id, 2, { completed: true, result: 'pass' }, current);
      assert.equal((await h.store.steps.list(run.id))[1]?.result, 'pass');

      // A run that ended refuses its execution's guarded writes.
      await h.store.runs.update(run.id, { status: 'cancelled' });
      assert.equal(await h.store.runs.update(run.id, { stepsCompleted: 2 }, { whenStatus: ['in_progress'], whenGeneration: current.generation }), null);
    });
  });

  describe('runs: orphans, overdue, counts, step verdicts', () => {
    it('lists orphaned and overdue in-progress runs and counts by status', async () => {
      const org = uid('org');
      const agentId = uid('agent');
      const now = T0 + 1_000_000;
      const noLease = runRecord({ orgId: org, agentId, createdAt: at(T0 + 1), deadlineAt: at(now + 1) });
      const expired = runRecord({ orgId: org, agentId, createdAt: at(T0 + 2), leaseOwner: 'w', leaseExpiresAt: at(now - 1), deadlineAt: at(now - 5) });
      const held = runRecord({ orgId: org, agentId, createdAt: at(T0), leaseOwner: 'w', leaseExpiresAt: at(now + 10_000), deadlineAt: at(now) });
      const finished = runRecord({ orgId: org, agentId, createdAt: at(T0 - 5), status: 'success', deadlineAt: at(T0) });
      const counts = await h.store.runs.countByStatus();
      for (const r of [noLease, expired, held, finished]) await h.store.runs.create(r);

      const orphaned = (await h.store.runs.listOrphaned(at(now), 1000)).map((r) => r.id);
      const mine = orphaned.filter((id) => [noLease.id, expired.id, held.id, finished.id].includes(id));
      assert.deepEqual(mine, [noLease.id, expired.id], 'oldest first; held and finished runs excluded');

      const overdue = (await h.store.runs.listOverdue(at(now), 1000)).map((r) => r.id);
      assert.ok(overdue.includes(expired.id) && overdue.includes(held.id));
      assert.ok(!overdue.includes(noLease.id) && !overdue.includes(finished.id));
      assert.equal((await h.store.runs.listOverdue(at(now), 1)).length, 1, 'limit');

      const after = await h.store.runs.countByStatus();
      assert.equal(after.in_progress, counts.in_progress + 3);
      assert.equal(after.success, counts.success + 1);
      assert.equal(after.failure, counts.failure);
      assert.equal(after.cancelled, counts.cancelled);
    });

    it('step verdicts: init keeps existing rows, update patches, list orders by step', async () => {
      const runId = uid('run');
      await h.store.steps.init(runId, [
        { stepNumber: 2, name: 'check' },
        { stepNumber: 1, name: null },
      ]);
      await h.store.steps.update(runId, 1, { completed: true, result: 'pass', explanation: 'fine' });
      await h.store.steps.init(runId, [
        { stepNumber: 1, name: 'renamed' },
        { stepNumber: 2, name: 'check' },
      ]);
      const steps = await h.store.steps.list(runId);
      assert.deepEqual(
        steps.map((s) => [s.stepNumber, s.name, s.result, s.explanation, s.completed]),
        [
          [1, null, 'pass', 'fine', true],
          [2, 'check', null, null, false],
        ],
      );
      await h.store.steps.update(runId, 2, { result: 'fail' });
      assert.equal((await h.store.steps.list(runId))[1]?.completed, false);
      assert.equal((await h.store.steps.list(runId))[1]?.result, 'fail');
    });
  });
}
