// The run-status moves of the spec's run-status table, each a compare-and-set on the run row so two
// processes (a worker finishing, a user cancelling, a timeout sweep) never both win.
import type { Metrics } from '../log/metrics';
import type { Store } from '../store/port';
import type { RunRecord } from '../store/types';
import type { RunError } from './run-errors';

export interface TransitionDeps {
  store: Store;
  metrics: Metrics;
  now(): Date;
}

type Terminal = 'success' | 'failure' | 'cancelled';

/**
 * in_progress -> a terminal status: endedAt set, the lease released, `result` only kept on success,
 * `error` (why it failed or was cancelled) only otherwise. `generation`: the lease generation of the
 * execution ending it (its fence); absent for ends decided outside an execution (API cancel, sweeps).
 * Returns the ended run, or null when the run was not in progress any more (someone else ended it) or
 * the execution's lease was taken over.
 */
export async function endRun(
  deps: TransitionDeps,
  runId: string,
  status: Terminal,
  fields: { result?: string | null; error?: RunError },
  generation?: number,
): Promise<RunRecord | null> {
  const error = status === 'success' ? null : (fields.error ?? null);
  const ended = await deps.store.runs.update(
    runId,
    {
      status,
      result: status === 'success' ? (fields.result ?? null) : null,
      error: error?.message ?? null,
      errorCode: error?.code ?? null,
      endedAt: deps.now().toISOString(),
      leaseOwner: null,
      leaseExpiresAt: null,
    },
    generation === undefined ? { whenStatus: ['in_progress'] } : { whenStatus: ['in_progress'], whenGeneration: generation },
  );
  if (ended) deps.metrics.runs.inc({ status });
  return ended;
}

export const TIMEOUT_ERROR: { error: RunError } = { error: { code: 'timeout', message: 'The run exceeded its timeout and was cancelled.' } };
