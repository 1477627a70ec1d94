// Runs the built CLI (dist/src/main.js, what `npm start` and `npx agent-gateway` run) as a real child
// process, for tests of start-up, shutdown, restarts and the admin commands.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';

export const ROOT = path.resolve(__dirname, '../..');
export const MAIN = path.join(ROOT, 'dist/src/main.js');

export function tempDir(prefix = 'agw-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Writes a config document as YAML into `dir` and returns its path. */
export function writeConfig(dir: string, doc: Record<string, unknown>, name = 'gateway.yaml'): string {
  const file = path.join(dir, name);
  writeFileSync(file, stringify(doc));
  return file;
}

function baseEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'], HOME: process.env['HOME'], ...extra };
  return env;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one CLI command to completion. The ceilings are generous: a fresh embedded store on a busy machine takes a minute. */
export function runCli(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd: options.cwd ?? ROOT, env: baseEnv(options.env ?? {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agent-gateway ${args.join(' ')} timed out; stderr: ${stderr}`));
    }, options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly url: string;
  stdout(): string;
  stderr(): string;
  /** Sends a signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartedChild {
  /** The JSON log line that said the process is up (`port` is set for serve). */
  readonly startLine: Record<string, unknown>;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** Sends `signal` unless the process already ended, then resolves with its exit code. */
  stop(signal: NodeJS.Signals): Promise<number | null>;
}

/**
 * Watches a just-spawned gateway process (stderr piped) until it logs "listening" or "worker started".
 * Rejects, killing it, when `timeoutMs` pass first; rejects when it exits first. `label` names the
 * process in those errors.
 */
export function whenStarted(child: ChildProcess, label: string, timeoutMs: number): Promise<StartedChild> {
  return new Promise((resolve, reject) => {
    let err = '';
    let settled = false;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      child.kill('SIGKILL');
      reject(new Error(`${label} did not start; stderr: ${err}`));
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
        resolve({
          startLine: entry,
          stderr: () => err,
          async stop(signal) {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        });
        return;
      }
    });
    child.once('exit', (code) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code} before starting; stderr: ${err}`));
    });
  });
}

/** Starts `serve` (or `worker`) and resolves once it logged that it is listening (or started). */
export async function startServer(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [MAIN, ...args], { cwd: options.cwd ?? ROOT, env: baseEnv(options.env ?? {}) });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const started = await whenStarted(child, 'server', options.timeoutMs ?? 120_000);
  return {
    child,
    url: `http://127.0.0.1:${String(started.startLine['port'] ?? '')}`,
    stdout: () => out,
    stderr: started.stderr,
    stop: (signal = 'SIGTERM') => started.stop(signal),
  };
}

/** A port that was free a moment ago (for tests that must name a port up front). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface TcpProxy {
  readonly port: number;
  /** Refuses new connections and cuts the open ones: the target looks unreachable. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  /**
   * Drops every byte both ways from now on, connections left open and new ones accepted: a network
   * partition (packets lost, no reset), until heal(). What was dropped is not sent later.
   */
  silence(): void;
  heal(): void;
  close(): Promise<void>;
}

/** A TCP relay to 127.0.0.1:targetPort that a test can cut, to make Redis or a database vanish. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let silent = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (bytes: Buffer) => void (silent || upstream.write(bytes)));
    upstream.on('data', (bytes: Buffer) => void (silent || client.write(bytes)));
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
  });
  let port = 0;
  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  const cut = async (): Promise<void> => {
    if (!server.listening) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  await listen();
  return {
    port,
    cut,
    restore: listen,
    silence: () => void (silent = true),
    heal: () => void (silent = false),
    close: cut,
  };
}
