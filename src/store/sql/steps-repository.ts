import type { StepVerdictRepository } from '../port';
import { LeaseLostError, type StepInit, type StepResult, type StepVerdictRecord } from '../types';
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

/** Creates a run's step rows (result null, completed false); existing rows are kept. */
export async function insertSteps(db: SqlExecutor, runId: string, steps: readonly StepInit[]): Promise<void> {
  if (steps.length === 0) return;
  const params: SqlParam[] = [runId, nowIso()];
  const values = steps.map((step) => {
    params.push(step.stepNumber, step.name);
    return `($1, $${params.length - 1}::int, $${params.length}::text, NULL, NULL, false, $2)`;
  });
  await db.query(
    `INSERT INTO step_verdicts (run_id, step_number, name, result, explanation, completed, updated_at)
     VALUES ${values.join(', ')} ON CONFLICT (run_id, step_number) DO NOTHING`,
    params,
  );
}

export function sqlSteps(db: SqlExecutor): StepVerdictRepository {
  return {
    async init(runId, steps) {
      await insertSteps(db, runId, steps);
    },
    async update(runId, stepNumber, patch, fence) {
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
      if (!fence) {
        await db.query(`UPDATE step_verdicts SET ${sets.join(', ')} WHERE run_id = $1 AND step_number = $2`, params);
        return;
      }
      // The fence and the write in one statement: the run row share-locked while in progress under the
      // fence's generation (see holdFence in conversations-repository.ts), the step row updated only then.
      params.push(fence.generation);
      const [row] = await db.query<{ held: boolean }>(
        `WITH fence AS (
           SELECT id FROM runs WHERE id = $1 AND status = 'in_progress' AND lease_generation = $${params.length} FOR SHARE
         ), updated AS (
           UPDATE step_verdicts SET ${sets.join(', ')} WHERE run_id IN (SELECT id FROM fence) AND step_number = $2 RETURNING 1
         )
         SELECT EXISTS (SELECT 1 FROM fence) AS held`,
        params,
      );
      if (!row?.held) throw new LeaseLostError(runId);
    },
    async list(runId) {
      return (await db.query<StepRow>('SELECT * FROM step_verdicts WHERE run_id = $1 ORDER BY step_number', [runId])).map(toStep);
    },
  };
}
