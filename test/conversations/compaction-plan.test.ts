// Where compaction cuts a history (src/conversations/compaction-plan.ts): not below the threshold; the
// most recent whole turns verbatim within the target; never between a call and its output, nor after
// a call whose output the new turn brings; a summary longer than planned moves the cut, not the window.
import assert from 'node:assert/strict';
import { clipCap, contextTokens, fitCut, planCompaction, safeCuts, type Budget, type PlanItem } from '../../src/conversations/compaction-plan';

const user = (tokens: number): PlanItem => ({ tokens, startsTurn: true });
const assistant = (tokens: number): PlanItem => ({ tokens, startsTurn: false });
const call = (id: string, tokens = 20): PlanItem => ({ tokens, startsTurn: false, opens: id });
const output = (id: string, tokens = 20): PlanItem => ({ tokens, startsTurn: false, closes: id });

const budget = (over: Partial<Budget> = {}): Budget => ({ window: 1000, reserve: 100, fixed: 100, threshold: 0.8, target: 0.5, summaryTokens: 100, ...over });

/** n turns of a user message and an assistant reply, `size` tokens each. */
const turns = (n: number, size: number): PlanItem[] => Array.from({ length: n }, () => [user(size), assistant(size)]).flat();

describe('compaction plan', () => {
  it('does nothing while the context stays within the threshold', () => {
    const items = turns(5, 50); // 500 + fixed 100 + reserve 100 = 700 <= 800
    assert.equal(contextTokens(items, 0, budget()), 700);
    assert.deepEqual(planCompaction(items, 0, budget()), { action: 'none', reason: 'below_threshold' });
    // The summary in effect counts too.
    assert.equal(planCompaction(items, 150, budget()).action, 'compact');
  });

  it('keeps the most recent whole turns that fit the target and summarises the rest', () => {
    const items = turns(8, 50); // 800 + 200 = 1000 > 800
    const plan = planCompaction(items, 0, budget());
    assert.equal(plan.action, 'compact');
    if (plan.action !== 'compact') return;
    // Room for kept items: 500 - fixed 100 - reserve 100 - summary 100 = 200 tokens: the last 2 turns.
    assert.equal(plan.cut, items.length - 4);
    assert.ok(items[plan.cut]!.startsTurn, 'the kept part starts with a user message');
    const kept = items.slice(plan.cut).reduce((sum, item) => sum + item.tokens, 0);
    assert.ok(100 + 100 + 100 + kept <= 500, 'within the target with the largest summary');
  });

  it('never separates a call from its output', () => {
    // One long last turn: user, call A, output A, call B, output B, answer. Whole turns do not fit.
    const items = [...turns(4, 60), user(40), call('A', 60), output('A', 60), call('B', 60), output('B', 60), assistant(40)];
    const plan = planCompaction(items, 0, budget());
    assert.equal(plan.action, 'compact');
    if (plan.action !== 'compact') return;
    const safe = safeCuts(items);
    assert.ok(safe[plan.cut], `cut ${plan.cut} is call-safe`);
    const before = new Set(items.slice(0, plan.cut).flatMap((item) => (item.opens ? [item.opens] : [])));
    for (const item of items.slice(plan.cut)) assert.ok(!item.closes || !before.has(item.closes), `output ${item.closes} kept with its call`);
    // Cuts at 10 and 12 would split A and B; no whole turn fits the 200 tokens of room, so the cut
    // falls inside the last turn at the earliest call-safe point that fits: after output A (160 kept).
    assert.deepEqual(
      safe.map((ok, i) => (ok ? i : -1)).filter((i) => i >= 8),
      [8, 9, 11, 13, 14],
    );
    assert.equal(plan.cut, 11);
  });

  it('keeps a call whose output comes in the new turn, with everything after it', () => {
    const items = [...turns(6, 60), user(40), call('C', 40)];
    const plan = planCompaction(items, 0, budget(), new Set(['C']));
    assert.equal(plan.action, 'compact');
    if (plan.action !== 'compact') return;
    assert.ok(plan.cut <= items.length - 1, 'the pending call stays verbatim');
    assert.equal(safeCuts(items, new Set(['C']))[items.length], false);
    assert.equal(safeCuts(items)[items.length], true, 'without the new turn closing it, an unanswered call binds nothing');
  });

  it('summarises everything it can when not even the newest item fits the target', () => {
    const items = [user(50), assistant(50), user(700)];
    const plan = planCompaction(items, 0, budget());
    assert.deepEqual(plan, { action: 'compact', cut: 3 });
  });

  it('has nothing to cut when every cut would split a call from its output', () => {
    const items = [call('A', 500), output('A', 400)];
    assert.deepEqual(planCompaction(items, 0, budget(), new Set()), { action: 'compact', cut: 2 });
    assert.deepEqual(planCompaction([call('P', 900)], 0, budget(), new Set(['P'])), { action: 'none', reason: 'nothing_to_cut' });
  });

  it('moves the cut later when the summary came back longer than planned, to stay within the window', () => {
    const items = turns(8, 50);
    const b = budget();
    // Planned cut keeps 4 items (200 tokens); a 650-token summary does not fit with them: 100+100+650+200 > 1000.
    assert.equal(fitCut(items, 12, 100, b), 12);
    const moved = fitCut(items, 12, 650, b);
    assert.ok(moved > 12);
    assert.ok(contextTokens(items.slice(moved), 650, b) <= b.window);
    // Call-safe as well.
    const withCall = [...turns(6, 50), user(50), call('A', 100), output('A', 100), assistant(50)];
    const at = fitCut(withCall, 12, 600, b);
    assert.ok(safeCuts(withCall)[at]);
  });

  it('clips the longest transcript entries alike to fit a budget (water-filling)', () => {
    assert.equal(clipCap([10, 20, 30], 100), Infinity);
    assert.equal(clipCap([10, 20, 300], 100), 70);
    assert.equal(clipCap([10, 200, 300], 100), 45);
    const sizes = [5, 500, 40, 900, 12];
    const cap = clipCap(sizes, 300);
    assert.ok(sizes.reduce((sum, size) => sum + Math.min(size, cap), 0) <= 300);
    assert.ok(sizes.reduce((sum, size) => sum + Math.min(size, cap + 1), 0) > 300, 'the largest such cap');
  });
});
