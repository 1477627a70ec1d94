// The operator contract, driven through the real binary: first start, admin CLI, restarts, shutdown.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { runCli, startServer, tempDir, writeConfig, type ServerProcess } from '../helpers/process';

function firstStartConfig(dir: string): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 3000 },
    store: { driver: 'embedded', path: path.join(dir, 'data') },
    providers: { demo: { type: 'demo' } },
    models: [{ id: 'demo', provider: 'demo' }],
    organizations: [{ id: 'default', name: 'Default', models: ['*'], users: [{ id: 'admin', name: 'Admin', role: 'admin', keys: ['${GATEWAY_ADMIN_KEY:-}'] }] }],
    logging: { level: 'info', accessLog: false },
  };
}

function bootstrapKeyOf(stdout: string): string {
  const match = /Admin API key \(shown once, store it now\): (agw_\S+)/.exec(stdout);
  assert.ok(match, `no key printed: ${stdout}`);
  return match[1]!;
}

async function get(url: string, key?: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
}

describe('operator lifecycle (real processes)', function () {
  this.timeout(60_000);
  let dir: string;
  let config: string;
  let server: ServerProcess | null = null;

  before(() => {
    dir = tempDir('agw-life-');
    config = writeConfig(dir, firstStartConfig(dir));
  });
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = null;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  let adminKey = '';
  let cliKey = '';
  let cliKeyId = '';

  it('first start creates default/admin and prints one admin key once, stored hashed', async () => {
    server = await startServer(['serve', '--config', config]);
    adminKey = bootstrapKeyOf(server.stdout());
    assert.equal((await get(`${server.url}/v1/models`, adminKey)).status, 200);
    assert.equal((await get(`${server.url}/v1/models`)).status, 401);
    // Never in a log line.
    assert.ok(!server.stderr().includes(adminKey));
    assert.equal(await server.stop('SIGTERM'), 0);
    server = null;
    const restarted = await startServer(['serve', '--config', config]);
    server = restarted;
    assert.ok(!restarted.stdout().includes('Admin API key'), 'the key is printed on the first start only');
    assert.equal((await get(`${restarted.url}/v1/models`, adminKey)).status, 200, 'the key survives a restart');
  });

  it('admin CLI creates, lists and revokes keys while the gateway holds the embedded store', async () => {
    server = await startServer(['serve', '--config', config]);
    const created = await runCli(['keys', 'create', '--org', 'default', '--user', 'admin', '--name', 'ci-bot', '--config', config]);
    assert.equal(created.code, 0, created.stderr);
    cliKey = created.stdout.trim();
    assert.match(cliKey, /^agw_[A-Za-z0-9_-]{20,}$/);
    cliKeyId = /created key (\S+) for admin/.exec(created.stderr)![1]!;
    assert.equal((await get(`${server.url}/v1/models`, cliKey)).status, 200);

    const listed = await runCli(['keys', 'list', '--org', 'default', '--config', config]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /ci-bot/);
    assert.match(listed.stdout, new RegExp(cliKeyId));
    assert.ok(!listed.stdout.includes(cliKey), 'keys list never shows a key');
    assert.ok(!listed.stdout.includes(adminKey));

    const revoked = await runCli(['keys', 'revoke', cliKeyId, '--config', config]);
    assert.equal(revoked.code, 0, revoked.stderr);
    // Revocation takes effect within seconds despite the auth cache.
    const deadline = Date.now() + 5000;
    let status = 200;
    while (Date.now() < deadline && status !== 401) {
      status = (await get(`${server.url}/v1/models`, cliKey)).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(status, 401);
    const again = await runCli(['keys', 'revoke', cliKeyId, '--config', config]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^agent-gateway: keys revoke: no active key with id/);
  });

  it('keeps keys and audit records across a restart, and SIGTERM loses no audit record', async () => {
    server = await startServer(['serve', '--config', config]);
    const marker = `/v1/runs/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`;
    const calls = await Promise.all(Array.from({ length: 25 }, () => get(`${server!.url}${marker}`, adminKey)));
    assert.ok(calls.every((c) => c.status === 404));
    assert.equal(await server.stop('SIGTERM'), 0);
    server = null;
    const audit = await runCli(['audit', 'list', '--org', 'default', '--config', config]);
    assert.equal(audit.code, 0, audit.stderr);
    const records = audit.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const runReads = records.filter((r) => r['route'] === '/v1/runs/{runId}');
    assert.equal(runReads.length, 25, 'every call of the stopped gateway is in the audit trail');
    for (const record of runReads) {
      assert.equal(record['status'], 404);
      assert.equal(record['userId'], 'admin');
      assert.ok(!JSON.stringify(record).includes(adminKey));
    }
    server = await startServer(['serve', '--config', config]);
    assert.equal((await get(`${server.url}/v1/models`, adminKey)).status, 200);
    assert.equal((await get(`${server.url}/v1/models`, cliKey)).status, 401, 'revocation survives a restart');
  });

  it('finishes an in-flight request on SIGTERM before exiting', async () => {
    // A slow OpenAI-format upstream: the reply takes 1.5 s.
    const upstream = (await import('node:http')).createServer((req, res) => {
      req.resume();
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-slow',
            object: 'chat.completion',
            created: 1700000000,
            model: 'slow',
            choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        );
      }, 1500);
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const port = (upstream.address() as net.AddressInfo).port;
    try {
      const slowConfig = writeConfig(
        dir,
        {
          ...firstStartConfig(dir),
          providers: { slow: { type: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-test', allowPrivateNetwork: true } },
          models: [{ id: 'slow', provider: 'slow' }],
        },
        'slow.yaml',
      );
      server = await startServer(['serve', '--config', slowConfig]);
      const inFlight = fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'take your time' }] }),
      });
      await new Promise((r) => setTimeout(r, 400));
      const exit = server.stop('SIGTERM');
      const res = await inFlight;
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content, 'done');
      assert.equal(await exit, 0);
      server = null;
    } finally {
      upstream.close();
    }
  });

  it('refuses a second gateway on the same embedded store with a one-line reason', async () => {
    server = await startServer(['serve', '--config', config]);
    const second = await runCli(['serve', '--config', config]);
    assert.equal(second.code, 1);
    assert.match(second.stderr.trim(), /^agent-gateway: the embedded store at .* is in use by process \d+: is another gateway already running on it\?$/m);
  });

  it('exits non-zero with one line when the port is in use', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const result = await runCli(['serve', '--config', config], { env: { PORT: String(port) } });
      assert.equal(result.code, 1);
      assert.ok(result.stderr.includes(`agent-gateway: port ${port} on 127.0.0.1 is already in use`), result.stderr);
    } finally {
      blocker.close();
    }
  });

  it('exits non-zero with one line when the store is unreachable', async () => {
    const bad = writeConfig(dir, { ...firstStartConfig(dir), store: { driver: 'postgres', url: 'postgres://postgres@127.0.0.1:1/none' } }, 'bad-store.yaml');
    const result = await runCli(['serve', '--config', bad]);
    assert.equal(result.code, 1);
    const lines = result.stderr.trim().split('\n').filter((l) => l.startsWith('agent-gateway:'));
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0]!, /ECONNREFUSED|connect/i);
  });

  it('refuses to run a worker on the embedded store', async () => {
    const result = await runCli(['worker', '--config', config]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^agent-gateway: worker needs a shared store/);
  });
});

describe('admin CLI without a server', function () {
  this.timeout(30_000);
  let dir: string;
  before(() => (dir = tempDir('agw-cli-')));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('config check accepts the default config and names the path of each problem otherwise', async () => {
    const ok = await runCli(['config', 'check']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^config ok: config\/gateway\.yaml/);
    const bad = writeConfig(dir, { ...firstStartConfig(dir), queue: { driver: 'kafka' } }, 'bad.yaml');
    const result = await runCli(['config', 'check', '--config', bad]);
    assert.equal(result.code, 1);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    assert.match(result.stderr, /invalid configuration: .*queue\.driver: must be one of "inline", "bullmq"/);
  });

  it('config check honours GATEWAY_CONFIG', async () => {
    const bad = writeConfig(dir, { server: { port: 'eighty' } }, 'env.yaml');
    const result = await runCli(['config', 'check'], { env: { GATEWAY_CONFIG: bad } });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /server\.port: must be integer/);
  });

  it('openapi prints the OpenAPI document', async () => {
    const result = await runCli(['openapi']);
    assert.equal(result.code, 0, result.stderr);
    const doc = JSON.parse(result.stdout) as { openapi: string; paths: Record<string, unknown> };
    assert.match(doc.openapi, /^3\.1\./);
    assert.ok(doc.paths['/v1/agents/runs']);
  });

  it('keys create prints a key once for a configured user and refuses unknown users', async () => {
    const file = writeConfig(dir, firstStartConfig(dir), 'keys.yaml');
    const created = await runCli(['keys', 'create', '--org', 'default', '--user', 'admin', '--config', file]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout.trim(), /^agw_/);
    const unknown = await runCli(['keys', 'create', '--org', 'default', '--user', 'nobody', '--config', file]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^agent-gateway: keys create: no user "nobody" in organization "default"/);
  });
});
