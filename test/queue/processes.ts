// Real gateway and worker processes from the TypeScript sources (node --import tsx src/main.ts), so
// process tests need no build of dist/ (shared by everyone working in the tree).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { stringify } from 'yaml';
import { writeFileSync } from 'node:fs';
import { baseConfigDocument, mergeConfig, type ConfigDocument } from '../helpers/config';

export const ROOT = path.resolve(__dirname, '../..');

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
export function startProcess(command: 'serve' | 'worker', configFile: string, timeoutMs = 30_000): Promise<Proc> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts'), command, '--config', configFile], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'], HOME: process.env['HOME'] },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    let settled = false;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      child.kill('SIGKILL');
      reject(new Error(`${command} did not start; stderr: ${err}`));
    }, timeoutMs);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (settled) return;
      for (const line of err.split('\n')) {
        if (!line.startsWith('{')) continue;
        let entry: Record<string, unknown>;
        try {
          entry = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue;
        }
        if (entry['message'] !== 'listening' && entry['message'] !== 'worker started') continue;
        settled = true;
        clearTimeout(timer);
        const proc: Proc = {
          child,
          url: entry['port'] ? `http://127.0.0.1:${String(entry['port'])}` : '',
          stderr: () => err,
          async kill(signal) {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            await exited;
            live.delete(proc);
          },
        };
        live.add(proc);
        resolve(proc);
        return;
      }
    });
    child.once('exit', (code) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code} before starting; stderr: ${err}`));
    });
  });
}

/** Kills every process still running (after hooks). */
export async function killAll(): Promise<void> {
  await Promise.all([...live].map((p) => p.kill('SIGKILL')));
}
