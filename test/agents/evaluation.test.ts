// The aggregate evaluation table of the spec, one test per row, plus the overlaps whose precedence
// src/agents/evaluation.ts decides, and the per-step view (order, names, not_evaluated, null).
import assert from 'node:assert/strict';
import { aggregateResult, evaluateRun } from '../../src/agents/evaluation';
import type { AgentStepConfig } from '../../src/config/types';
import type { RunStatus, StepResult, StepVerdictRecord } from '../../src/store/types';

type S = { result: StepResult | null; completed: boolean; hasObjective: boolean };
const judged = (result: StepResult | null, completed = true): S => ({ result, completed, hasObjective: true });
const plain = (completed = true): S => ({ result: 'not_evaluated', completed, hasObjective: false });

function row(stepNumber: number, result: StepResult | null, completed: boolean, name: string | null = `Step ${stepNumber}`): StepVerdictRecord {
  return { runId: 'r', stepNumber, name, result, explanation: result === null ? null : `why ${stepNumber}`, completed, updatedAt: '2024-01-01T00:00:00.000Z' };
}

describe('aggregate evaluation result (spec table)', () => {
  describe('one row each', () => {
    it('pass: run success and every evaluated verdict satisfied', () => {
      assert.equal(aggregateResult('success', [judged('pass'), plain(), judged('pass')]), 'pass');
    });
    it('fail: any step verdict not satisfied', () => {
      assert.equal(aggregateResult('success', [judged('pass'), judged('fail')]), 'fail');
      assert.equal(aggregateResult('failure', [judged('fail'), judged('pass')]), 'fail');
    });
    it('pending: run still in_progress', () => {
      assert.equal(aggregateResult('in_progress', [judged('pass'), judged(null, false)]), 'pending');
    });
    it('pending: a step verdict not yet written', () => {
      assert.equal(aggregateResult('success', [judged('pass'), judged(null)]), 'pending');
    });
    it('partial: failure or cancelled with a completed step that has a verdict', () => {
      assert.equal(aggregateResult('failure', [judged('pass'), judged('not_evaluated', false)]), 'partial');
      assert.equal(aggregateResult('cancelled', [judged('pass'), plain(false)]), 'partial');
    });
    it('skipped: failure or cancelled with no evaluated steps', () => {
      assert.equal(aggregateResult('failure', [judged('not_evaluated', false), judged('not_evaluated', false)]), 'skipped');
      assert.equal(aggregateResult('cancelled', [plain(true), judged('not_evaluated', false)]), 'skipped');
    });
    it('skipped: no step had an objective', () => {
      assert.equal(aggregateResult('success', [plain(), plain()]), 'skipped');
      assert.equal(aggregateResult('failure', [plain(), plain(false)]), 'skipped');
    });
    it('unknown: a verdict undetermined and no step failed', () => {
      assert.equal(aggregateResult('success', [judged('pass'), judged('unknown')]), 'unknown');
    });
  });

  describe('precedence where rows overlap', () => {
    it('in_progress is pending even when a step already failed', () => {
      assert.equal(aggregateResult('in_progress', [judged('fail'), judged(null, false)]), 'pending');
    });
    it('fail wins over a verdict still being written', () => {
      assert.equal(aggregateResult('success', [judged('fail'), judged(null)]), 'fail');
    });
    it('fail wins over unknown', () => {
      assert.equal(aggregateResult('success', [judged('unknown'), judged('fail')]), 'fail');
    });
    it('a failed run with a pass and an unknown is partial', () => {
      assert.equal(aggregateResult('failure', [judged('pass'), judged('unknown')]), 'partial');
    });
    it('a failed run whose only verdicts are unknown is unknown', () => {
      assert.equal(aggregateResult('cancelled', [judged('unknown'), judged('not_evaluated', false)]), 'unknown');
    });
    it('a success with objective steps none of which was evaluated is skipped (nothing to call a pass)', () => {
      assert.equal(aggregateResult('success', [judged('not_evaluated')]), 'skipped');
    });
    it('a run with no steps at all is skipped once ended', () => {
      assert.equal(aggregateResult('success', []), 'skipped');
    });
  });
});

describe('evaluateRun (step view)', () => {
  const steps: AgentStepConfig[] = [
    { name: 'Outline', prompt: 'p1', objective: 'three points' },
    { prompt: 'p2' },
    { name: 'Check', prompt: 'p3', objective: 'checked' },
  ];
  const run = (status: RunStatus) => ({ id: 'run-1', status });

  it('orders steps by stepNumber, names null when unnamed, and shows no-objective steps as not_evaluated', () => {
    const view = evaluateRun(run('success'), steps, [row(3, 'pass', true, 'Check'), row(1, 'pass', true, 'Outline'), row(2, null, true, null)]);
    assert.deepEqual(
      view.steps.map((s) => [s.stepNumber, s.name, s.result]),
      [
        [1, 'Outline', 'pass'],
        [2, null, 'not_evaluated'],
        [3, 'Check', 'pass'],
      ],
    );
    assert.equal(view.steps[1]?.explanation, null);
    assert.equal(view.steps[0]?.explanation, 'why 1');
    assert.equal(view.result, 'pass');
    assert.equal(view.runId, 'run-1');
  });

  it('in progress: steps not run yet are null (transient) and the aggregate is pending', () => {
    const view = evaluateRun(run('in_progress'), steps, [row(1, 'pass', true), row(2, null, false), row(3, null, false)]);
    assert.deepEqual(
      view.steps.map((s) => s.result),
      ['pass', 'not_evaluated', null],
    );
    assert.equal(view.result, 'pending');
  });

  it('a run that failed part-way: never-run steps are not_evaluated, the aggregate partial', () => {
    const view = evaluateRun(run('failure'), steps, [row(1, 'pass', true), row(2, null, false), row(3, null, false)]);
    assert.deepEqual(
      view.steps.map((s) => s.result),
      ['pass', 'not_evaluated', 'not_evaluated'],
    );
    assert.equal(view.result, 'partial');
  });

  it('a run cancelled before any step: skipped', () => {
    const view = evaluateRun(run('cancelled'), steps, []);
    assert.equal(view.steps.length, 3);
    assert.equal(view.result, 'skipped');
  });

  it('an ended run whose judged step verdict is not written yet: that step null, aggregate pending', () => {
    const view = evaluateRun(run('failure'), steps, [row(1, null, true), row(2, null, false), row(3, null, false)]);
    assert.equal(view.steps[0]?.result, null);
    assert.equal(view.result, 'pending');
  });
});
