// The operator contract, driven through the real binary (dist/src/main.js, what `npm start` and
// `npx agent-gateway` run): first start on the default config, the admin CLI, health, metrics, logs,
// restarts, graceful shutdown and the one-line start-up failures.
// Processes are expensive (a fresh embedded store takes seconds to create), so one gateway on the
// default configuration serves most tests in order, and the failure cases reuse stopped stores.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createTestSchema } from '../helpers/store';
import { freePort, ROOT, runCli, startServer, startTcpProxy, tempDir, writeConfig, type ServerProcess, type TcpProxy } from '../helpers/process';
import { waitFor } from '../helpers/wait';

const DEMO_AGENT = '7d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const UPSTREAM_KEY = 'sk-upstream-secret-7f3a9c';
const PROMPT_MARKER = 'ZEBRA-PROMPT-4711-quokka';
const COMPLETION_MARKER = 'UPSTREAM-COMPLETION-8822-narwhal';
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

async function call(url: string, init: { method?: string; key?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.key) headers['authorization'] = `Bearer ${init.key}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method: init.method ?? (init.body !== undefined ? 'POST' : 'GET'),
    headers,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Prometheus text, HTML: kept in `text`.
  }
  return { status: res.status, headers: res.headers, body, text };
}

function bootstrapKeyOf(stdout: string): string {
  const match = /Admin API key \(shown once, store it now\): (agw_\S+)/.exec(stdout);
  assert.ok(match, `no key printed: ${stdout}`);
  return match[1]!;
}

/** JSON log lines of a process (every stderr line must be one). */
function logLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        assert.fail(`a log line is not JSON: ${line}`);
      }
    });
}

/** One line `agent-gateway: <reason>` among the output (JSON log lines may precede it). */
function reasonLine(stderr: string): string {
  const lines = stderr.split('\n').filter((l) => l.startsWith('agent-gateway:'));
  assert.equal(lines.length, 1, `expected one reason line, got: ${stderr}`);
  return lines[0]!;
}

/** A fake OpenAI upstream: a prompt containing "slow" is answered after 1.5 s; `slowSeen` counts them. */
async function startFakeOpenAi(): Promise<{ server: Server; port: number; slowSeen(): number }> {
  let slowSeen = 0;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      const slow = raw.includes('slow');
      if (slow) slowSeen++;
      setTimeout(
        () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              id: 'chatcmpl-fake',
              object: 'chat.completion',
              created: 1700000000,
              model: 'gpt-4o-mini',
              choices: [{ index: 0, message: { role: 'assistant', content: COMPLETION_MARKER }, finish_reason: 'stop' }],
              usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
            }),
          );
        },
        slow ? 1500 : 0,
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as net.AddressInfo).port, slowSeen: () => slowSeen };
}

describe('operator lifecycle (real processes)', function () {
  this.timeout(240_000);
  let root: string;
  /** A copy of the repository's config/ in a temp working directory: `npm start` exactly, elsewhere. */
  let appDir: string;
  let appEnv: NodeJS.ProcessEnv;
  let upstream: { server: Server; port: number; slowSeen(): number };
  let server: ServerProcess | null = null;
  let adminKey = '';
  let cliKey = '';

  before(async () => {
    root = tempDir('agw-life-');
    appDir = path.join(root, 'app');
    mkdirSync(path.join(appDir, 'config'), { recursive: true });
    copyFileSync(path.join(ROOT, 'config/gateway.yaml'), path.join(appDir, 'config/gateway.yaml'));
    upstream = await startFakeOpenAi();
    appEnv = {
      PORT: '0',
      LOG_LEVEL: 'debug',
      OPENAI_API_KEY: UPSTREAM_KEY,
      OPENAI_BASE_URL: `http://127.0.0.1:${upstream.port}/v1`,
      OPENAI_ALLOW_PRIVATE_NETWORK: 'true',
    };
  });
  after(async () => {
    await server?.stop('SIGKILL');
    upstream?.server.close();
    rmSync(root, { recursive: true, force: true });
  });

  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(args, { cwd: appDir, env: { ...appEnv, ...env } });

  it('first start on the default config: creates default/admin, prints one admin key once, never logs it', async () => {
    server = await startServer(['serve'], { cwd: appDir, env: appEnv });
    const printed = server.stdout().match(/agw_\S+/g) ?? [];
    assert.equal(printed.length, 1, 'exactly one key on stdout');
    adminKey = bootstrapKeyOf(server.stdout());
    assert.ok(!server.stderr().includes(adminKey), 'the key is never in a log line');
    const models = await call(`${server.url}/v1/models`, { key: adminKey });
    assert.equal(models.status, 200);
    // demo offline, and openai because OPENAI_API_KEY is set; anthropic's variable is not.
    assert.deepEqual((models.body['data'] as { id: string }[]).map((m) => m.id).sort(), ['demo', 'gpt-4o-mini']);
    const anonymous = await call(`${server.url}/v1/models`);
    assert.equal(anonymous.status, 401);
    assert.equal(typeof anonymous.body['message'], 'string');
  });

  it('answers health and metrics without a key, and a second gateway on the same store is refused', async () => {
    const [live, ready, second] = await Promise.all([call(`${server!.url}/health/live`), call(`${server!.url}/health/ready`), cli(['serve'])]);
    assert.equal(live.status, 200);
    assert.equal(ready.status, 200, ready.text);
    assert.equal((ready.body['checks'] as Record<string, string>)['store'], 'ok');
    assert.equal(second.code, 1);
    assert.match(reasonLine(second.stderr), /^agent-gateway: the embedded store at .* is in use by process \d+: is another gateway already running on it\?$/);
  });

  it('honours a sane X-Request-Id (echoed and logged), else generates a UUID', async () => {
    const traced = await call(`${server!.url}/v1/models`, { key: adminKey, headers: { 'x-request-id': 'trace-4711.abc' } });
    assert.equal(traced.headers.get('x-request-id'), 'trace-4711.abc');
    const insane = await call(`${server!.url}/v1/models`, { key: adminKey, headers: { 'x-request-id': 'x'.repeat(300) } });
    assert.match(insane.headers.get('x-request-id') ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const plain = await call(`${server!.url}/health/live`);
    assert.match(plain.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    // The access log line is written once the reply is sent: wait for it rather than for a fixed time.
    let logged: Record<string, unknown> | undefined;
    await waitFor(() => (logged = logLines(server!.stderr()).find((l) => l['requestId'] === 'trace-4711.abc')) !== undefined, {
      what: 'the access log line of the traced request',
    });
    assert.ok(logged, 'the access log line carries the request id');
    assert.equal(logged['route'], '/v1/models');
    assert.equal(logged['status'], 200);
  });

  it('serves chat completions on demo and on an upstream provider; no key, prompt or completion reaches the debug log', async () => {
    const demo = await call(`${server!.url}/v1/chat/completions`, {
      key: adminKey,
      body: { model: 'demo', messages: [{ role: 'user', content: `Tell me about ${PROMPT_MARKER}` }] },
    });
    assert.equal(demo.status, 200, demo.text);
    const demoText = (demo.body['choices'] as { message: { content: string } }[])[0]!.message.content;
    assert.ok(demoText.length > 0);
    const forwarded = await call(`${server!.url}/v1/chat/completions`, {
      headers: { 'x-api-key': adminKey },
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `Upstream ${PROMPT_MARKER}` }] },
    });
    assert.equal(forwarded.status, 200, forwarded.text);
    assert.equal((forwarded.body['choices'] as { message: { content: string } }[])[0]!.message.content, COMPLETION_MARKER);
    await waitFor(() => logLines(server!.stderr()).filter((l) => l['route'] === '/v1/chat/completions').length >= 2, {
      what: 'the access log lines of both calls',
    });
    const stderr = server!.stderr();
    const lines = logLines(stderr);
    assert.ok(
      lines.some((l) => l['level'] === 'debug'),
      'LOG_LEVEL=debug reached the logger',
    );
    assert.ok(
      lines.some((l) => l['route'] === '/v1/chat/completions' && l['status'] === 200),
      'the calls were logged',
    );
    for (const secret of [adminKey, UPSTREAM_KEY, PROMPT_MARKER, COMPLETION_MARKER, demoText]) {
      assert.ok(!stderr.includes(secret), `"${secret.slice(0, 24)}" appeared in the log`);
    }
  });

  it("runs the README's agent walk-through on the demo agent: trigger, poll to success, evals, items, restart", async () => {
    const url = server!.url;
    const list = await call(`${url}/v1/agents/list`, { key: adminKey });
    assert.equal(list.status, 200);
    assert.ok(
      (list.body['items'] as { agentId: string }[]).some((a) => a.agentId === DEMO_AGENT),
      list.text,
    );
    assert.equal((await call(`${url}/v1/agents/${DEMO_AGENT}`, { key: adminKey })).status, 200);
    const started = await call(`${url}/v1/agents/runs`, { key: adminKey, body: { agentId: DEMO_AGENT, inputs: [{ name: 'Topic', value: 'ocean tides' }] } });
    assert.equal(started.status, 202, started.text);
    const runId = started.body['runId'] as string;
    const conversationId = started.body['conversationId'] as string;
    let run: Reply;
    const deadline = Date.now() + 15_000;
    do {
      run = await call(`${url}/v1/runs/${runId}`, { key: adminKey });
      if (run.body['status'] !== 'in_progress') break;
      await new Promise((r) => setTimeout(r, 150));
    } while (Date.now() < deadline);
    assert.equal(run.body['status'], 'success', run.text);
    const evals = await call(`${url}/v1/runs/${runId}/evals`, { key: adminKey });
    assert.equal(evals.status, 200);
    assert.equal(evals.body['result'], 'pass', evals.text);
    assert.deepEqual(
      (evals.body['steps'] as { name: string; result: string }[]).map((s) => [s.name, s.result]),
      [
        ['Outline', 'pass'],
        ['Summary', 'not_evaluated'],
      ],
    );
    const items = await call(`${url}/v1/conversations/${conversationId}/items?order=asc`, { key: adminKey });
    assert.equal(items.status, 200, items.text);
    assert.ok((items.body['data'] as unknown[]).length >= 4, 'two prompts and two replies');
    const again = await call(`${url}/v1/runs/${runId}/restart`, { key: adminKey, method: 'POST' });
    assert.equal(again.status, 202, again.text);
    assert.notEqual(again.body['runId'], runId);
  });

  it('serves Prometheus metrics for requests, upstream latency, runs and queue depth', async () => {
    const metrics = await call(`${server!.url}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(metrics.text, /^agw_http_requests_total\{[^}]*operation="createChatCompletion"[^}]*\} \d+/m);
    assert.match(metrics.text, /^agw_upstream_request_duration_seconds_count\{[^}]*provider="openai"[^}]*\} [1-9]/m);
    assert.match(metrics.text, /^agw_runs_total\{status="success"\} [1-9]/m);
    assert.match(metrics.text, /^agw_queue_depth\{state="waiting"\} \d+/m);
  });

  it('admin CLI against the running gateway: keys create / list / revoke (effective through the revocation poll), audit list, unknown names', async () => {
    const created = await cli(['keys', 'create', '--org', 'default', '--user', 'admin', '--name', 'ci-bot']);
    assert.equal(created.code, 0, created.stderr);
    cliKey = created.stdout.trim();
    assert.match(cliKey, /^agw_[A-Za-z0-9_-]{20,}$/, 'stdout is the key alone');
    const keyId = /created key (\S+) for admin/.exec(created.stderr)![1]!;
    assert.equal((await call(`${server!.url}/v1/models`, { key: cliKey })).status, 200);

    const [listed, audit, noUser, noOrg, noAuditOrg] = await Promise.all([
      cli(['keys', 'list', '--org', 'default']),
      cli(['audit', 'list', '--org', 'default', '--since', new Date(Date.now() - 3_600_000).toISOString()]),
      cli(['keys', 'create', '--org', 'default', '--user', 'nobody']),
      cli(['keys', 'list', '--org', 'acme']),
      cli(['audit', 'list', '--org', 'acme']),
    ]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^ID\s+NAME\s+USER\s+PREFIX\s+CREATED\s+LAST USED\s+STATUS$/m);
    assert.match(listed.stdout, new RegExp(`^${keyId}\\s+ci-bot\\s+admin\\s`, 'm'));
    assert.match(listed.stdout, /\s+bootstrap\s+admin\s/);
    assert.ok(!listed.stdout.includes(cliKey) && !listed.stdout.includes(adminKey), 'keys list never shows a key');

    assert.equal(audit.code, 0, audit.stderr);
    const records = audit.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(records.some((r) => r['route'] === '/v1/chat/completions' && r['status'] === 200 && r['userId'] === 'admin'));
    assert.ok(!audit.stdout.includes(adminKey));

    for (const [result, reason] of [
      [noUser, /^agent-gateway: keys create: no user "nobody" in organization "default"$/],
      [noOrg, /^agent-gateway: keys list: no organization "acme"$/],
      [noAuditOrg, /^agent-gateway: audit list: no organization "acme"$/],
    ] as const) {
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stdout, '');
      assert.match(result.stderr.trim(), reason);
    }

    const revoked = await cli(['keys', 'revoke', keyId]);
    assert.equal(revoked.code, 0, revoked.stderr);
    // Effective through the revocation poll (every second), long before the cached key's 60 s TTL: a
    // generous ceiling for a busy machine that still tells the two apart.
    const deadline = Date.now() + 20_000;
    let status = 200;
    while (Date.now() < deadline && status !== 401) {
      status = (await call(`${server!.url}/v1/models`, { key: cliKey })).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 401);
    const again = await cli(['keys', 'revoke', keyId]);
    assert.equal(again.code, 1);
    assert.match(again.stderr.trim(), /^agent-gateway: keys revoke: no active key with id/);
  });

  it('SIGTERM: stops accepting, finishes the in-flight request, flushes every audit record, exits 0', async () => {
    const url = server!.url;
    const N = 20;
    const probe = `/v1/runs/00000000-0000-4000-8000-000000000000`;
    const calls = await Promise.all(Array.from({ length: N }, () => call(`${url}${probe}`, { key: adminKey })));
    assert.ok(calls.every((c) => c.status === 404));
    const slow = call(`${url}/v1/chat/completions`, { key: adminKey, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'slow please' }] } });
    // In flight means the upstream has it.
    await waitFor(() => upstream.slowSeen() === 1, { what: 'the slow call to reach the upstream' });
    const signalledAt = Date.now();
    const exit = server!.stop('SIGTERM');
    // The listener closes in the same turn as the "shutting down" line is logged.
    await waitFor(() => logLines(server!.stderr()).some((l) => l['message'] === 'shutting down'), { what: 'the gateway to log "shutting down"' });
    await assert.rejects(fetch(`${url}/health/live`), 'no new connection is accepted');
    const reply = await slow;
    assert.equal(reply.status, 200, reply.text);
    assert.equal((reply.body['choices'] as { message: { content: string } }[])[0]!.message.content, COMPLETION_MARKER);
    assert.equal(await exit, 0);
    // Keep-alive connections close as soon as their request ends, not at the grace period's end: a
    // gateway that waited for the grace (server.shutdownGraceMs, 10 s by default) cannot be faster.
    assert.ok(Date.now() - signalledAt < 10_000, `shutdown took ${Date.now() - signalledAt} ms: it waited out the grace period`);
    const stopped = logLines(server!.stderr());
    assert.ok(stopped.some((l) => l['message'] === 'stopped'));
    server = null;

    // The CLI now opens the store itself (no gateway holds it).
    const audit = await cli(['audit', 'list', '--org', 'default']);
    assert.equal(audit.code, 0, audit.stderr);
    const records = audit.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(
      records.filter((r) => r['route'] === '/v1/runs/{runId}' && r['status'] === 404).length,
      N,
      'every call of the stopped gateway is in the audit trail',
    );
    assert.equal(records.filter((r) => r['route'] === '/v1/chat/completions' && r['status'] === 200).length, 3, 'the in-flight call too');
  });

  it('restart keeps keys and revocations, prints no new key, and GATEWAY_ADMIN_KEY becomes the admin key', async () => {
    const chosen = 'agw_chosen_admin_key_0123456789abcdef';
    server = await startServer(['serve'], { cwd: appDir, env: { ...appEnv, GATEWAY_ADMIN_KEY: chosen } });
    assert.equal(server.stdout(), '', 'no key printed after the first start');
    const [old, mine, revoked] = await Promise.all([
      call(`${server.url}/v1/models`, { key: adminKey }),
      call(`${server.url}/v1/models`, { key: chosen }),
      call(`${server.url}/v1/models`, { key: cliKey }),
    ]);
    assert.equal(old.status, 200, 'the bootstrap key survives a restart');
    assert.equal(mine.status, 200);
    assert.equal(revoked.status, 401, 'revocation survives a restart');
    assert.ok(!server.stderr().includes(chosen));
    assert.equal(await server.stop('SIGTERM'), 0);
    server = null;
  });
});

describe('start-up: bullmq, PORT / HOST, readiness, one-line failures (real processes)', function () {
  this.timeout(240_000);
  let root: string;
  let proxy: TcpProxy;
  let configFile: string;
  let storePath: string;
  const prefix = `agw-life-${process.pid}-${Date.now()}`;
  const chosen = 'agw_first_start_chosen_key_abcdef0123456789';
  let server: ServerProcess | null = null;

  function doc(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      // Not an address of this machine: only HOST makes the listen succeed.
      server: { host: '192.0.2.1', port: 8080, shutdownGraceMs: 2000 },
      store: { driver: 'embedded', path: storePath },
      queue: { driver: 'bullmq', redisUrl: `redis://127.0.0.1:${proxy.port}`, prefix },
      providers: { demo: { type: 'demo' } },
      models: [{ id: 'demo', provider: 'demo' }],
      organizations: [{ id: 'default', models: ['*'], users: [{ id: 'admin', role: 'admin', keys: ['${GATEWAY_ADMIN_KEY:-}'] }] }],
      plugins: { auth: { enabled: true }, audit: { enabled: true } },
      ...overrides,
    };
  }

  before(async () => {
    root = tempDir('agw-start-');
    storePath = path.join(root, 'data');
    proxy = await startTcpProxy(Number(new URL(REDIS_URL).port || 6379));
    configFile = writeConfig(root, doc());
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await proxy.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    rmSync(root, { recursive: true, force: true });
  });

  it('first start with GATEWAY_ADMIN_KEY prints no key and uses it; PORT and HOST override the config', async () => {
    const port = await freePort();
    server = await startServer(['serve', '--config', configFile], { env: { GATEWAY_ADMIN_KEY: chosen, PORT: String(port), HOST: '127.0.0.1' } });
    assert.equal(server.url, `http://127.0.0.1:${port}`);
    assert.equal(server.stdout(), '');
    assert.equal((await call(`${server.url}/v1/models`, { key: chosen })).status, 200);
    assert.ok(!server.stderr().includes(chosen));
  });

  it('readiness answers 503 naming the failing check when Redis goes away, 200 again when it is back', async () => {
    const ready = await call(`${server!.url}/health/ready`);
    assert.equal(ready.status, 200, ready.text);
    assert.equal((ready.body['checks'] as Record<string, string>)['queue'], 'ok');
    await proxy.cut();
    const down = await call(`${server!.url}/health/ready`);
    assert.equal(down.status, 503);
    assert.equal(down.body['status'], 'unavailable');
    const checks = down.body['checks'] as Record<string, string>;
    assert.equal(checks['store'], 'ok');
    assert.match(checks['queue'] ?? '', /^error: /, down.text);
    assert.equal((await call(`${server!.url}/health/live`)).status, 200, 'still alive');
    await proxy.restore();
    let status = 0;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && status !== 200) {
      status = (await call(`${server!.url}/health/ready`)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal(status, 200);
    assert.equal(await server!.stop('SIGTERM'), 0);
    server = null;
  });

  it('exits non-zero with one line: bad config (every problem by path), unreachable store, unreachable queue, port in use, bad PORT', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const busyPort = (blocker.address() as net.AddressInfo).port;
    const badConfig = writeConfig(
      root,
      { ...doc(), server: { port: 'eighty' }, queue: { driver: 'kafka' }, organizations: [{ id: 'x', users: [{ id: 'u', role: 'boss' }] }] },
      'bad.yaml',
    );
    const badStore = writeConfig(root, doc({ store: { driver: 'postgres', url: 'postgres://gw:secret-pw@127.0.0.1:1/none' } }), 'bad-store.yaml');
    const badQueue = writeConfig(root, doc({ queue: { driver: 'bullmq', redisUrl: 'redis://:secret-pw@127.0.0.1:1' } }), 'bad-queue.yaml');
    try {
      const [serveBad, checkBad, store, port, badPort, queue] = await Promise.all([
        runCli(['serve', '--config', badConfig]),
        runCli(['config', 'check', '--config', badConfig]),
        runCli(['serve', '--config', badStore]),
        runCli(['serve', '--config', configFile], { env: { HOST: '127.0.0.1', PORT: String(busyPort) } }),
        runCli(['serve', '--config', configFile], { env: { PORT: 'http' } }),
        runCli(['serve', '--config', badQueue], { env: { HOST: '127.0.0.1', PORT: '0' } }),
      ]);
      const problems = [
        /server\.port: must be integer \(fix: /,
        /queue\.driver: must be one of "inline", "bullmq" \(fix: /,
        /organizations\[0\]\.users\[0\]\.role: must be one of "admin", "member" \(fix: /,
      ];
      assert.equal(serveBad.code, 1);
      assert.equal(serveBad.stderr.trim().split('\n').length, 1, serveBad.stderr);
      const line = reasonLine(serveBad.stderr);
      assert.match(line, /^agent-gateway: invalid configuration: /);
      for (const problem of problems) assert.match(line, problem);
      // config check: a count, then one problem a line.
      assert.equal(checkBad.code, 1);
      const [head, ...lines] = checkBad.stderr.trimEnd().split('\n');
      assert.match(head!, /^agent-gateway: .*bad\.yaml: \d+ problems$/);
      for (const problem of problems)
        assert.ok(
          lines.some((l) => problem.test(l.trim())),
          `${String(problem)} in ${checkBad.stderr}`,
        );
      assert.equal(store.code, 1);
      assert.match(reasonLine(store.stderr), /^agent-gateway: .*127\.0\.0\.1:1.*(ECONNREFUSED|connect)/i);
      assert.equal(port.code, 1);
      assert.equal(reasonLine(port.stderr), `agent-gateway: port ${busyPort} on 127.0.0.1 is already in use`);
      assert.equal(badPort.code, 1);
      assert.match(reasonLine(badPort.stderr), /^agent-gateway: invalid configuration: .*PORT: must be an integer from 0 to 65535, got "http" \(fix: /);
      assert.equal(queue.code, 1);
      // Checked before the store is opened: the reason is the only output.
      assert.equal(queue.stderr, 'agent-gateway: cannot reach Redis at redis://127.0.0.1:1 (queue.redisUrl): connect ECONNREFUSED 127.0.0.1:1\n');
      for (const result of [store, queue]) assert.ok(!result.stderr.includes('secret-pw'), 'no password in the output');
    } finally {
      blocker.close();
    }
  });

  it('refuses a worker on the embedded store, and config check reports the default config with and without provider keys', async () => {
    const [worker, plain, withKeys] = await Promise.all([
      runCli(['worker', '--config', configFile]),
      runCli(['config', 'check']),
      runCli(['config', 'check', '--config', 'config/gateway.yaml'], { env: { OPENAI_API_KEY: 'sk-x', ANTHROPIC_API_KEY: 'sk-ant-x' } }),
    ]);
    assert.equal(worker.code, 1);
    assert.match(reasonLine(worker.stderr), /^agent-gateway: worker needs a shared store/);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout, 'config ok: config/gateway.yaml (1 organization, 1 model: demo, 1 agent)\n');
    assert.equal(withKeys.code, 0, withKeys.stderr);
    assert.equal(withKeys.stdout, 'config ok: config/gateway.yaml (1 organization, 3 models: demo, gpt-4o-mini, claude-sonnet-4-5, 1 agent)\n');
  });

  it('openapi prints the OpenAPI document', async () => {
    const result = await runCli(['openapi']);
    assert.equal(result.code, 0, result.stderr);
    const document = JSON.parse(result.stdout) as { openapi: string; paths: Record<string, unknown> };
    assert.match(document.openapi, /^3\.1\./);
    assert.ok(document.paths['/v1/agents/runs']);
  });
});

describe('scale-out: a gateway and a worker process on postgres and bullmq (the default file, switched by variables)', function () {
  this.timeout(240_000);
  const prefix = `agw-scale-${process.pid}-${Date.now()}`;
  const key = 'agw_scale_out_admin_key_0123456789abcdef';
  let schema: { url: string; drop(): Promise<void> };
  let env: NodeJS.ProcessEnv;
  const processes: ServerProcess[] = [];

  before(async () => {
    schema = await createTestSchema('life');
    env = { STORE_DRIVER: 'postgres', DATABASE_URL: schema.url, QUEUE_DRIVER: 'bullmq', REDIS_URL, QUEUE_PREFIX: prefix, GATEWAY_ADMIN_KEY: key, PORT: '0' };
  });
  after(async () => {
    for (const p of processes) await p.stop('SIGKILL');
    await schema?.drop();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('the worker executes the runs the gateway enqueues; admin commands work on the shared store; both stop on SIGTERM', async () => {
    // Started together: schema migrations take an advisory lock.
    const [gateway, worker] = await Promise.all([startServer(['serve'], { env }), startServer(['worker'], { env })]);
    processes.push(gateway, worker);
    assert.equal(gateway.stdout(), '', 'GATEWAY_ADMIN_KEY set: no key printed');
    const started = await call(`${gateway.url}/v1/agents/runs`, { key, body: { agentId: DEMO_AGENT, inputs: [{ name: 'Topic', value: 'tides' }] } });
    assert.equal(started.status, 202, started.text);
    let run: Reply;
    const deadline = Date.now() + 20_000;
    do {
      run = await call(`${gateway.url}/v1/runs/${started.body['runId'] as string}`, { key });
      if (run.body['status'] !== 'in_progress') break;
      await new Promise((r) => setTimeout(r, 200));
    } while (Date.now() < deadline);
    assert.equal(run.body['status'], 'success', run.text);
    const ready = await call(`${gateway.url}/health/ready`);
    assert.equal(ready.status, 200, ready.text);
    assert.equal((ready.body['checks'] as Record<string, string>)['queue'], 'ok');

    // No control socket with a shared store: the CLI opens it directly, the gateway sees the key.
    const created = await runCli(['keys', 'create', '--org', 'default', '--user', 'admin', '--name', 'ops'], { env });
    assert.equal(created.code, 0, created.stderr);
    assert.equal((await call(`${gateway.url}/v1/models`, { key: created.stdout.trim() })).status, 200);

    const [gatewayExit, workerExit] = await Promise.all([gateway.stop('SIGTERM'), worker.stop('SIGTERM')]);
    assert.equal(gatewayExit, 0, gateway.stderr());
    assert.equal(workerExit, 0, worker.stderr());
  });
});
