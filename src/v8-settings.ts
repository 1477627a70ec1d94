// V8 settings of the serving processes (serve, worker), applied at start. An operator's own choice of
// any of them, as a node flag or in NODE_OPTIONS, wins.
//
// Heap growth: how far V8 lets the old generation grow past what survived its last full collection
// before it collects again. V8 picks up to 4x for a small heap; for a gateway whose live heap is
// ~25 MB that is a sawtooth reaching ~180 MB of RSS under sustained load (10-minute soak at c = 64).
// At 1.5x it stayed under ~135 MB for the same throughput (A/B, 3 interleaved 20 s runs at json c64:
// 6,640 vs 6,508 req/s, peak RSS 133 vs 179 MB): full collections come more often, and each is small.
//
// Garbage collection on the main thread when the process may run on one CPU only (its affinity: a
// `taskset`, a cpuset, a one-CPU machine). V8's concurrent marking, parallel scavenging and concurrent
// sweeping run on helper threads meant for other cores; on the same core they take turns with the
// thread serving requests, and every request in flight waits: a full collection's ~40 ms of concurrent
// marking showed as a cluster of 30-50 ms latencies every ~280 ms at json c64 (p99 40 ms; on the main
// thread, in incremental steps, 21 ms, and ~10% more requests per second; bench, one core).
//
// The young generation's size is not here: V8 fixes it when it sets up the heap, before any of our
// code runs, so package.json's start and worker scripts pass `--max-semi-space-size=8` (README, Memory).
import os from 'node:os';
import v8 from 'node:v8';

export const HEAP_GROWING_PERCENT = 50;

/**
 * The helper-thread collectors switched off on one CPU. Each is safe to change at run time (V8 reads it
 * when a collection starts); `--single-threaded-gc` and `--no-parallel-marking` are not (V8 aborts), so
 * child processes spawned by the gateway get `--single-threaded-gc` on their command line instead.
 */
export const MAIN_THREAD_GC_FLAGS = [
  '--no-concurrent-marking',
  '--no-parallel-scavenge',
  '--no-concurrent-sweeping',
  '--no-parallel-compaction',
  '--no-parallel-pointer-update',
] as const;

/** The V8 flag names an operator may have set (as `--name`, `--no-name`, `--name=…`, `_` for `-`). */
function chosenByOperator(names: readonly string[], execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  const nameOf = (flag: string): string =>
    flag
      .split('=')[0]!
      .replace(/_/g, '-')
      .replace(/^--(no-)?/, '');
  const normalised = names.map(nameOf);
  const chosen = (arg: string): boolean => arg.startsWith('--') && normalised.includes(nameOf(arg));
  return execArgv.some(chosen) || (nodeOptions ?? '').split(/\s+/).some(chosen);
}

/** The heap growth flag to set, or null when the operator already chose one. */
export function heapGrowthFlag(execArgv: readonly string[], nodeOptions: string | undefined): string | null {
  if (chosenByOperator(['heap-growing-percent'], execArgv, nodeOptions)) return null;
  return `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/** The flags that move collection to the main thread: none unless the process has one CPU and the operator chose none of them. */
export function mainThreadGcFlags(cpus: number, execArgv: readonly string[], nodeOptions: string | undefined): readonly string[] {
  if (cpus > 1) return [];
  if (chosenByOperator([...MAIN_THREAD_GC_FLAGS, 'single-threaded-gc', 'parallel-marking'], execArgv, nodeOptions)) return [];
  return MAIN_THREAD_GC_FLAGS;
}

/** The flags a node child process spawned by the gateway gets for the same reasons (one CPU: collection on its main thread). */
export function childGcFlags(cpus: number = os.availableParallelism()): string[] {
  return cpus > 1 ? [] : ['--single-threaded-gc'];
}

/** Applies both to this process (read by V8 at every collection). */
export function applyV8Settings(): void {
  const growth = heapGrowthFlag(process.execArgv, process.env['NODE_OPTIONS']);
  if (growth) v8.setFlagsFromString(growth);
  for (const flag of mainThreadGcFlags(os.availableParallelism(), process.execArgv, process.env['NODE_OPTIONS'])) v8.setFlagsFromString(flag);
}
