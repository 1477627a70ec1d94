// The run-status moves of the spec's run-status table, each a compare-and-set on the run row so two
// processes (a worker finishing, a user cancelling, a timeout sweep) never both win.
import type { Metrics } from '../log/metrics';
import type { Store } from '../store/port';
import type { RunRecord } from '../store/types';

export interface TransitionDeps {
  store: Store;
  metrics: Metrics;
  now(): Date;
}

type Terminal = 'success' | 'failure' | 'cancelled';

/**
 * in_progress -> a terminal status: endedAt set, the lease released, `result` only kept on success.
 * Returns the ended run, or null when the run was not in progress any more (someone else ended it).
 */
export async function endRun(
  deps: TransitionDeps,
  runId: string,
  status: Terminal,
  fields: { result?: string | null; error?: string | null },
): Promise<RunRecord | null> {
  const ended = await deps.store.runs.update(
    runId,
    {
      status,
      result: status === 'success' ? (fields.result ?? null) : null,
      error: fields.error ?? null,
      endedAt: deps.now().toISOString(),
      leaseOwner: null,
      leaseExpiresAt: null,
    },
    { whenStatus: ['in_progress'] },
  );
  if (ended) deps.metrics.runs.inc({ status });
  return ended;
}

export const TIMEOUT_MESSAGE = 'The run exceeded its timeout and was cancelled.';
