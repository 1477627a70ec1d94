// Work that must not run in the gateway's own process (it would leave memory or hooks behind for the
// process's life: PGlite's initdb, the browser tools' Chromium check) runs as a `node -e` script in a
// short-lived child process instead.
import { spawn } from 'node:child_process';

/** The most of the child's stderr kept (what it says of a failure). */
const STDERR_LIMIT = 16_384;

/**
 * Runs `script` with `node -e`, `args` as its process.argv.slice(1); resolves null when it exits 0,
 * else why not: its stderr, or how it ended. With `timeoutMs` the child is killed after that long.
 */
export function runNodeScript(script: string, args: readonly string[], options: { timeoutMs?: number } = {}): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', script, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_LIMIT) stderr += chunk.toString();
    });
    const timer = options.timeoutMs === undefined ? null : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    timer?.unref();
    child.once('error', (err) => {
      if (timer) clearTimeout(timer);
      resolve(err.message);
    });
    child.once('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve(code === 0 ? null : stderr.trim() || `the process ended with ${signal ?? `exit code ${String(code)}`}`);
    });
  });
}
