// The guard proxy of one conversation's browser context: a forward proxy on 127.0.0.1 that every
// request of the context goes out through (its `proxy` option; Playwright also sends loopback through
// it). The route handler (session.ts) refuses what it can see up front, but it cannot see everything:
// Playwright does not route a redirect's next hop, nor WebSockets, nor preconnects, and Chromium
// resolves names itself, so a check made in the route handler could be answered differently at connect
// time (DNS rebinding). Here the target's addresses are checked when the connection is made, with
// the gateway's guarded lookup (web-access.ts), as for every other tool-supplied URL.
//
// When the conversation is connected to an egress profile (svc_vpn_connect), connections go out
// through that proxy instead (HTTP: absolute-form requests; HTTPS and WebSockets: CONNECT), after the
// target's name was resolved here and found public (the same rule as GuardedFetch through a proxy).
//
// The proxy asks for a password of its own (Basic, random per context), so that no other local
// process can use it to reach the hosts the operator allow-listed.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { bareHost, SsrfBlockedError } from '../../../providers/http/ssrf-guard';
import { checkUrl, checkViaDns, lookupFor, WebAccessError, type HostAllowList } from '../../web-access';

/** Response header of a request the proxy refused: the session reads it to say why a navigation failed. */
export const REFUSED_HEADER = 'x-agent-gateway-refused';

/** Headers that concern one connection (RFC 9110 §7.6.1), never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authorization', 'proxy-authenticate', 'proxy-connection', 'te', 'trailer', 'upgrade']);

const CONNECT_TIMEOUT_MS = 30_000;
/** Refusal reasons kept per proxy (for the session's messages); the oldest go first. */
const MAX_REFUSALS = 256;

class Refused extends Error {}

function reasonOf(err: unknown, host: string): string {
  if (err instanceof SsrfBlockedError || (err as { code?: string } | null)?.code === 'ERR_SSRF_BLOCKED') {
    return `${bareHost(host)} is not reachable from this gateway (a private or special-purpose address).`;
  }
  if (err instanceof WebAccessError || err instanceof Refused) return err.message;
  return `${bareHost(host)} could not be reached: ${err instanceof Error ? err.message : String(err)}`;
}

function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** The Proxy-Authorization an egress proxy URL carries in its user info, if any. */
function upstreamAuth(upstream: URL): Record<string, string> {
  if (!upstream.username && !upstream.password) return {};
  return { 'proxy-authorization': basicAuth(decodeURIComponent(upstream.username), decodeURIComponent(upstream.password)) };
}

function upstreamPort(upstream: URL): number {
  return Number(upstream.port || (upstream.protocol === 'https:' ? 443 : 80));
}

function forwardedHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

export class GuardProxy {
  readonly username = 'browser';
  readonly password = randomBytes(18).toString('base64url');
  private readonly expectedAuth: Buffer;
  private readonly tunnels = new Set<Duplex>();
  private readonly refusals = new Map<string, string>();
  private upstream: URL | null = null;
  private agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

  private constructor(
    private readonly server: http.Server,
    private readonly allow: HostAllowList,
  ) {
    this.expectedAuth = Buffer.from(basicAuth(this.username, this.password));
    server.on('request', (req, res) => void this.onRequest(req, res));
    server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void this.onConnect(req, socket, head));
    // An upgrade request outside a tunnel is not something Chromium sends through a proxy.
    server.on('upgrade', (_req: http.IncomingMessage, socket: Duplex) => socket.destroy());
  }

  static async start(allow: HostAllowList): Promise<GuardProxy> {
    const server = http.createServer();
    const proxy = new GuardProxy(server, allow);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  /** The proxy's address, for the browser context's `proxy.server`. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /**
   * Sets the egress proxy (null: direct). A change closes the open connections, so that nothing
   * keeps going out the old way.
   */
  setUpstream(proxyUrl: string | null): void {
    if ((this.upstream?.href ?? null) === (proxyUrl === null ? null : new URL(proxyUrl).href)) return;
    if (proxyUrl !== null) {
      const parsed = new URL(proxyUrl);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
        throw new WebAccessError(`The browser can go out only through an http or https egress proxy, not ${parsed.protocol}`);
      }
      this.upstream = parsed;
    } else {
      this.upstream = null;
    }
    this.dropConnections();
  }

  /** Why the proxy refused a connection to `host:port` (the last time), if it did. */
  refusalFor(host: string, port: string): string | undefined {
    return this.refusals.get(`${bareHost(host).toLowerCase()}:${port}`);
  }

  async close(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private dropConnections(): void {
    for (const socket of this.tunnels) socket.destroy();
    this.tunnels.clear();
    this.server.closeAllConnections();
    this.agent.destroy();
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  }

  private authorized(req: http.IncomingMessage): boolean {
    const given = Buffer.from(req.headers['proxy-authorization'] ?? '');
    return given.length === this.expectedAuth.length && timingSafeEqual(given, this.expectedAuth);
  }

  private remember(url: URL, reason: string): void {
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    if (this.refusals.size >= MAX_REFUSALS) this.refusals.delete(this.refusals.keys().next().value as string);
    this.refusals.set(`${bareHost(url.hostname).toLowerCase()}:${port}`, reason);
  }

  /** Throws when the target may not be reached: its scheme, a private literal, or (through an egress proxy) a private answer. */
  private async admit(url: URL, upstream: URL | null): Promise<void> {
    checkUrl(url, this.allow);
    if (upstream) await checkViaDns(url, this.allow);
  }

  /** A plain-HTTP request in absolute form (`GET http://host/path`). */
  private async onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    res.on('error', () => undefined);
    if (!this.authorized(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="browser"', 'content-length': '0' }).end();
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:') throw new Refused('only http requests are proxied; https goes through CONNECT');
    } catch (err) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(err instanceof Refused ? err.message : 'Not a proxy request.');
      return;
    }
    const refuse = (err: unknown): void => {
      const reason = reasonOf(err, url.hostname);
      this.remember(url, reason);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const blocked = err instanceof SsrfBlockedError || err instanceof WebAccessError || (err as { code?: string } | null)?.code === 'ERR_SSRF_BLOCKED';
      const headers = { 'content-type': 'text/plain; charset=utf-8', ...(blocked ? { [REFUSED_HEADER]: encodeURIComponent(reason) } : {}) };
      res.writeHead(blocked ? 403 : 502, headers).end(reason);
    };
    const upstream = this.upstream;
    try {
      await this.admit(url, upstream);
    } catch (err) {
      req.resume();
      refuse(err);
      return;
    }
    const headers = forwardedHeaders(req.headers);
    const options: http.RequestOptions = upstream
      ? {
          host: bareHost(upstream.hostname),
          port: upstreamPort(upstream),
          method: req.method ?? 'GET',
          path: url.href,
          headers: { ...headers, ...upstreamAuth(upstream) },
          agent: false,
          timeout: CONNECT_TIMEOUT_MS,
        }
      : {
          host: bareHost(url.hostname),
          port: Number(url.port || 80),
          method: req.method ?? 'GET',
          path: `${url.pathname}${url.search}`,
          headers,
          lookup: lookupFor(this.allow),
          agent: this.agent,
          timeout: CONNECT_TIMEOUT_MS,
        };
    const outgoing = (upstream?.protocol === 'https:' ? https : http).request(options, (reply) => {
      outgoing.setTimeout(0);
      const replyHeaders = forwardedHeaders(reply.headers);
      // Only this proxy says what it refused: a site cannot pose as the guard.
      delete replyHeaders[REFUSED_HEADER];
      res.writeHead(reply.statusCode ?? 502, reply.statusMessage, replyHeaders);
      reply.pipe(res);
      reply.on('error', () => res.destroy());
    });
    outgoing.on('timeout', () => outgoing.destroy(new Refused(`${url.host} did not answer in time.`)));
    outgoing.on('error', refuse);
    req.on('error', () => outgoing.destroy());
    req.pipe(outgoing);
  }

  /** A tunnel (`CONNECT host:port`): HTTPS and WebSockets. */
  private async onConnect(req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on('error', () => undefined);
    this.tunnels.add(client);
    client.on('close', () => this.tunnels.delete(client));
    if (!this.authorized(req)) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="browser"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    let url: URL;
    try {
      // The https: scheme makes port 443 the default, as the allow list expects for a tunnel.
      url = new URL(`https://${req.url ?? ''}`);
      if (url.pathname !== '/' || url.search || url.username) throw new Refused('not a host:port');
    } catch {
      client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const port = Number(url.port || 443);
    const upstream = this.upstream;
    let target: Duplex;
    try {
      await this.admit(url, upstream);
      target = upstream ? await this.tunnelThrough(upstream, url, port) : await this.connectDirect(url, port);
    } catch (err) {
      const reason = reasonOf(err, url.hostname);
      this.remember(url, reason);
      client.end(`HTTP/1.1 403 Forbidden\r\n${REFUSED_HEADER}: ${encodeURIComponent(reason)}\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    if (client.destroyed) {
      target.destroy();
      return;
    }
    this.tunnels.add(target);
    target.on('close', () => {
      this.tunnels.delete(target);
      client.destroy();
    });
    target.on('error', () => client.destroy());
    client.on('close', () => target.destroy());
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) target.write(head);
    client.pipe(target);
    target.pipe(client);
  }

  private connectDirect(url: URL, port: number): Promise<Duplex> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: bareHost(url.hostname), port, lookup: lookupFor(this.allow) });
      socket.setTimeout(CONNECT_TIMEOUT_MS, () => socket.destroy(new Refused(`${url.host} did not answer in time.`)));
      socket.once('connect', () => {
        socket.setTimeout(0);
        socket.removeListener('error', reject);
        resolve(socket);
      });
      socket.once('error', reject);
    });
  }

  private tunnelThrough(upstream: URL, url: URL, port: number): Promise<Duplex> {
    return new Promise((resolve, reject) => {
      const authority = `${url.hostname}:${port}`;
      const request = (upstream.protocol === 'https:' ? https : http).request({
        host: bareHost(upstream.hostname),
        port: upstreamPort(upstream),
        method: 'CONNECT',
        path: authority,
        headers: { host: authority, ...upstreamAuth(upstream) },
        agent: false,
        timeout: CONNECT_TIMEOUT_MS,
      });
      request.once('connect', (reply, socket, head) => {
        request.setTimeout(0);
        if (reply.statusCode !== 200) {
          socket.destroy();
          reject(new Refused(`The egress proxy refused the connection to ${authority} (${reply.statusCode ?? 'no status'}).`));
          return;
        }
        if (head.length > 0) socket.unshift(head);
        resolve(socket);
      });
      request.once('timeout', () => request.destroy(new Refused('The egress proxy did not answer in time.')));
      request.once('error', (err) => reject(new Refused(`The egress proxy could not be reached: ${err.message}`)));
      request.end();
    });
  }
}
