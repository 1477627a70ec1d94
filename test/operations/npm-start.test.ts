// `npm start` exactly as an operator runs it (package.json's start script, through npm and its shell),
// in a temporary copy of the app directory: a SIGTERM to the npm process, or a Ctrl-C to the whole
// process group, stops every process it started (npm, the gateway, the embedded store's child), and the
// next start finds the store free.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir, whenStarted } from '../helpers/process';
import { descendantsOf, isRunning, waitFor } from '../helpers/wait';

/** The app directory: package.json and config/ copied, everything else linked; its own ./data. */
function appCopy(): string {
  const dir = tempDir('agw-npm-start-');
  for (const entry of readdirSync(ROOT)) {
    if (['package.json', 'config', 'data', '.git', '.tmp'].includes(entry)) continue;
    symlinkSync(path.join(ROOT, entry), path.join(dir, entry));
  }
  copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  mkdirSync(path.join(dir, 'config'));
  copyFileSync(path.join(ROOT, 'config/gateway.yaml'), path.join(dir, 'config/gateway.yaml'));
  return dir;
}

interface NpmStart {
  npm: ChildProcess;
  /** npm and everything under it once the gateway listens: its shell (if any), the gateway, the store's child. */
  tree: number[];
  stderr(): string;
}

async function npmStart(dir: string): Promise<NpmStart> {
  // detached: a process group of its own, as a terminal gives a foreground job (and our own
  // process stays out of the group signals below).
  const npm = spawn('npm', ['start'], {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'], PORT: '0' },
  });
  npm.stdout!.resume();
  const started = await whenStarted(npm, 'npm start', 90_000);
  const tree = [npm.pid!, ...descendantsOf(npm.pid!)];
  return { npm, tree, stderr: started.stderr };
}

function stoppedLines(stderr: string): number {
  return stderr.split('\n').filter((line) => line.startsWith('{') && (JSON.parse(line) as { message?: string }).message === 'stopped').length;
}

describe('npm start: stops cleanly on SIGTERM / SIGINT (real npm, real processes)', function () {
  this.timeout(240_000);
  let dir: string;
  let running: NpmStart | null = null;
  before(() => {
    dir = appCopy();
  });
  after(() => {
    for (const pid of running?.tree ?? []) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('SIGTERM to the npm process ends npm, the gateway and the store child; a second start succeeds', async () => {
    running = await npmStart(dir);
    const first = running;
    // npm, the gateway and the embedded store's child at least.
    assert.ok(first.tree.length >= 3, `process tree: ${first.tree.join(', ')}`);
    first.npm.kill('SIGTERM');
    await waitFor(() => first.tree.every((pid) => !isRunning(pid)), { timeoutMs: 60_000, what: `processes ${first.tree.join(', ')} to end` });
    assert.equal(stoppedLines(first.stderr()), 1, first.stderr());

    running = await npmStart(dir);
    assert.doesNotMatch(running.stderr(), /in use/);
  });

  it('a Ctrl-C to the whole process group (npm forwards it again) stops everything once, cleanly', async () => {
    running ??= await npmStart(dir);
    const second = running;
    process.kill(-second.npm.pid!, 'SIGINT');
    await waitFor(() => second.tree.every((pid) => !isRunning(pid)), { timeoutMs: 60_000, what: `processes ${second.tree.join(', ')} to end` });
    assert.equal(stoppedLines(second.stderr()), 1, second.stderr());
    assert.doesNotMatch(second.stderr(), /"level":"error"/);
  });
});
