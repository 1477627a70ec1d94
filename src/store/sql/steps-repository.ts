import type { StepVerdictRepository } from '../port';
import type { StepResult, StepVerdictRecord } from '../types';
import type { SqlExecutor, SqlParam } from './database';
import { iso, nowIso, type Timestamp } from './rows';

interface StepRow {
  run_id: string;
  step_number: number;
  name: string | null;
  result: StepResult | null;
  explanation: string | null;
  completed: boolean;
  updated_at: Timestamp;
}

function toStep(row: StepRow): StepVerdictRecord {
  return {
    runId: row.run_id,
    stepNumber: row.step_number,
    name: row.name,
    result: row.result,
    explanation: row.explanation,
    completed: row.completed,
    updatedAt: iso(row.updated_at),
  };
}

export function sqlSteps(db: SqlExecutor): StepVerdictRepository {
  return {
    async init(runId, steps) {
      if (steps.length === 0) return;
      const now = nowIso();
      const params: SqlParam[] = [runId, now];
      const values = steps.map((step) => {
        params.push(step.stepNumber, step.name);
        return `($1, $${params.length - 1}::int, $${params.length}::text, NULL, NULL, false, $2)`;
      });
      await db.query(
        `INSERT INTO step_verdicts (run_id, step_number, name, result, explanation, completed, updated_at)
         VALUES ${values.join(', ')} ON CONFLICT (run_id, step_number) DO NOTHING`,
        params,
      );
    },
    async update(runId, stepNumber, patch) {
      const params: SqlParam[] = [runId, stepNumber, nowIso()];
      const sets = ['updated_at = $3'];
      if (patch.result !== undefined) {
        params.push(patch.result);
        sets.push(`result = $${params.length}`);
      }
      if (patch.explanation !== undefined) {
        params.push(patch.explanation);
        sets.push(`explanation = $${params.length}`);
      }
      if (patch.completed !== undefined) {
        params.push(patch.completed);
        sets.push(`completed = $${params.length}`);
      }
      await db.query(`UPDATE step_verdicts SET ${sets.join(', ')} WHERE run_id = $1 AND step_number = $2`, params);
    },
    async list(runId) {
      return (await db.query<StepRow>('SELECT * FROM step_verdicts WHERE run_id = $1 ORDER BY step_number', [runId])).map(toStep);
    },
  };
}
