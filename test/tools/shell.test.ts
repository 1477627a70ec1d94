// svc_shell on the real bwrap: the start-up check (and the registry disabling the tool when it fails),
// ordinary use (exit codes, stderr, files shared with svc_file_*), and each limit reached. These tests
// fail, never skip, when bubblewrap is missing: CI must prove the sandbox works (.ci/run installs it).
import assert from 'node:assert/strict';
import { readdir, stat } from 'node:fs/promises';
import { Writable } from 'node:stream';
import winston from 'winston';
import { ToolRegistry } from '../../src/tools/registry';
import { fileShareTools } from '../../src/tools/hosted/file-share';
import { shellTools } from '../../src/tools/hosted/shell';
import { ToolFailure } from '../../src/tools/types';
import { descendantsOf } from '../helpers/wait';
import { parseShellOutput, shellHarness, TEST_SHELL_LIMITS, type ShellHarness } from './shell-harness';

const AS_ROOT = process.getuid?.() === 0;

describe('svc_shell', function () {
  this.timeout(30_000);
  let h: ShellHarness;

  before(async () => {
    h = await shellHarness();
    assert.equal(await h.set.check?.(), null, 'the sandbox works on this machine (bubblewrap installed: .ci/run installs it)');
  });
  after(async () => {
    await h?.close();
  });

  describe('start-up check', () => {
    it('passes with the installed bwrap, and the registry offers svc_shell', async () => {
      const registry = await ToolRegistry.create(h.deps, [shellTools]);
      assert.deepEqual(
        (await readdir(h.root)).filter((name) => name.startsWith('+sandbox-check')),
        [],
        'the check cleans up its workspace',
      );
      assert.equal(registry.get('acme', 'svc_shell')?.type, 'svc_shell');
      assert.equal(registry.whyNot('acme', 'svc_shell'), null);
    });

    it('fails when bwrap is not at bwrapPath, and the registry disables the tool saying why', async () => {
      const missing = await shellHarness({ bwrapPath: '/nonexistent/bwrap' });
      try {
        const reason = await missing.set.check?.();
        assert.match(reason ?? '', /bwrap is not installed at \/nonexistent\/bwrap .*bubblewrap/);
        const logLines: string[] = [];
        const sink = new Writable({
          write(chunk: Buffer, _encoding, done) {
            logLines.push(chunk.toString());
            done();
          },
        });
        const logger = winston.createLogger({ format: winston.format.json(), transports: [new winston.transports.Stream({ stream: sink })] });
        const registry = await ToolRegistry.create({ ...missing.deps, logger }, [shellTools]);
        assert.equal(registry.get('acme', 'svc_shell'), undefined);
        assert.match(registry.whyNot('acme', 'svc_shell') ?? '', /svc_shell is not available on this gateway: bwrap is not installed/);
        assert.deepEqual(registry.enabledFor('acme'), []);
        const logged = logLines.map((line) => JSON.parse(line) as { level: string; message: string; tools: string[]; reason: string });
        assert.deepEqual(
          logged.map((entry) => [entry.level, entry.tools, entry.reason.startsWith('bwrap is not installed')]),
          [['warn', ['svc_shell'], true]],
        );
      } finally {
        await missing.close();
      }
    });

    it('fails when bwrap is there but the sandbox does not come up (it runs one, not just looks for the file)', async () => {
      const broken = await shellHarness({ bwrapPath: '/bin/false' });
      try {
        assert.match((await broken.set.check?.()) ?? '', /^bwrap cannot run the sandbox here: exit status 1/);
      } finally {
        await broken.close();
      }
    });

    it('a command is never run without the sandbox: with a broken bwrap the call fails', async () => {
      const broken = await shellHarness({ bwrapPath: '/bin/false' });
      try {
        await assert.rejects(broken.sh('echo ran > proof'), (err: unknown) => err instanceof ToolFailure && /The sandbox did not start/.test(err.message));
        await assert.rejects(stat(`${await broken.ctx('conv-main').workspace.ensure()}/proof`), { code: 'ENOENT' });
      } finally {
        await broken.close();
      }
    });
  });

  describe('ordinary use', () => {
    it('reports the exit code, stdout and stderr', async () => {
      const out = parseShellOutput(await h.sh('echo to-out; echo to-err >&2; exit 3'));
      assert.deepEqual(out, { exitCode: '3', killed: null, stdout: 'to-out', stderr: 'to-err' });
      assert.deepEqual(parseShellOutput(await h.sh('true')), { exitCode: '0', killed: null, stdout: '(empty)', stderr: '(empty)' });
    });

    it('runs in the workspace as an unprivileged user, with a clean environment', async () => {
      process.env['AGW_SHELL_TEST_SECRET'] = 'gateway-env-must-not-leak';
      try {
        const out = parseShellOutput(await h.sh('pwd; id -u; echo "$HOME"; env | sort; tr "\\0" "\\n" < /proc/1/environ; grep CapEff /proc/self/status'));
        const lines = out.stdout.split('\n');
        assert.equal(lines[0], '/workspace');
        assert.equal(lines[1], '1000');
        assert.equal(lines[2], '/workspace');
        assert.ok(!out.stdout.includes('gateway-env-must-not-leak'), 'nothing of the gateway environment, not even in /proc/1/environ');
        assert.ok(!out.stdout.includes('DATABASE_URL') && !out.stdout.includes('NODE_'), out.stdout);
        assert.match(out.stdout, /^PATH=\/usr\/local\/sbin:/m);
        assert.match(out.stdout, /^CapEff:\s+0+$/m, 'no capabilities');
      } finally {
        delete process.env['AGW_SHELL_TEST_SECRET'];
      }
    });

    it('files a command writes are read by svc_file_read, and files svc_file_write made are changed by commands', async () => {
      const ctx = h.ctx('conv-files');
      await h.sh('mkdir -p out && printf "made in the sandbox\\n" > out/report.txt', 'conv-files');
      assert.equal((await h.file('svc_file_read').execute({ path: 'out/report.txt' }, ctx)).output, 'made in the sandbox\n');

      await h.file('svc_file_write').execute({ path: 'notes/todo.txt', content: 'first\n' }, ctx);
      const out = parseShellOutput(await h.sh('echo second >> notes/todo.txt && cat notes/todo.txt', 'conv-files'));
      assert.deepEqual([out.exitCode, out.stdout], ['0', 'first\nsecond']);
      if (AS_ROOT) {
        // Handed to the sandbox user: a root-owned file would have been read-only to it.
        const info = await stat(`${await ctx.workspace.ensure()}/notes/todo.txt`);
        assert.equal(info.uid, h.deps.config.tools.shell.sandboxUid);
      }
    });

    it('a FIFO a command made is refused by svc_file_read, svc_file_write and svc_file_share_with_user at once, never waited on', async () => {
      const ctx = h.ctx('conv-fifo');
      assert.equal(parseShellOutput(await h.sh('mkfifo pipe && echo made', 'conv-fifo')).stdout, 'made');
      const within = <T>(work: Promise<T>): Promise<T> =>
        Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('still blocked after 3 s')), 3000))]);
      await assert.rejects(
        within(h.file('svc_file_read').execute({ path: 'pipe' }, ctx)),
        (err: unknown) => err instanceof ToolFailure && /pipe is not a regular file/.test(err.message),
      );
      for (const append of [false, true]) {
        await assert.rejects(
          within(h.file('svc_file_write').execute({ path: 'pipe', content: 'x', append }, ctx)),
          (err: unknown) => err instanceof ToolFailure && /pipe is not a regular file/.test(err.message),
        );
      }
      const share = fileShareTools(h.deps).tools[0]!;
      await assert.rejects(
        within(share.execute({ path: 'pipe' }, ctx)),
        (err: unknown) => err instanceof ToolFailure && /pipe is not a file/.test(err.message),
      );
      // Ordinary files still read, replace and append.
      await h.file('svc_file_write').execute({ path: 'plain.txt', content: 'one two' }, ctx);
      await h.file('svc_file_write').execute({ path: 'plain.txt', content: 'three' }, ctx);
      await h.file('svc_file_write').execute({ path: 'plain.txt', content: '+four', append: true }, ctx);
      assert.equal((await h.file('svc_file_read').execute({ path: 'plain.txt' }, ctx)).output, 'three+four');
    });

    it("a conversation's commands run one at a time", async () => {
      const first = h.sh('echo start-1 >> order.log; sleep 0.4; echo end-1 >> order.log', 'conv-order');
      await new Promise((r) => setTimeout(r, 50));
      const second = h.sh('echo start-2 >> order.log', 'conv-order');
      await Promise.all([first, second]);
      assert.equal(parseShellOutput(await h.sh('cat order.log', 'conv-order')).stdout, 'start-1\nend-1\nstart-2');
    });

    it('refuses a missing or empty command and a bad timeout_ms', async () => {
      await assert.rejects(h.shell.execute({}, h.ctx('conv-args')), /command must be a non-empty string/);
      await assert.rejects(h.sh('   ', 'conv-args'), /command must be a non-empty string/);
      await assert.rejects(h.sh('true', 'conv-args', { timeout_ms: 0 }), /timeout_ms must be a positive integer/);
      await assert.rejects(h.sh('true', 'conv-args', { timeout_ms: 1.5 }), /timeout_ms must be a positive integer/);
    });

    it('asks the loop for a call time above its own wall time, so the sandbox reports its own kill', () => {
      assert.ok((h.shell.limits?.timeoutMs ?? 0) > TEST_SHELL_LIMITS.wallTimeMs);
      assert.ok((h.shell.limits?.maxOutputBytes ?? 0) > TEST_SHELL_LIMITS.maxOutputBytes);
    });
  });

  describe('limits', () => {
    it('wall time: timeout_ms kills the command and everything it started', async () => {
      const before = new Set(descendantsOf(process.pid));
      const started = Date.now();
      const out = parseShellOutput(await h.sh('echo before; sleep 30 & sleep 30', 'conv-limits', { timeout_ms: 300 }));
      assert.ok(Date.now() - started < 3000, 'returned soon after the limit');
      assert.equal(out.exitCode, 'none (killed)');
      assert.match(out.killed ?? '', /^wall_time: .*300 ms/);
      assert.equal(out.stdout, 'before', 'output before the kill is kept');
      assert.deepEqual(
        descendantsOf(process.pid).filter((pid) => !before.has(pid)),
        [],
        'no sandbox process is left',
      );
    });

    it('wall time: timeout_ms cannot raise the configured wall time', async () => {
      const short = await shellHarness({ wallTimeMs: 400 });
      try {
        const started = Date.now();
        const out = parseShellOutput(await short.sh('sleep 30', 'conv-cap', { timeout_ms: 600_000 }));
        assert.match(out.killed ?? '', /^wall_time: .*400 ms/);
        assert.ok(Date.now() - started < 3000);
      } finally {
        await short.close();
      }
    });

    it('cancelling the call kills the command', async () => {
      const before = new Set(descendantsOf(process.pid));
      const abort = new AbortController();
      const call = h.shell.execute({ command: 'sleep 30' }, h.ctx('conv-cancel', abort.signal));
      setTimeout(() => abort.abort(), 200);
      const out = parseShellOutput((await call).output);
      assert.match(out.killed ?? '', /^cancelled: /);
      assert.deepEqual(
        descendantsOf(process.pid).filter((pid) => !before.has(pid)),
        [],
      );
    });

    it('close() kills the commands still running', async () => {
      const closable = await shellHarness();
      try {
        const started = Date.now();
        const call = closable.sh('sleep 30', 'conv-close');
        await new Promise((r) => setTimeout(r, 300));
        await closable.set.close?.();
        assert.match(parseShellOutput(await call).killed ?? '', /^cancelled: /);
        assert.ok(Date.now() - started < 5000);
        await assert.rejects(closable.sh('true', 'conv-close'), /cancelled before the command started/);
      } finally {
        await closable.close();
      }
    });

    it('endless output (yes) is cut at maxOutputBytes and the command killed', async () => {
      const started = Date.now();
      const text = await h.sh('yes', 'conv-limits');
      const out = parseShellOutput(text);
      assert.match(out.killed ?? '', /^output: .*4096 bytes/);
      assert.ok(out.stdout.endsWith('[… cut at the output limit]'));
      assert.equal(
        Buffer.byteLength(out.stdout.replace(/\n\[… cut at the output limit\]$/, '')),
        TEST_SHELL_LIMITS.maxOutputBytes - 1,
        'kept exactly the limit (less the final newline)',
      );
      assert.ok(Date.now() - started < TEST_SHELL_LIMITS.wallTimeMs, 'killed at the output limit, not the wall time');
    });

    describe('CPU time', () => {
      // CPU seconds accrue slower than wall seconds on a busy machine: a wall time these never reach.
      let roomy: ShellHarness;
      before(async () => {
        roomy = await shellHarness({ wallTimeMs: 50_000 });
      });
      after(async () => {
        await roomy?.close();
      });

      it('a CPU loop is killed at cpuSeconds (SIGXCPU)', async () => {
        const out = parseShellOutput(await roomy.sh('while :; do :; done', 'conv-cpu'));
        assert.match(out.killed ?? '', /^cpu: .*1 s \(SIGXCPU\)/);
        assert.equal(out.exitCode, '152');
      });

      it('a CPU loop ignoring SIGXCPU is killed a second later (SIGKILL)', async () => {
        const out = parseShellOutput(await roomy.sh("trap '' XCPU; while :; do :; done", 'conv-cpu'));
        assert.match(out.killed ?? '', /^cpu: killed by SIGKILL: .*hard CPU-time limit of 2 s/);
        assert.equal(out.exitCode, '137');
      });
    });

    it('a memory hog is stopped at memoryMb', async () => {
      const out = parseShellOutput(await h.sh('awk \'BEGIN { s = "x"; while (1) s = s s }\'', 'conv-limits'));
      assert.match(out.killed ?? '', /^memory: .*128 MiB of address space per process/);
      assert.notEqual(out.exitCode, '0');
    });

    it('a file is cut at maxFileMb (SIGXFSZ)', async () => {
      const out = parseShellOutput(await h.sh('head -c 3000000 /dev/zero > big.bin', 'conv-limits'));
      assert.match(out.killed ?? '', /^file_size: .*1 MiB \(SIGXFSZ\)/);
      const info = await stat(`${await h.ctx('conv-limits').workspace.ensure()}/big.bin`);
      assert.equal(info.size, 1024 * 1024);
    });

    it('processes stop at maxProcesses', async () => {
      // The shell gives up at the first fork refused; each process that did start left a line.
      const out = parseShellOutput(await h.sh('for i in $(seq 40); do (echo started >> procs.log; sleep 3) & done', 'conv-procs'));
      assert.match(out.stderr, /Cannot fork/);
      const started = Number(parseShellOutput(await h.sh('wc -l < procs.log', 'conv-procs')).stdout);
      // The limit counts the sandbox's init and first shell too.
      // Other sandboxes of the same unprivileged uid count against the limit too: at most the limit, not exactly it.
      assert.ok(started >= 1 && started <= TEST_SHELL_LIMITS.maxProcesses - 2, `processes started: ${started}`);
    });

    it('a fork bomb is contained: the call returns, nothing is left, the next command runs', async () => {
      const before = new Set(descendantsOf(process.pid));
      const out = parseShellOutput(await h.sh('bomb() { bomb | bomb & }; bomb; sleep 1; echo survived', 'conv-bomb'));
      assert.match(out.stderr, /Cannot fork/, 'the bomb hit the process limit');
      assert.deepEqual(
        descendantsOf(process.pid).filter((pid) => !before.has(pid)),
        [],
        'the bomb died with its sandbox',
      );
      assert.equal(parseShellOutput(await h.sh('echo still-fine', 'conv-bomb')).stdout, 'still-fine');
    });
  });
});
