// The bench's TLS mode: a certificate made at start with openssl, served by the bench's fake upstream,
// and trusted by the gateway's transport only through the provider's `tls.caFile` (as `npm run bench`
// configures it), never by switching verification off.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { makeCertificate } from '../../bench/certificate';
import { GatewayError } from '../../src/http/errors';
import { UpstreamTransport } from '../../src/providers/http/transport';
import { startBenchUpstream, stopBenchProcess } from './bench-gateway';

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
    await stopBenchProcess(upstream);
    await rm(dir, { recursive: true, force: true });
  });

  it('serves https with a certificate made at start, trusted through tls.caFile and refused without it', async () => {
    const { cert, key } = makeCertificate(dir);
    const started = await startBenchUpstream({ BENCH_TLS_CERT: cert, BENCH_TLS_KEY: key });
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
