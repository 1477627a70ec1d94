// svc_shell escape attempts, each contained, each asserting what contained it: writes outside the
// workspace, the gateway's config, data and source, another conversation's workspace, root-only files,
// the host's /tmp, the network. Fails (never skips) without bubblewrap.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { hostSystemDirs } from '../../src/tools/hosted/shell/sandbox-args';
import { parseShellOutput, shellHarness, type ShellHarness } from './shell-harness';

const ROOT = path.resolve(__dirname, '../..');
const AS_ROOT = process.getuid?.() === 0;

/** A shell test of whether `file` can be seen, printing `<label>:visible` or `<label>:absent`. */
const probe = (label: string, file: string): string => `if [ -e '${file}' ]; then echo ${label}:visible; else echo ${label}:absent; fi`;

describe('svc_shell sandbox: escapes are contained', function () {
  this.timeout(30_000);
  let h: ShellHarness;

  before(async () => {
    h = await shellHarness();
    assert.equal(await h.set.check?.(), null, 'the sandbox works on this machine (bubblewrap installed: .ci/run installs it)');
  });
  after(async () => {
    await h?.close();
  });

  it('cannot write to /, /usr, /etc, /bin or /dev: read-only, and the host is unchanged', async () => {
    const name = `agw-escape-${randomBytes(4).toString('hex')}`;
    const targets = ['/', '/usr/', '/usr/local/', '/etc/', '/bin/', '/dev/'];
    const out = parseShellOutput(await h.sh(targets.map((dir) => `echo x > ${dir}${name} 2>/dev/null && echo wrote:${dir} || echo refused:${dir}`).join('; ')));
    assert.deepEqual(
      out.stdout.split('\n'),
      targets.map((dir) => `refused:${dir}`),
    );
    for (const dir of targets) assert.equal(existsSync(`${dir}${name}`), false, `${dir}${name} on the host`);
    const why = parseShellOutput(await h.sh(`touch /usr/${name}`));
    assert.match(why.stderr, /Read-only file system/);
  });

  it("/tmp is the sandbox's own: writable, emptied after each command, and not the host's /tmp", async () => {
    const hostFile = path.join(os.tmpdir(), `agw-host-${randomBytes(4).toString('hex')}`);
    await writeFile(hostFile, 'host tmp');
    const inside = `agw-inside-${randomBytes(4).toString('hex')}`;
    try {
      const out = parseShellOutput(await h.sh(`${probe('host', hostFile)}; echo kept > /tmp/${inside} && cat /tmp/${inside}`));
      assert.equal(out.stdout, 'host:absent\nkept');
      assert.equal(existsSync(path.join(os.tmpdir(), inside)), false, 'the write did not reach the host /tmp');
      assert.equal(parseShellOutput(await h.sh(probe('again', `/tmp/${inside}`))).stdout, 'again:absent');
    } finally {
      await rm(hostFile, { force: true });
    }
  });

  it("cannot see the gateway's config, data directory, source tree or other conversations' workspaces", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agw-data-'));
    await writeFile(path.join(dataDir, 'secret.db'), 'gateway data');
    try {
      // Another conversation's workspace, with a file in it.
      await h.file('svc_file_write').execute({ path: 'theirs.txt', content: 'not yours' }, h.ctx('conv-other'));
      const otherDir = await h.ctx('conv-other').workspace.ensure();
      const checks: Array<[string, string]> = [
        ['config', path.join(ROOT, 'config/gateway.yaml')],
        ['schema', path.join(ROOT, 'config/gateway.schema.json')],
        ['source', path.join(ROOT, 'src/tools/hosted/shell/index.ts')],
        ['package', path.join(ROOT, 'package.json')],
        ['data', path.join(dataDir, 'secret.db')],
        ['workspaces', h.root],
        ['other', path.join(otherDir, 'theirs.txt')],
        ['home', '/root'],
        ['work', '/work'],
        ['sys', '/sys/kernel'],
      ];
      const out = parseShellOutput(await h.sh(checks.map(([label, file]) => probe(label, file)).join('; ')));
      assert.deepEqual(
        out.stdout.split('\n'),
        checks.map(([label]) => `${label}:absent`),
      );
      // Its own processes only: the host's (this test's node among them) are not in its /proc.
      const processes = parseShellOutput(await h.sh("cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo; grep -l 'moc[h]a' /proc/[0-9]*/cmdline; echo found:$?"));
      assert.ok(!processes.stdout.includes('mocha'), processes.stdout);
      assert.match(processes.stdout, /found:[12]$/);
      // The workspace's host path is not given away either (bwrap's options come through a descriptor).
      const [cmdline = '', listing = ''] = parseShellOutput(await h.sh('tr "\\0" " " < /proc/1/cmdline; echo; echo ---; ls /')).stdout.split('\n---\n');
      assert.match(cmdline, /^\/usr\/bin\/bwrap --args 3 /);
      assert.ok(!cmdline.includes(h.root), cmdline);
      // The root holds the system directories, the sandbox's own mounts, and nothing else of the host.
      const system = hostSystemDirs().map((dir) => dir.name);
      assert.deepEqual(listing.split('\n').sort(), [...system, 'dev', 'etc', 'proc', 'tmp', 'usr', 'var', 'workspace'].sort());
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('/etc holds only what programs need; its passwd is the sandbox’s own', async () => {
    const out = parseShellOutput(await h.sh('ls /etc; echo ---; cat /etc/passwd; echo ---; whoami'));
    const [listing = '', passwd = '', whoami = ''] = out.stdout.split('\n---\n');
    for (const absent of ['shadow', 'gshadow', 'sudoers', 'postgresql', 'ssh', 'environment'])
      assert.ok(!listing.split('\n').includes(absent), `/etc/${absent} not bound`);
    assert.ok(listing.split('\n').includes('ssl'), 'TLS roots are there');
    assert.deepEqual(
      passwd.split('\n').map((line) => line.split(':')[0]),
      ['root', 'sandbox', 'nobody'],
    );
    assert.equal(whoami, 'sandbox');
  });

  it('has no root power over what it sees: root-only files stay unreadable, bound files unwritable', async () => {
    if (AS_ROOT) {
      // A root-only file in a bound system directory: a uid-0 sandbox (even without capabilities) would read it.
      const secret = `/usr/local/share/agw-root-only-${randomBytes(4).toString('hex')}`;
      await writeFile(secret, 'root only');
      await chmod(secret, 0o600);
      try {
        const out = parseShellOutput(await h.sh(`cat ${secret}; echo status:$?; echo x >> ${secret}; echo status:$?`));
        assert.equal(out.stdout, 'status:1\nstatus:2');
        assert.match(out.stderr, /Permission denied/);
        assert.equal((await stat(secret)).size, 'root only'.length);
      } finally {
        await rm(secret, { force: true });
      }
      // The files it makes belong to the unprivileged sandbox user on the host, not to root.
      await h.sh('echo mine > owned.txt', 'conv-owner');
      assert.equal((await stat(path.join(await h.ctx('conv-owner').workspace.ensure(), 'owned.txt'))).uid, h.deps.config.tools.shell.sandboxUid);
    } else {
      // Not root: bwrap runs as the gateway's own user, which has no root power to drop.
      const out = parseShellOutput(await h.sh('echo mine > owned.txt', 'conv-owner'));
      assert.equal(out.exitCode, '0');
      assert.equal((await stat(path.join(await h.ctx('conv-owner').workspace.ensure(), 'owned.txt'))).uid, process.getuid?.());
    }
    const caps = parseShellOutput(await h.sh('grep -E "^(CapEff|CapPrm|CapBnd|NoNewPrivs)" /proc/self/status; unshare -U true 2>&1; echo userns:$?'));
    assert.match(caps.stdout, /^CapEff:\s+0+$/m);
    assert.match(caps.stdout, /^CapBnd:\s+0+$/m);
    assert.match(caps.stdout, /^NoNewPrivs:\s+1$/m);
    assert.match(caps.stdout, /userns:1$/, 'no nested user namespace to regain capabilities in');
  });

  describe('network', () => {
    let server: net.Server;
    let port: number;
    let connections = 0;

    before(async () => {
      server = net.createServer((socket) => {
        connections++;
        socket.on('error', () => undefined);
        socket.end('hello from the host\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as net.AddressInfo).port;
    });
    after(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    const reach = (): string => `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port} && head -n1 <&3' 2>/dev/null && echo reached || echo unreachable`;

    it("cannot reach a server on the host's 127.0.0.1 (no network without an egress profile)", async () => {
      const out = parseShellOutput(await h.sh(`${reach()}; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; env | grep -ci proxy`, 'conv-offline'));
      assert.equal(out.stdout, 'unreachable\nlo\n0', 'only its own loopback, no proxy variables');
      assert.equal(connections, 0);
    });

    it('with an egress profile connected it shares the network and is told the proxy (its password kept from the model)', async () => {
      h.egress.proxies.set('conv-online', `http://agent:s3cret-pass@127.0.0.1:${port}`);
      try {
        const out = parseShellOutput(
          await h.sh(
            `${reach()}; echo "$HTTP_PROXY $https_proxy $ALL_PROXY"; case "$HTTPS_PROXY" in *s3cret-pass@127.0.0.1:${port}) echo has-credentials ;; esac`,
            'conv-online',
          ),
        );
        assert.equal(out.stdout, 'hello from the host\nreached\n[egress proxy] [egress proxy] [egress proxy]\nhas-credentials');
        assert.equal(connections, 1);
      } finally {
        h.egress.proxies.delete('conv-online');
      }
    });
  });
});
