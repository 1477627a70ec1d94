// The browser's guard proxy on its own, spoken to as Chromium does (absolute-form requests, CONNECT):
// its password, the connect-time address check, and the way out through an egress proxy.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { GuardProxy, REFUSED_HEADER } from '../../src/tools/hosted/browser/guard-proxy';
import { HostAllowList } from '../../src/tools/web-access';
import { startEgressProxy, startPrivateServer, startSite } from './browser-fixtures';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function auth(proxy: GuardProxy): string {
  return `Basic ${Buffer.from(`${proxy.username}:${proxy.password}`).toString('base64')}`;
}

function proxied(proxy: GuardProxy, target: string, authorization: string | null = auth(proxy)): Promise<Reply> {
  const { port } = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, method: 'GET', path: target, headers: authorization ? { 'proxy-authorization': authorization } : {}, agent: false },
      (reply) => {
        const chunks: Buffer[] = [];
        reply.on('data', (chunk: Buffer) => chunks.push(chunk));
        reply.on('end', () => resolve({ status: reply.statusCode ?? 0, headers: reply.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

/** CONNECT through the proxy: the status, and the tunnel when it was opened. */
function tunnel(
  proxy: GuardProxy,
  authority: string,
  authorization: string | null = auth(proxy),
): Promise<{ status: number; headers: http.IncomingHttpHeaders; socket: Duplex }> {
  const { port } = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: '127.0.0.1',
      port,
      method: 'CONNECT',
      path: authority,
      headers: authorization ? { 'proxy-authorization': authorization } : {},
      agent: false,
    });
    request.on('connect', (reply, socket) => resolve({ status: reply.statusCode ?? 0, headers: reply.headers, socket }));
    request.on('error', reject);
    request.end();
  });
}

/** An HTTP/1.1 GET over an open tunnel; the raw reply. */
function getOver(socket: Duplex, host: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

describe('browser guard proxy', () => {
  let hidden: Awaited<ReturnType<typeof startPrivateServer>>;
  let site: Awaited<ReturnType<typeof startSite>>;
  let proxy: GuardProxy;

  before(async () => {
    hidden = await startPrivateServer();
    site = await startSite(hidden.port);
  });
  beforeEach(async () => {
    proxy = await GuardProxy.start(new HostAllowList([`127.0.0.1:${site.port}`]));
  });
  afterEach(async () => {
    await proxy.close();
  });
  after(async () => {
    await site.close();
    await hidden.close();
  });

  it('asks for its password (407), for requests and tunnels alike', async () => {
    const plain = await proxied(proxy, `${site.origin}/second`, null);
    assert.equal(plain.status, 407);
    assert.equal(plain.headers['proxy-authenticate'], 'Basic realm="browser"');
    assert.equal((await proxied(proxy, `${site.origin}/second`, 'Basic d3Jvbmc6d3Jvbmc=')).status, 407);
    const connect = await tunnel(proxy, `127.0.0.1:${site.port}`, null);
    assert.equal(connect.status, 407);
    connect.socket.destroy();
  });

  it('forwards a request and opens a tunnel to an allowed host', async () => {
    const reply = await proxied(proxy, `${site.origin}/second`);
    assert.equal(reply.status, 200);
    assert.match(reply.body, /You reached the second page/);
    const opened = await tunnel(proxy, `127.0.0.1:${site.port}`);
    assert.equal(opened.status, 200);
    assert.match(await getOver(opened.socket, `127.0.0.1:${site.port}`, '/second'), /^HTTP\/1\.1 200 OK[\s\S]*You reached the second page/);
  });

  it('refuses private targets at connect time: a literal, and a name that resolves to loopback, by request and by tunnel', async () => {
    const before = hidden.connections();
    for (const target of [`http://127.0.0.1:${hidden.port}/`, `http://localhost:${hidden.port}/`]) {
      const reply = await proxied(proxy, target);
      assert.equal(reply.status, 403, target);
      assert.match(decodeURIComponent(String(reply.headers[REFUSED_HEADER])), /is not reachable from this gateway \(a private or special-purpose address\)/);
    }
    for (const authority of [`127.0.0.1:${hidden.port}`, `localhost:${hidden.port}`, `[::1]:${hidden.port}`]) {
      const refused = await tunnel(proxy, authority);
      assert.equal(refused.status, 403, authority);
      refused.socket.destroy();
    }
    assert.equal(hidden.connections(), before);
    assert.match(proxy.refusalFor('localhost', String(hidden.port)) ?? '', /^localhost is not reachable/);
  });

  it('goes out through the egress proxy once set (a private name is refused before it), and direct again once cleared', async () => {
    const egress = await startEgressProxy();
    try {
      proxy.setUpstream(egress.url);
      const reply = await proxied(proxy, `${site.origin}/second`);
      assert.equal(reply.status, 200);
      const opened = await tunnel(proxy, `127.0.0.1:${site.port}`);
      assert.equal(opened.status, 200);
      assert.match(await getOver(opened.socket, `127.0.0.1:${site.port}`, '/second'), /You reached the second page/);
      assert.deepEqual(egress.targets, [`GET ${site.origin}/second`, `CONNECT 127.0.0.1:${site.port}`]);

      const refused = await tunnel(proxy, `localhost:${hidden.port}`);
      assert.equal(refused.status, 403);
      refused.socket.destroy();
      assert.equal(egress.targets.length, 2, 'the egress proxy was never asked');

      proxy.setUpstream(null);
      assert.equal((await proxied(proxy, `${site.origin}/second`)).status, 200);
      assert.equal(egress.targets.length, 2);
    } finally {
      await egress.close();
    }
  });

  it('a change of egress closes the open tunnels; a SOCKS egress is refused, saying so', async () => {
    const opened = await tunnel(proxy, `127.0.0.1:${site.port}`);
    assert.equal(opened.status, 200);
    const closed = new Promise<void>((resolve) => opened.socket.on('close', () => resolve()));
    proxy.setUpstream('http://127.0.0.1:9');
    await closed;
    assert.throws(() => proxy.setUpstream('socks5://127.0.0.1:1080'), /only through an http or https egress proxy, not socks5:/);
  });
});
