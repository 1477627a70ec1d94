// Waiting for a condition instead of sleeping a fixed time: the machine running the suite may be slow
// and busy, so a test waits as long as the ceiling allows and goes on the moment the condition holds.
import { readdirSync, readFileSync } from 'node:fs';

export interface WaitOptions {
  /** The ceiling: generous, it is only reached when the test fails. */
  timeoutMs?: number;
  /** What is awaited, for the failure message. */
  what: string;
  intervalMs?: number;
}

/** Resolves once `condition` returns true (or resolves to true); rejects after the ceiling. */
export async function waitFor(condition: () => boolean | Promise<boolean>, options: WaitOptions): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${options.what}`);
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 50));
  }
}

/**
 * `work`'s outcome and how long it took, or 'still waiting' when it has not settled within `ms`: for
 * a test of something that must not hang, which fails with a message instead of at mocha's timeout.
 */
export async function within<T>(ms: number, work: Promise<T>): Promise<{ value?: T; error?: Error; waited: number } | 'still waiting'> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still waiting'>((resolve) => (timer = setTimeout(() => resolve('still waiting'), ms)));
  try {
    return await Promise.race([
      work.then(
        (value) => ({ value, waited: Date.now() - started }),
        (error: Error) => ({ error, waited: Date.now() - started }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether a process exists and is not a zombie (an exited child nobody reaped yet). Linux /proc. */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 3, after the parenthesised command name (which may itself contain spaces or parentheses).
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Every live descendant of `pid` (children, grandchildren, ...), read from /proc. */
export function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirProc()) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(fields[1]);
      const siblings = parents.get(ppid) ?? [];
      siblings.push(entry);
      parents.set(ppid, siblings);
    } catch {
      // The process ended while we looked.
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of parents.get(queue.shift()!) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out.filter(isRunning);
}

function readdirProc(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}
