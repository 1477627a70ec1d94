// What the run service (in buildApp) and the runtime (queue consumer, sweepers) share in one process:
// the queue, the runs executing here, and this process's lease owner id.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { RunQueue } from '../queue/port';
import { ActiveRuns } from './active-runs';

export interface RunEngine {
  readonly queue: RunQueue;
  readonly active: ActiveRuns;
  /** Lease owner id: host, pid and a random part (a restarted process is a new owner). */
  readonly owner: string;
  readonly leaseMs: number;
}

export function createRunEngine(queue: RunQueue, leaseSeconds: number): RunEngine {
  return {
    queue,
    active: new ActiveRuns(),
    owner: `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    leaseMs: leaseSeconds * 1000,
  };
}
