// The bench's processes as its tests run them: the bench upstream (bench/upstream.ts), a driver that
// prints one JSON result (bench/loadgen.ts, bench/conversation-load.ts), and a test gateway configured
// as the bench configures its gateway (providers, models, organizations and plugins of
// bench/gateway-config.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { gatewayConfigDocument } from '../../bench/gateway-config';
import { startTestGateway, type TestGateway } from '../helpers/gateway';

const ROOT = path.resolve(__dirname, '../..');

/** Starts bench/upstream.ts with `env` added to this process's and resolves with the port it prints. */
export function startBenchUpstream(env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/upstream.ts')], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ child, port: (JSON.parse(line) as { port: number }).port });
    });
    child.once('exit', (code) => reject(new Error(`the bench upstream exited with ${String(code)}`)));
  });
}

/** Runs a bench driver (bench/<script>) as the bench does, in its own process, and resolves with the JSON it prints. */
export function runBenchDriver<T>(script: string, options: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', script), JSON.stringify(options)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim()) as T) : reject(new Error(`bench/${script} exited with ${String(code)}`))));
  });
}

/** Stops a bench process (SIGTERM) and waits for it to exit. */
export async function stopBenchProcess(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

export function startBenchGateway(driver: 'embedded' | 'postgres', port: number): Promise<TestGateway> {
  const doc = gatewayConfigDocument('/unused', { plain: port, tls: null }, driver, null);
  return startTestGateway({
    driver,
    config: { providers: doc['providers'], models: doc['models'], organizations: doc['organizations'], plugins: doc['plugins'] },
  });
}
