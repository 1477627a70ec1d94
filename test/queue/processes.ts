// Real gateway and worker processes from the TypeScript sources (node --import tsx src/main.ts), so
// process tests need no build of dist/ (shared by everyone working in the tree).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { stringify } from 'yaml';
import { writeFileSync } from 'node:fs';
import { baseConfigDocument, mergeConfig, type ConfigDocument } from '../helpers/config';
import { ROOT, whenStarted } from '../helpers/process';

export interface Proc {
  readonly child: ChildProcess;
  /** http://127.0.0.1:<port> for serve; '' for worker. */
  readonly url: string;
  stderr(): string;
  kill(signal: NodeJS.Signals): Promise<void>;
}

export function writeProcessConfig(file: string, patch: ConfigDocument): string {
  writeFileSync(file, stringify(mergeConfig(baseConfigDocument(), patch)));
  return file;
}

const live = new Set<Proc>();

/** Starts `serve` or `worker` and resolves once it logged "listening" / "worker started". */
export async function startProcess(command: 'serve' | 'worker', configFile: string, timeoutMs = 30_000): Promise<Proc> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts'), command, '--config', configFile], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'] },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const started = await whenStarted(child, command, timeoutMs);
  const port = started.startLine['port'];
  const proc: Proc = {
    child,
    url: port ? `http://127.0.0.1:${String(port)}` : '',
    stderr: started.stderr,
    async kill(signal) {
      await started.stop(signal);
      live.delete(proc);
    },
  };
  live.add(proc);
  return proc;
}

/** Kills every process still running (after hooks). */
export async function killAll(): Promise<void> {
  await Promise.all([...live].map((p) => p.kill('SIGKILL')));
}
