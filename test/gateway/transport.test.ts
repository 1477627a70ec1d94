import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createServer as netServer, type AddressInfo } from 'node:net';
import { GatewayError } from '../../src/http/errors';
import { retryAfterMs } from '../../src/providers/http/retry-after';
import { UpstreamTransport } from '../../src/providers/http/transport';
import { CallAbort, type CallSignal } from '../../src/providers/http/call-abort';
import type { ProviderConfig } from '../../src/config/types';
import { chatStreamEvents, startFakeOpenAiUpstream, type FakeOpenAiUpstream } from '../fixtures/upstreams/openai-upstream';
import { rejection } from '../helpers/rejection';

function config(patch: Partial<ProviderConfig> = {}): ProviderConfig {
  return { type: 'openai', retries: { max: 2, baseDelayMs: 10, maxDelayMs: 2000 }, ...patch };
}

describe('upstream transport', () => {
  let upstream: FakeOpenAiUpstream;
  const transports: UpstreamTransport[] = [];
  const make = (patch: Partial<ProviderConfig> = {}): UpstreamTransport => {
    const transport = new UpstreamTransport('fake', config(patch));
    transports.push(transport);
    return transport;
  };
  const post = (transport: UpstreamTransport, signal?: CallSignal) =>
    transport.send({
      url: `${upstream.baseUrl}/chat/completions`,
      headers: { 'content-type': 'application/json' },
      body: '{"model":"m","messages":[]}',
      ...(signal ? { signal } : {}),
    });

  beforeEach(async () => {
    upstream = await startFakeOpenAiUpstream();
  });
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
    await upstream.close();
  });

  it('retries 503 and 429 with backoff and succeeds, replaying the same body', async () => {
    upstream.script({ kind: 'json', status: 503, body: { error: { message: 'overloaded' } } }, { kind: 'json', status: 429, body: {} });
    const response = await post(make());
    assert.equal(response.status, 200);
    assert.equal(response.attempts, 3);
    assert.equal(upstream.requests.length, 3);
    assert.ok(upstream.requests.every((r) => r.raw.toString() === '{"model":"m","messages":[]}'));
  });

  it('does not retry a 500 or 502: the upstream may have done (and billed) the work', async () => {
    upstream.script(
      { kind: 'json', status: 500, body: { error: { message: 'boom' } } },
      { kind: 'json', status: 502, body: { error: { message: 'bad gateway' } } },
    );
    const first = await rejection(post(make()));
    assert.equal(first.status, 500);
    const second = await rejection(post(make()));
    assert.equal(second.status, 502);
    assert.equal(upstream.requests.length, 2);
  });

  it('honours Retry-After (seconds) on 429 before retrying', async () => {
    upstream.script({ kind: 'json', status: 429, body: { error: { message: 'slow down' } }, headers: { 'retry-after': '1' } });
    const started = Date.now();
    const response = await post(make());
    const elapsed = Date.now() - started;
    assert.equal(response.status, 200);
    assert.equal(upstream.requests.length, 2);
    assert.ok(elapsed >= 950, `waited only ${elapsed} ms`);
  });

  it('gives a Retry-After longer than maxDelayMs back to the caller with its status and header', async () => {
    upstream.script({ kind: 'json', status: 429, body: { error: { message: 'Rate limit reached', type: 'requests' } }, headers: { 'retry-after': '30' } });
    const err = await rejection(post(make()));
    assert.equal(upstream.requests.length, 1);
    assert.equal(err.status, 429);
    assert.equal(err.code, 'upstream_error');
    assert.equal(err.message, 'Rate limit reached');
    assert.equal(err.headers['retry-after'], '30');
  });

  it('stops after retries.max retries and surfaces the upstream status and message', async () => {
    for (let i = 0; i < 3; i += 1) upstream.script({ kind: 'json', status: 503, body: { error: { message: `unavailable ${i}` } } });
    const err = await rejection(post(make()));
    assert.equal(upstream.requests.length, 3);
    assert.equal(err.status, 503);
    assert.equal(err.message, 'unavailable 2');
  });

  it('does not retry a 4xx answer', async () => {
    upstream.script({ kind: 'json', status: 400, body: { error: { message: 'bad temperature', type: 'invalid_request_error' } } });
    const err = await rejection(post(make()));
    assert.equal(upstream.requests.length, 1);
    assert.equal(err.status, 400);
    assert.equal(err.type, 'invalid_request_error');
  });

  it('never resends a POST the upstream received when the connection then resets', async () => {
    upstream.script({ kind: 'drop' });
    const err = await rejection(post(make()));
    assert.equal(err.code, 'upstream_error');
    assert.equal(err.status, 502);
    assert.match(err.message, /closed the connection without a response; the request was not retried/);
    assert.equal(upstream.requests.length, 1);
  });

  it('never retries once the reply started: a stream cut mid-way throws from the body', async () => {
    upstream.script({ kind: 'sse', chunks: chatStreamEvents('m', ['a', 'b']), failAfter: 2, gapMs: 20 });
    const response = await post(make());
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of response.body) seen.push(chunk.toString());
      })(),
      (err: unknown) => err instanceof GatewayError && err.code === 'upstream_error',
    );
    assert.ok(seen.length > 0);
    assert.equal(upstream.requests.length, 1);
  });

  it('times out a slow first byte without retrying', async () => {
    upstream.script({ kind: 'hang' });
    const err = await rejection(post(make({ timeouts: { firstByteMs: 150 } })));
    assert.equal(err.code, 'upstream_timeout');
    assert.equal(err.status, 504);
    assert.equal(upstream.requests.length, 1);
  });

  it('times out an idle reply body', async () => {
    upstream.script({ kind: 'stall-after-headers' });
    const response = await post(make({ timeouts: { idleMs: 150 } }));
    await assert.rejects(response.text(), (err: unknown) => err instanceof GatewayError && err.code === 'upstream_timeout');
  });

  it('aborts the upstream call when the signal fires', async () => {
    upstream.script({ kind: 'hang' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(post(make(), controller.signal));
    await upstream.waitForAborts(1);
    assert.equal(upstream.requests.length, 1);
  });

  it("aborts the upstream call when a request's CallAbort fires (undici's EventEmitter-shaped signal)", async () => {
    upstream.script({ kind: 'hang' });
    const abort = new CallAbort();
    setTimeout(() => abort.abort(), 50);
    await assert.rejects(post(make(), abort), (err: unknown) => (err as Error).name === 'AbortError');
    await upstream.waitForAborts(1);
    assert.equal(upstream.requests.length, 1);
  });

  it('a CallAbort fired during a retry backoff ends the wait at once', async () => {
    upstream.script({ kind: 'json', status: 503, body: { error: { message: 'busy' } } });
    const abort = new CallAbort();
    const started = Date.now();
    setTimeout(() => abort.abort(), 50);
    await assert.rejects(post(make({ retries: { max: 2, baseDelayMs: 5000, maxDelayMs: 5000 } }), abort));
    assert.ok(Date.now() - started < 2000, `the backoff was not cut short (${Date.now() - started} ms)`);
    assert.equal(upstream.requests.length, 1);
  });

  it('trusts an operator-configured loopback baseUrl as written (no allowPrivateNetwork needed)', async () => {
    const transport = new UpstreamTransport('fake', config());
    transports.push(transport);
    const byLiteral = await post(transport);
    assert.equal(byLiteral.status, 200);
    await byLiteral.text();
    const byName = await transport.send({ url: `${upstream.baseUrl.replace('127.0.0.1', 'localhost')}/chat/completions`, headers: {}, body: '{}' });
    assert.equal(byName.status, 200);
    await byName.text();
    assert.equal(upstream.requests.length, 2);
  });

  it('parses Retry-After as seconds, HTTP date and retry-after-ms', () => {
    assert.equal(retryAfterMs({ 'retry-after': '2' }), 2000);
    assert.equal(retryAfterMs({ 'retry-after-ms': '250' }), 250);
    assert.equal(retryAfterMs({ 'retry-after': new Date(10_000).toUTCString() }, 4_000), 6000);
    assert.equal(retryAfterMs({}), null);
  });
});

describe('upstream transport, malformed replies', () => {
  it('answers a reply that is not valid HTTP with a 502 saying so, without retrying it', async () => {
    let requests = 0;
    const server = netServer((socket) => {
      socket.on('data', () => {
        requests++;
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\nabcd');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const transport = new UpstreamTransport('fake', config());
    try {
      const err = await rejection(transport.send({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`, headers: {}, body: '{}' }));
      assert.equal(err.code, 'upstream_error');
      assert.equal(err.status, 502);
      assert.match(err.message, /fake sent a response that is not valid HTTP\./);
      assert.equal(requests, 1);
    } finally {
      await transport.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('upstream transport, informational replies', () => {
  it('skips a 1xx head (103 Early Hints) and resolves with the final status, headers and body', async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
      res.writeHead(200, { 'content-type': 'application/json', 'x-final': 'yes' });
      res.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const transport = new UpstreamTransport('fake', config({ retries: { max: 0 } }));
    try {
      const response = await transport.send({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`, headers: {}, method: 'GET' });
      assert.equal(response.status, 200);
      assert.equal(response.headers['x-final'], 'yes');
      assert.deepEqual(await response.json(), { ok: true });
    } finally {
      await transport.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('upstream transport, retries only what provably was not processed', () => {
  it('retries a refused connection (no byte was sent) and sends the request exactly once when the upstream is up', async () => {
    const probe = netServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    let requests = 0;
    const server = createServer((req, res) => {
      requests++;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    // The jitter source is asked for a backoff only after a failed attempt: the upstream comes up then.
    const random = (): number => {
      if (!server.listening) server.listen(port, '127.0.0.1');
      return 0;
    };
    const transport = new UpstreamTransport('fake', config({ retries: { max: 2, baseDelayMs: 400, maxDelayMs: 400 } }), { random });
    try {
      const response = await transport.send({ url: `http://127.0.0.1:${port}/x`, headers: {}, body: '{"n":1}' });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { ok: true });
      assert.equal(response.attempts, 2);
      assert.equal(requests, 1);
    } finally {
      await transport.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('does not resend a POST whose bytes the upstream read before it reset the connection', async () => {
    let received = 0;
    const server = netServer((socket) => {
      let bytes = '';
      socket.on('data', (chunk: Buffer) => {
        bytes += chunk.toString('latin1');
        // The whole request arrived (head and the 7-byte body): reset instead of answering.
        if (bytes.includes('\r\n\r\n') && bytes.endsWith('{"n":1}')) {
          received++;
          socket.resetAndDestroy();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const transport = new UpstreamTransport('fake', config({ retries: { max: 3, baseDelayMs: 10, maxDelayMs: 10 } }));
    try {
      const err = await rejection(transport.send({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`, headers: {}, body: '{"n":1}' }));
      assert.equal(err.status, 502);
      assert.match(err.message, /the request was not retried/);
      assert.equal(received, 1);
    } finally {
      await transport.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
