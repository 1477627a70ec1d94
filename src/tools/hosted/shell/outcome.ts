// What the model is told about a finished command: its exit code, whether and why it was killed
// (which limit), then its stdout and stderr.
import type { SandboxResult } from './sandbox';
import type { SandboxLimits } from './sandbox-args';

/** The limit (or event) that ended a command early. */
export type KillReason = 'wall_time' | 'output' | 'cancelled' | 'cpu' | 'memory' | 'file_size' | 'signal';

export interface CommandOutcome {
  exitCode: number | null;
  killed: KillReason | null;
  /** Why, in words (null when the command ended on its own with no limit reached). */
  note: string | null;
}

export interface OutcomeLimits extends SandboxLimits {
  wallTimeMs: number;
  maxOutputBytes: number;
}

// What allocation failures print (libc's strerror, Python, mawk/gawk, C++, Node, Go, bash).
const OUT_OF_MEMORY = /cannot allocate memory|out of memory|memory exhausted|MemoryError|bad_alloc|allocation failed|failed to allocate|xmalloc: cannot/i;

export function outcomeOf(result: SandboxResult, limits: OutcomeLimits): CommandOutcome {
  const { exitCode } = result;
  switch (result.stopped) {
    case 'time':
      return {
        exitCode,
        killed: 'wall_time',
        note: `the command ran past its wall-time limit of ${limits.wallTimeMs} ms; it and everything it started were killed`,
      };
    case 'output':
      return {
        exitCode,
        killed: 'output',
        note: `the output passed the limit of ${limits.maxOutputBytes} bytes; it is cut there and the command was killed`,
      };
    case 'cancelled':
      return { exitCode, killed: 'cancelled', note: 'the call was cancelled; the command was killed' };
    case null:
      break;
  }
  switch (result.signal) {
    case 'SIGXCPU':
      return { exitCode, killed: 'cpu', note: `a process used up the CPU-time limit of ${limits.cpuSeconds} s (SIGXCPU)` };
    case 'SIGXFSZ':
      return { exitCode, killed: 'file_size', note: `a process passed the file-size limit of ${limits.maxFileMb} MiB (SIGXFSZ)` };
    case 'SIGKILL':
      // Not ours (we report our own kills above): the hard CPU limit, a second past the soft one.
      return { exitCode, killed: 'cpu', note: `killed by SIGKILL: a process went on past the hard CPU-time limit of ${limits.cpuSeconds + 1} s` };
    default:
      break;
  }
  if (exitCode !== 0 && OUT_OF_MEMORY.test(result.stderr)) {
    return { exitCode, killed: 'memory', note: `a process ran out of memory: the limit is ${limits.memoryMb} MiB of address space per process` };
  }
  if (result.signal !== null) return { exitCode, killed: 'signal', note: `ended by signal ${result.signal}` };
  return { exitCode, killed: null, note: null };
}

function section(name: string, text: string, cut: boolean): string {
  const body = text === '' ? '(empty)' : text.endsWith('\n') ? text.slice(0, -1) : text;
  return `--- ${name} ---\n${body}${cut ? '\n[… cut at the output limit]' : ''}`;
}

/** The text the model is shown. */
export function formatOutcome(result: SandboxResult, outcome: CommandOutcome): string {
  const lines = [`exit_code: ${outcome.exitCode ?? 'none (killed)'}`];
  if (outcome.killed !== null) lines.push(`killed: ${outcome.killed}: ${outcome.note ?? ''}`);
  lines.push(section('stdout', result.stdout, result.cut === 'stdout'), section('stderr', result.stderr, result.cut === 'stderr'));
  return lines.join('\n');
}
