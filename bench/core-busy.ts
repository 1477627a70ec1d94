// How busy each core was over an interval, from the kernel's per-core time counters (/proc/stat, Linux).
// The soak prints it per window: a point bound by one core's CPU shows that core near 100%, one bound
// by waiting shows both below it (a stored stream's waits moved when one was removed; these told why).
import { readFile } from 'node:fs/promises';

/** One core's counters: time spent idle (idle + iowait) and in total, in clock ticks. */
export interface CoreTimes {
  idle: number;
  total: number;
}

/** The `cpuN` lines of a /proc/stat text, in core order. */
export function parseCoreTimes(stat: string): CoreTimes[] {
  const cores: CoreTimes[] = [];
  for (const line of stat.split('\n')) {
    const match = /^cpu\d+\s+(.*)$/.exec(line);
    if (!match) continue;
    const ticks = match[1]!.trim().split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal (guest and guest_nice are counted in user and nice).
    const total = ticks.slice(0, 8).reduce((sum, each) => sum + each, 0);
    cores.push({ idle: (ticks[3] ?? 0) + (ticks[4] ?? 0), total });
  }
  return cores;
}

/** Each core's busy share between two readings, in percent (NaN for a core without ticks between them). */
export function busyPercent(before: readonly CoreTimes[], after: readonly CoreTimes[]): number[] {
  return after.map((end, i) => {
    const start = before[i];
    const total = start ? end.total - start.total : 0;
    return start && total > 0 ? (1 - (end.idle - start.idle) / total) * 100 : NaN;
  });
}

/** The per-core counters now; null where /proc/stat cannot be read (not Linux). */
export async function readCoreTimes(): Promise<CoreTimes[] | null> {
  try {
    return parseCoreTimes(await readFile('/proc/stat', 'utf8'));
  } catch {
    return null;
  }
}
