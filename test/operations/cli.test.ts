// The admin CLI as a newcomer meets it: usage and exit codes, output that pipes cleanly (no build
// messages in stdout, no EPIPE stack trace), `config check` listing every problem, and the
// build-on-first-use step of bin/agent-gateway.js stopping with the signal it is sent.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, runCli, tempDir, writeConfig } from '../helpers/process';
import { baseConfigDocument } from '../helpers/config';
import { isRunning, waitFor } from '../helpers/wait';

describe('admin CLI: usage, exit codes and output (real processes)', function () {
  this.timeout(240_000);
  let root: string;
  before(() => {
    root = tempDir('agw-cli-');
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('help, --help and -h print the usage and exit 0 without starting anything', async () => {
    for (const args of [['help'], ['--help'], ['-h'], ['serve', '--help']]) {
      const result = await runCli(args, { cwd: root });
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stdout, /^usage: agent-gateway <command>/, args.join(' '));
      assert.match(result.stdout, /config check \[--config FILE\]/);
      assert.equal(result.stderr, '', args.join(' '));
    }
  });

  it('an unknown command or subcommand prints the reason and the usage to stderr and exits 2', async () => {
    for (const [args, reason] of [
      [['frobnicate'], 'unknown command "frobnicate"'],
      [['keys', 'rotate'], 'unknown keys command "rotate"'],
      [['config', 'lint'], 'unknown config command "lint"'],
    ] as const) {
      const result = await runCli([...args], { cwd: root });
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stdout, '');
      const [first, ...rest] = result.stderr.split('\n');
      assert.equal(first, `agent-gateway: ${reason}`);
      assert.match(rest.join('\n'), /^usage: agent-gateway <command>/);
    }
  });

  it('openapi into a reader that stops early (`| head`) exits 0 without a stack trace', async () => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist/src/main.js'), 'openapi'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Read one chunk, then close our end, as `head -c` does (the document is far larger than a pipe buffer).
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    assert.equal(stderr, '');
    assert.equal(code, 0);
  });

  it('config check lists every problem at once, one a line with its path and fix, and exits 1', async () => {
    const doc = baseConfigDocument();
    doc['server'] = { port: 'eighty' };
    (doc['organizations'] as Record<string, unknown>[])[0]!['models'] = ['dmeo'];
    const file = writeConfig(root, doc, 'typo.yaml');
    const result = await runCli(['config', 'check', '--config', file], { cwd: root });
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stdout, '');
    const [head, ...lines] = result.stderr.trimEnd().split('\n');
    assert.equal(head, 'agent-gateway: typo.yaml: 2 problems');
    assert.deepEqual(
      lines.map((l) => l.trim()),
      [
        'server.port: must be integer (fix: write integer instead of "eighty")',
        'organizations[0].models[0]: no model with id "dmeo" (fix: did you mean "demo"? ("*" (every model) or a model id: "*", "demo"))',
      ],
    );
  });
});

describe('bin/agent-gateway.js: build on first use (a fake clone with a fake build)', function () {
  this.timeout(240_000);
  let clone: string;

  /** A clone whose dist/ is missing and whose `npm run build` is build.js (which talks on stdout). */
  function fakeClone(buildScript: string): string {
    const dir = tempDir('agw-clone-');
    for (const file of ['bin/agent-gateway.js', 'scripts/ensure-built.js']) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      copyFileSync(path.join(ROOT, file), path.join(dir, file));
    }
    mkdirSync(path.join(dir, 'src'));
    writeFileSync(path.join(dir, 'src/main.ts'), '// source\n');
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'fake-clone', private: true, scripts: { build: 'node build.js' } }));
    writeFileSync(path.join(dir, 'build.js'), buildScript);
    return dir;
  }
  afterEach(() => rmSync(clone, { recursive: true, force: true }));

  it('writes the build messages to stderr: stdout carries only the command output', async () => {
    clone = fakeClone(`
      const fs = require('node:fs');
      console.log('> tsc -p tsconfig.json (build noise on stdout)');
      console.error('build noise on stderr');
      fs.mkdirSync('dist/src', { recursive: true });
      fs.writeFileSync('dist/src/main.js', "process.stdout.write(JSON.stringify({ openapi: '3.1.0' }));");
    `);
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(clone, 'bin/agent-gateway.js'), 'openapi'], {
        cwd: clone,
        env: { PATH: process.env['PATH'], HOME: process.env['HOME'] },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { openapi: '3.1.0' });
    assert.match(result.stderr, /building/);
    assert.match(result.stderr, /build noise on stdout/);
  });

  it('SIGTERM during the build stops the whole build (npm, its shell, the compiler) and exits', async () => {
    clone = fakeClone(`
      require('node:fs').writeFileSync('build.pid', String(process.pid));
      setInterval(() => {}, 1000);
    `);
    const child = spawn(process.execPath, [path.join(clone, 'bin/agent-gateway.js'), 'serve'], {
      cwd: clone,
      stdio: 'ignore',
      env: { PATH: process.env['PATH'], HOME: process.env['HOME'] },
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const pidFile = path.join(clone, 'build.pid');
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', { timeoutMs: 30_000, what: 'the build to start' });
    const buildPid = Number(readFileSync(pidFile, 'utf8'));
    assert.ok(isRunning(buildPid));
    child.kill('SIGTERM');
    assert.equal(await exited, 143);
    await waitFor(() => !isRunning(buildPid), { timeoutMs: 30_000, what: 'the build process to end' });
  });
});
