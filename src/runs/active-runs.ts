// The runs this process is executing right now, so a cancel or a shutdown reaches them at once (other
// processes notice a cancel at their next lease renewal).

export type StopReason = 'cancelled' | 'timeout' | 'lease_lost' | 'shutdown';

/** The abort reason of a run's signal: why the executor stopped. */
export class RunStopped extends Error {
  constructor(readonly reason: StopReason) {
    super(`run stopped: ${reason}`);
    this.name = 'RunStopped';
  }
}

export class ActiveRuns {
  private readonly runs = new Map<string, AbortController>();

  /**
   * Marks the run as executing here and returns its controller, or null when it already is: one process
   * never runs two executions of one run, whatever its lease in the store says.
   */
  claim(runId: string): AbortController | null {
    if (this.runs.has(runId)) return null;
    const controller = new AbortController();
    this.runs.set(runId, controller);
    return controller;
  }

  unregister(runId: string, controller: AbortController): void {
    if (this.runs.get(runId) === controller) this.runs.delete(runId);
  }

  /** Stops the run if this process executes it; true when it did. */
  stop(runId: string, reason: StopReason): boolean {
    const controller = this.runs.get(runId);
    if (!controller || controller.signal.aborted) return false;
    controller.abort(new RunStopped(reason));
    return true;
  }

  stopAll(reason: StopReason): void {
    for (const runId of [...this.runs.keys()]) this.stop(runId, reason);
  }

  get size(): number {
    return this.runs.size;
  }
}

/** Why the signal was aborted, when it was aborted by ActiveRuns or the executor. */
export function stopReasonOf(signal: AbortSignal): StopReason | null {
  return signal.aborted && signal.reason instanceof RunStopped ? signal.reason.reason : null;
}
