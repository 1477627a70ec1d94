// The run evaluation (GET /v1/runs/{runId}/evals): per-step verdicts and the aggregate result of the
// spec's "Aggregate evaluation result" table. The table's rows overlap (a failed run can have both a
// pass and an unknown verdict, an in-progress run can already hold a fail), so the precedence below
// is the rule; each row and each overlap has a unit test in test/agents/evaluation.test.ts.
//
// Step view. A stored verdict row says `result` (null until written) and `completed` (the step itself
// finished executing). What a client sees per step:
//   - the stored result when there is one (pass, fail, not_evaluated, unknown);
//   - `not_evaluated` when the step has no objective (no evaluation will ever be performed);
//   - `not_evaluated` when the run ended (failure/cancelled) before the step completed: it never ran,
//     so no verdict will ever come (null is reserved for "not yet", which is transient);
//   - otherwise null: the step has not run yet, or ran and its judge verdict is not written yet.
//
// Aggregate, first matching rule wins:
//   1. run `in_progress`                           -> pending  (verdicts can still change)
//   2. any step `fail`                             -> fail     (final: later verdicts cannot undo it)
//   3. any step still null (judge not written yet) -> pending
//   4. no step has an objective                    -> skipped
//   5. run `failure`/`cancelled`:
//        a completed step has `pass`               -> partial
//        else a step is `unknown`                  -> unknown
//        else (nothing was evaluated)              -> skipped
//   6. run `success`:
//        a step is `unknown`                       -> unknown  (no step failed: rule 2)
//        a step is `pass` (all evaluated passed)   -> pass
//        else (objective steps not evaluated)      -> skipped
import type { AgentStepConfig } from '../config/types';
import type { RunStatus, StepResult, StepVerdictRecord } from '../store/types';

export type AggregateResult = 'pass' | 'fail' | 'partial' | 'pending' | 'skipped' | 'unknown';

export interface EvaluationStep {
  stepNumber: number;
  name: string | null;
  result: StepResult | null;
  explanation: string | null;
}

export interface RunEvaluation {
  runId: string;
  result: AggregateResult;
  steps: EvaluationStep[];
}

interface StepState {
  stepNumber: number;
  name: string | null;
  hasObjective: boolean;
  completed: boolean;
  stored: StepResult | null;
  explanation: string | null;
}

function visibleResult(step: StepState, status: RunStatus): StepResult | null {
  if (step.stored !== null) return step.stored;
  if (!step.hasObjective) return 'not_evaluated';
  if (status !== 'in_progress' && status !== 'success' && !step.completed) return 'not_evaluated';
  return null;
}

export function aggregateResult(
  status: RunStatus,
  steps: readonly { result: StepResult | null; completed: boolean; hasObjective: boolean }[],
): AggregateResult {
  if (status === 'in_progress') return 'pending';
  const results = steps.map((s) => s.result);
  if (results.includes('fail')) return 'fail';
  if (results.includes(null)) return 'pending';
  if (!steps.some((s) => s.hasObjective)) return 'skipped';
  if (status === 'failure' || status === 'cancelled') {
    if (steps.some((s) => s.completed && s.result === 'pass')) return 'partial';
    if (results.includes('unknown')) return 'unknown';
    return 'skipped';
  }
  if (results.includes('unknown')) return 'unknown';
  if (results.includes('pass')) return 'pass';
  return 'skipped';
}

/**
 * Builds the evaluation from the run's version definition (which steps exist and which have an
 * objective) and the stored verdict rows. A step without a row (rows not initialised yet) counts as
 * not completed with no verdict. Steps ordered by stepNumber; `name` null when the step is unnamed.
 */
export function evaluateRun(
  run: { id: string; status: RunStatus },
  definitionSteps: readonly AgentStepConfig[],
  rows: readonly StepVerdictRecord[],
): RunEvaluation {
  const byNumber = new Map(rows.map((r) => [r.stepNumber, r]));
  const count = Math.max(definitionSteps.length, ...rows.map((r) => r.stepNumber), 0);
  const states: StepState[] = [];
  for (let n = 1; n <= count; n++) {
    const row = byNumber.get(n);
    const configured = definitionSteps[n - 1];
    states.push({
      stepNumber: n,
      name: row?.name ?? configured?.name ?? null,
      hasObjective: configured?.objective !== undefined && configured.objective !== '',
      completed: row?.completed ?? false,
      stored: row?.result ?? null,
      explanation: row?.explanation ?? null,
    });
  }
  const steps = states.map((s) => {
    const result = visibleResult(s, run.status);
    return { view: { stepNumber: s.stepNumber, name: s.name, result, explanation: result === 'not_evaluated' ? null : s.explanation }, state: s, result };
  });
  return {
    runId: run.id,
    result: aggregateResult(
      run.status,
      steps.map((s) => ({ result: s.result, completed: s.state.completed, hasObjective: s.state.hasObjective })),
    ),
    steps: steps.map((s) => s.view),
  };
}
