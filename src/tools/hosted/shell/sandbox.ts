// Runs one command in a bubblewrap sandbox (sandbox-args.ts) and bounds it from outside: wall time,
// output bytes, and the caller's abort. Inside, rlimits bound CPU, memory, processes and file size.
//
// Ending a sandbox: its init (host pid from bwrap's --info-fd) is killed; the pid namespace dies with
// it (the kernel kills every process in it before init is gone), and bwrap, which waits for init, then
// exits. So when bwrap has exited, nothing of the sandbox still runs: a next command of the same
// workspace starts on a quiet directory. bwrap's own process group is the fallback.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import type { Duplex } from 'node:stream';
import { bwrapOptions, SANDBOX_FDS, sandboxAccounts, sandboxCommand, type SandboxSpec } from './sandbox-args';

/** The host user bwrap runs as (when the gateway runs as root); null: the gateway's own user. */
export interface HostUser {
  uid: number;
  gid: number;
}

export interface SandboxRun {
  bwrapPath: string;
  hostUser: HostUser | null;
  spec: SandboxSpec;
  /** Run by /bin/sh -c in the workspace. */
  command: string;
  wallTimeMs: number;
  /** Bytes of stdout and stderr together that are kept; past them the sandbox is ended. */
  maxOutputBytes: number;
  signal?: AbortSignal;
}

/** Why the sandbox was ended from outside. */
export type StopCause = 'time' | 'output' | 'cancelled';

export interface SandboxResult {
  /** Whether the sandbox came up (its first shell ran); false: bwrap failed, its stderr says why. */
  started: boolean;
  /** The exit status bwrap reported (the command's; 128 + n when signal n ended it); null when ended from outside. */
  exitCode: number | null;
  /** The signal behind a 128 + n status, e.g. SIGXCPU. */
  signal: NodeJS.Signals | null;
  /** Set when the sandbox was ended from outside, and why. */
  stopped: StopCause | null;
  stdout: string;
  stderr: string;
  /** The stream whose output passed maxOutputBytes (the rest of it, and of the other, was dropped). */
  cut: 'stdout' | 'stderr' | null;
  durationMs: number;
}

/** How long bwrap gets to exit after its sandbox's init was killed before its process group is killed too. */
const KILL_GRACE_MS = 2000;
/** How long the output pipes may stay open after bwrap exited (nothing can hold them then). */
const CLOSE_GRACE_MS = 2000;

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(Object.entries(constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]));

function extraFd(child: ChildProcess, fd: number): Duplex {
  const stream = child.stdio[fd];
  if (!stream) throw new Error(`bwrap has no descriptor ${fd}`);
  return stream as Duplex;
}

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/** Whether a process exists and is not a zombie (a dead pid namespace init is one until reaped). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2) !== 'Z';
  } catch {
    return false;
  }
}

async function untilGone(pid: number, ceilingMs: number): Promise<void> {
  const deadline = Date.now() + ceilingMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

export function runInSandbox(run: SandboxRun): Promise<SandboxResult> {
  return new Promise<SandboxResult>((resolve, reject) => {
    const startedAt = Date.now();
    const child = spawn(run.bwrapPath, ['--args', String(SANDBOX_FDS.args), ...sandboxCommand(run.command, run.spec.limits)], {
      // Nothing of the gateway's environment or working directory reaches bwrap (its init's
      // /proc/1/environ is readable inside).
      env: {},
      cwd: '/',
      // Its own process group: the fallback kill reaches bwrap and anything it forked outside the sandbox.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
      ...(run.hostUser ? { uid: run.hostUser.uid, gid: run.hostUser.gid } : {}),
    });

    let initPid: number | null = null;
    let started = false;
    let stopped: StopCause | null = null;
    let cut: SandboxResult['cut'] = null;
    let budget = run.maxOutputBytes;
    let settled = false;
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const timers: NodeJS.Timeout[] = [];

    const killGroup = (): void => {
      if (child.pid !== undefined) {
        killQuietly(-child.pid, 'SIGKILL');
        killQuietly(child.pid, 'SIGKILL');
      }
    };
    const stop = (cause: StopCause): void => {
      if (stopped !== null || settled) return;
      stopped = cause;
      if (initPid !== null) {
        killQuietly(initPid, 'SIGKILL');
        timers.push(setTimeout(killGroup, KILL_GRACE_MS));
      } else {
        killGroup();
      }
    };
    const onAbort = (): void => stop('cancelled');

    const keep = (name: 'stdout' | 'stderr', chunks: Buffer[]) => (data: Buffer) => {
      if (cut !== null) return;
      if (data.length > budget) {
        chunks.push(data.subarray(0, budget));
        budget = 0;
        cut = name;
        stop('output');
        return;
      }
      chunks.push(data);
      budget -= data.length;
    };
    child.stdout?.on('data', keep('stdout', stdout));
    child.stderr?.on('data', keep('stderr', stderr));

    const finish = (code: number | null): void => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      run.signal?.removeEventListener('abort', onAbort);
      for (const stream of child.stdio) stream?.destroy();
      const exitCode = stopped === null ? code : null;
      const signal = exitCode !== null && exitCode > 128 ? (SIGNAL_NAMES.get(exitCode - 128) ?? null) : null;
      resolve({
        started,
        exitCode,
        signal,
        stopped,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        cut,
        durationMs: Date.now() - startedAt,
      });
    };

    child.once('error', (err) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      run.signal?.removeEventListener('abort', onAbort);
      reject(new Error(`bwrap could not be started (${run.bwrapPath}): ${err.message}`));
    });
    let pipesClosed = false;
    child.once('close', () => {
      pipesClosed = true;
    });
    child.once('exit', (code) => {
      // When bwrap was killed rather than left to see its init exit, wait for init (and so the whole
      // pid namespace) to be gone before saying the command ended.
      const gone = initPid !== null && code === null ? untilGone(initPid, KILL_GRACE_MS) : Promise.resolve();
      const closed = new Promise<void>((r) => {
        if (pipesClosed) r();
        else child.once('close', () => r());
        timers.push(setTimeout(r, CLOSE_GRACE_MS));
      });
      void Promise.all([gone, closed]).then(() => finish(code));
    });
    if (child.pid === undefined) return;

    const info = extraFd(child, SANDBOX_FDS.info);
    let infoText = '';
    info.setEncoding('utf8');
    info.on('data', (text: string) => {
      infoText += text;
      const match = /"child-pid"\s*:\s*(\d+)/.exec(infoText);
      if (match && initPid === null) {
        initPid = Number(match[1]);
        // Stopped before bwrap said which process to kill: that one goes now too.
        if (stopped !== null) killQuietly(initPid, 'SIGKILL');
      }
    });
    extraFd(child, SANDBOX_FDS.started).once('data', () => {
      started = true;
    });
    // Errors on the descriptor sockets (bwrap closed its end early) are seen as its exit status.
    for (const fd of Object.values(SANDBOX_FDS)) extraFd(child, fd).on('error', () => undefined);

    const accounts = sandboxAccounts();
    extraFd(child, SANDBOX_FDS.args).end(
      bwrapOptions(run.spec)
        .map((arg) => `${arg}\0`)
        .join(''),
    );
    extraFd(child, SANDBOX_FDS.passwd).end(accounts.passwd);
    extraFd(child, SANDBOX_FDS.group).end(accounts.group);

    timers.push(setTimeout(() => stop('time'), run.wallTimeMs));
    if (run.signal?.aborted) stop('cancelled');
    else run.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
