// The bench's TLS mode: a certificate made at start with openssl, served by the bench's fake upstream,
// and trusted by the gateway's transport only through the provider's `tls.caFile` (as `npm run bench`
// configures it), never by switching verification off.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { makeCertificate } from '../../bench/certificate';
import { GatewayError } from '../../src/http/errors';
import { UpstreamTransport } from '../../src/providers/http/transport';

const ROOT = path.resolve(__dirname, '../..');

/** Starts bench/upstream.ts with `env` and resolves with the port it prints. */
function startUpstream(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/upstream.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ child, port: (JSON.parse(line) as { port: number }).port });
    });
    child.once('exit', (code) => reject(new Error(`the bench upstream exited with ${String(code)}`)));
  });
}

describe('bench: the TLS upstream mode', function () {
  this.timeout(60_000);
  let dir: string;
  let upstream: ChildProcess | null = null;
  const transports: UpstreamTransport[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'agw-bench-tls-'));
  });
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
    if (upstream && upstream.exitCode === null) {
      const exited = new Promise((r) => upstream!.once('exit', r));
      upstream.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  it('serves https with a certificate made at start, trusted through tls.caFile and refused without it', async () => {
    const { cert, key } = makeCertificate(dir);
    const started = await startUpstream({ ...process.env, BENCH_TLS_CERT: cert, BENCH_TLS_KEY: key });
    upstream = started.child;
    const url = `https://127.0.0.1:${started.port}/v1/chat/completions`;
    const body = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'hi' }] });

    const trusted = new UpstreamTransport('bench-tls', {
      type: 'openai',
      baseUrl: `https://127.0.0.1:${started.port}/v1`,
      tls: { caFile: cert },
      retries: { max: 0 },
    });
    transports.push(trusted);
    const reply = await trusted.send({ url, headers: { 'content-type': 'application/json' }, body });
    const completion = (await reply.json()) as { object: string; usage: { total_tokens: number } };
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.usage.total_tokens, 22);

    const untrusted = new UpstreamTransport('bench-tls', { type: 'openai', baseUrl: `https://127.0.0.1:${started.port}/v1`, retries: { max: 0 } });
    transports.push(untrusted);
    const refused = await untrusted.send({ url, headers: { 'content-type': 'application/json' }, body }).then(
      () => null,
      (err: unknown) => err,
    );
    assert.ok(refused instanceof GatewayError, 'a certificate no configured CA signs is refused');
  });
});
