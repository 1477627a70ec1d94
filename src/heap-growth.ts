// How far V8 lets the old generation grow past what survived its last full collection before it
// collects again. V8 picks up to 4x for a small heap; for a gateway whose live heap is ~25 MB that is
// a sawtooth reaching ~180 MB of RSS under sustained load (10-minute soak at c = 64). At 1.5x it stayed
// under ~135 MB for the same throughput (A/B, 3 interleaved 20 s runs at json c64: 6,640 vs 6,508
// req/s, peak RSS 133 vs 179 MB): full collections come more often, and each is small. Set for the
// serving processes only (serve, worker); an operator's own setting, as a node flag or in
// NODE_OPTIONS, wins.
import v8 from 'node:v8';

export const HEAP_GROWING_PERCENT = 50;

/** The V8 flag to set, or null when the operator already chose one. */
export function heapGrowthFlag(execArgv: readonly string[], nodeOptions: string | undefined): string | null {
  const chosen = (arg: string): boolean => /^--heap[-_]growing[-_]percent(=|$)/.test(arg);
  if (execArgv.some(chosen) || (nodeOptions ?? '').split(/\s+/).some(chosen)) return null;
  return `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/** Applies the heap growth limit to this process (read by V8 at every full collection). */
export function limitHeapGrowth(): void {
  const flag = heapGrowthFlag(process.execArgv, process.env['NODE_OPTIONS']);
  if (flag) v8.setFlagsFromString(flag);
}
