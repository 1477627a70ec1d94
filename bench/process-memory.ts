// A process's resident memory as the kernel reports it (/proc/<pid>/status, Linux).
import { readFileSync, writeFileSync } from 'node:fs';

/** Current (VmRSS) or peak (VmHWM) resident set size of `pid`, in MB. */
export function rssOf(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}

/**
 * Resets a process's peak RSS (VmHWM) to its current RSS (Linux 4.0+, a process of ours), so that a
 * peak read later covers only what came after. False when the kernel does not allow it.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
