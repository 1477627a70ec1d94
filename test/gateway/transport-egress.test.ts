// The transport's connection options: TLS to https upstreams trusted through a configured CA, HTTP/2
// when a provider asks for it, the egress proxy named by HTTPS_PROXY / HTTP_PROXY / NO_PROXY, and the
// bounds on what an upstream may send.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type AddressInfo, type Server } from 'node:net';
import path from 'node:path';
import type { ProviderConfig } from '../../src/config/types';
import { UpstreamTransport } from '../../src/providers/http/transport';
import { rejection } from '../helpers/rejection';

const TLS_DIR = path.join(__dirname, '../fixtures/tls');
const CA_FILE = path.join(TLS_DIR, 'localhost.crt');
const key = readFileSync(path.join(TLS_DIR, 'localhost.key'));
const cert = readFileSync(CA_FILE);

type Handler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;

/** Answers `{"version": <the HTTP version the request came in>}` and counts requests. */
function versionEcho(counter: { requests: number }): Handler {
  return (req, res) => {
    counter.requests++;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ version: req.httpVersion }));
    });
  };
}

async function listen(server: Server | ReturnType<typeof createSecureServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function close(server: { close(cb: () => void): unknown }): Promise<void> {
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

function provider(patch: Partial<ProviderConfig> = {}): ProviderConfig {
  return { type: 'openai', retries: { max: 0 }, ...patch };
}

/** A CONNECT proxy on 127.0.0.1 that records the targets it tunnelled to. */
async function startConnectProxy(): Promise<{ url: string; targets: string[]; close(): Promise<void> }> {
  const targets: string[] = [];
  const server = createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req: IncomingMessage, client: import('node:stream').Duplex, head: Buffer) => {
    const target = req.url ?? '';
    targets.push(target);
    const [host = '', port = '0'] = target.split(':');
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    targets,
    close: async () => {
      server.closeAllConnections();
      await close(server);
    },
  };
}

describe('upstream transport, TLS, HTTP/2 and the egress proxy', () => {
  const transports: UpstreamTransport[] = [];
  const make = (config: ProviderConfig, env: NodeJS.ProcessEnv = {}): UpstreamTransport => {
    const transport = new UpstreamTransport('fake', config, { env });
    transports.push(transport);
    return transport;
  };
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
  });

  it('speaks TLS to an https upstream whose certificate a configured CA file signs, and refuses it without that CA', async () => {
    const counter = { requests: 0 };
    const server = createHttpsServer({ key, cert }, versionEcho(counter));
    const port = await listen(server);
    try {
      const trusted = make(provider({ tls: { caFile: CA_FILE } }));
      const response = await trusted.send({ url: `https://localhost:${port}/v1/chat`, headers: {}, body: '{}' });
      assert.deepEqual(await response.json(), { version: '1.1' });
      // Node's bundled CAs do not know the self-signed certificate: verification is never switched off.
      const err = await rejection(make(provider()).send({ url: `https://localhost:${port}/v1/chat`, headers: {}, body: '{}' }));
      assert.equal(err.code, 'upstream_error');
      assert.match(err.message, /unreachable/);
      assert.equal(counter.requests, 1);
    } finally {
      server.closeAllConnections();
      await close(server);
    }
  });

  it('uses HTTP/2 to an https upstream when the provider sets http2, HTTP/1.1 by default', async () => {
    const counter = { requests: 0 };
    const server = createSecureServer({ key, cert, allowHTTP1: true }, versionEcho(counter));
    const port = await listen(server);
    try {
      const h2 = make(provider({ tls: { caFile: CA_FILE }, http2: true }));
      assert.deepEqual(await (await h2.send({ url: `https://localhost:${port}/x`, headers: {}, body: '{}' })).json(), { version: '2.0' });
      const h1 = make(provider({ tls: { caFile: CA_FILE } }));
      assert.deepEqual(await (await h1.send({ url: `https://localhost:${port}/x`, headers: {}, body: '{}' })).json(), { version: '1.1' });
      assert.equal(counter.requests, 2);
    } finally {
      await Promise.all(transports.splice(0).map((t) => t.close()));
      await close(server);
    }
  });

  it('tunnels through the proxy HTTPS_PROXY / HTTP_PROXY name, to http and https upstreams, unless NO_PROXY lists the host', async () => {
    const proxy = await startConnectProxy();
    const counter = { requests: 0 };
    const plain = createServer(versionEcho(counter));
    const secure = createHttpsServer({ key, cert }, versionEcho(counter));
    const plainPort = await listen(plain);
    const securePort = await listen(secure);
    try {
      const env = { HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url };
      const proxied = make(provider({ tls: { caFile: CA_FILE } }), env);
      assert.equal((await proxied.send({ url: `http://127.0.0.1:${plainPort}/a`, headers: {}, body: '{}' })).status, 200);
      const viaTls = await proxied.send({ url: `https://localhost:${securePort}/b`, headers: {}, body: '{}' });
      assert.deepEqual(await viaTls.json(), { version: '1.1' });
      assert.deepEqual(proxy.targets, [`127.0.0.1:${plainPort}`, `localhost:${securePort}`]);

      const bypassed = make(provider(), { ...env, NO_PROXY: '127.0.0.1' });
      assert.equal((await bypassed.send({ url: `http://127.0.0.1:${plainPort}/c`, headers: {}, body: '{}' })).status, 200);
      assert.equal(proxy.targets.length, 2);

      const direct = make(provider());
      assert.equal((await direct.send({ url: `http://127.0.0.1:${plainPort}/d`, headers: {}, body: '{}' })).status, 200);
      assert.equal(proxy.targets.length, 2);
      assert.equal(counter.requests, 4);
    } finally {
      await Promise.all(transports.splice(0).map((t) => t.close()));
      plain.closeAllConnections();
      secure.closeAllConnections();
      await Promise.all([close(plain), close(secure), proxy.close()]);
    }
  });
});

describe('upstream transport, bounds on what an upstream sends', () => {
  let server: Server;
  let port: number;
  let reply: (res: ServerResponse) => void;
  const transports: UpstreamTransport[] = [];
  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => reply(res));
    }) as unknown as Server;
    port = await listen(server);
  });
  after(async () => {
    (server as unknown as { closeAllConnections(): void }).closeAllConnections();
    await close(server);
  });
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
  });
  const send = () => {
    const transport = new UpstreamTransport('fake', provider({ limits: { maxBodyBytes: 4096, maxSseLineBytes: 2048 } }));
    transports.push(transport);
    return transport.send({ url: `http://127.0.0.1:${port}/x`, headers: {}, body: '{}' });
  };

  it('fails a non-streamed reply larger than limits.maxBodyBytes with a 502, one within it passes', async () => {
    reply = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(`"${'a'.repeat(4000)}"`);
    assert.equal(((await (await send()).json()) as string).length, 4000);
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Written in pieces: the bound holds however the body is framed.
      for (let i = 0; i < 10; i++) res.write(`${'b'.repeat(999)}\n`);
      res.end();
    };
    const err = await rejection((await send()).text());
    assert.equal(err.status, 502);
    assert.match(err.message, /sent a reply longer than 4096 bytes/);
  });

  it('fails a stream whose line outgrows limits.maxSseLineBytes, while a long stream of short lines passes', async () => {
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 100; i++) res.write(`data: ${'c'.repeat(100)}\n\n`);
      res.end();
    };
    let size = 0;
    await (await send()).body.forEach((chunk) => void (size += chunk.length));
    assert.equal(size, 100 * 108);
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"ok":true}\n\n');
      for (let i = 0; i < 5; i++) res.write(`data: ${'d'.repeat(1000)}`);
      res.end('\n\n');
    };
    const err = await rejection((await send()).body.forEach(() => undefined));
    assert.equal(err.status, 502);
    assert.match(err.message, /sent a stream line longer than 2048 bytes/);
  });
});
