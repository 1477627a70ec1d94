// Tiny real proxies on 127.0.0.1 for the egress tests: an HTTP proxy (absolute-URL requests and CONNECT
// tunnels, RFC 9110 §9.3.6) and a SOCKS5 proxy (RFC 1928, username/password per RFC 1929). Each checks
// its credentials and records what it forwarded, so a test can tell whether traffic went through it.
import { once } from 'node:events';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';

export interface FakeProxy {
  /** Where to reach it: host:port (the test writes the scheme and credentials). */
  readonly hostPort: string;
  /** Targets forwarded, in order: `GET http://…` for absolute-URL requests, `CONNECT host:port` for tunnels. */
  readonly forwarded: string[];
  /** Requests refused for missing or wrong credentials. */
  refused: number;
  /**
   * Whether a connection the target sees, by its remote port, is one this proxy opened. Tunnels are
   * kept alive and reused, so a target's request counts as proxied by its connection, not by a CONNECT.
   */
  carries(remotePort: number | undefined): boolean;
  close(): Promise<void>;
}

function trackSockets(server: Server | TcpServer): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return sockets;
}

/** Remembers an upstream connection's local port while it is open (the port the target sees). */
function trackUpstream(upstream: Socket, upstreamSockets: Set<Socket>, ports: Set<number>): void {
  upstreamSockets.add(upstream);
  if (upstream.localPort !== undefined) ports.add(upstream.localPort);
  upstream.on('connect', () => {
    if (upstream.localPort !== undefined) ports.add(upstream.localPort);
  });
  upstream.on('close', () => {
    upstreamSockets.delete(upstream);
    if (upstream.localPort !== undefined) ports.delete(upstream.localPort);
  });
}

async function closeServer(server: Server | TcpServer, sockets: Set<Socket>, extra: Set<Socket>): Promise<void> {
  for (const socket of [...sockets, ...extra]) socket.destroy();
  server.close();
  await once(server, 'close');
}

/** An HTTP proxy wanting `Proxy-Authorization: Basic base64(user:password)`. */
export async function startHttpProxy(user: string, password: string): Promise<FakeProxy> {
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const upstreamSockets = new Set<Socket>();
  const ports = new Set<number>();
  const state = { refused: 0 };
  const forwarded: string[] = [];
  const server = createServer((req, res) => {
    if (req.headers['proxy-authorization'] !== expected) {
      state.refused += 1;
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
      return;
    }
    forwarded.push(`${req.method} ${req.url}`);
    const target = new URL(req.url ?? '');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    // agent: false, one connection per request: the target sees it as this proxy's by its port.
    const upstream = httpRequest(target, { method: req.method, headers, agent: false }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('socket', (socket) => trackUpstream(socket, upstreamSockets, ports));
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    if (req.headers['proxy-authorization'] !== expected) {
      state.refused += 1;
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n\r\n');
      return;
    }
    forwarded.push(`CONNECT ${req.url}`);
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host ?? '', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    trackUpstream(upstream, upstreamSockets, ports);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  const sockets = trackSockets(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    hostPort: `127.0.0.1:${port}`,
    forwarded,
    get refused() {
      return state.refused;
    },
    set refused(value: number) {
      state.refused = value;
    },
    carries: (remotePort) => remotePort !== undefined && ports.has(remotePort),
    close: () => closeServer(server, sockets, upstreamSockets),
  };
}

/** A SOCKS5 proxy wanting username/password authentication. */
export async function startSocksProxy(user: string, password: string): Promise<FakeProxy> {
  const upstreamSockets = new Set<Socket>();
  const ports = new Set<number>();
  const state = { refused: 0 };
  const forwarded: string[] = [];
  const server = createTcpServer((client) => {
    let buffer = Buffer.alloc(0);
    let stage: 'greeting' | 'auth' | 'request' | 'piping' = 'greeting';
    client.on('error', () => undefined);
    const onData = (chunk: Buffer): void => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (stage === 'greeting') {
          // VER NMETHODS METHODS…; 0x02 is username/password.
          if (buffer.length < 2 || buffer.length < 2 + buffer[1]!) return;
          const methods = buffer.subarray(2, 2 + buffer[1]!);
          buffer = buffer.subarray(2 + buffer[1]!);
          if (!methods.includes(0x02)) {
            state.refused += 1;
            client.end(Buffer.from([0x05, 0xff]));
            return;
          }
          client.write(Buffer.from([0x05, 0x02]));
          stage = 'auth';
        } else if (stage === 'auth') {
          // VER ULEN UNAME PLEN PASSWD (RFC 1929).
          if (buffer.length < 2) return;
          const ulen = buffer[1]!;
          if (buffer.length < 3 + ulen) return;
          const plen = buffer[2 + ulen]!;
          if (buffer.length < 3 + ulen + plen) return;
          const name = buffer.subarray(2, 2 + ulen).toString();
          const pass = buffer.subarray(3 + ulen, 3 + ulen + plen).toString();
          buffer = buffer.subarray(3 + ulen + plen);
          if (name !== user || pass !== password) {
            state.refused += 1;
            client.end(Buffer.from([0x01, 0x01]));
            return;
          }
          client.write(Buffer.from([0x01, 0x00]));
          stage = 'request';
        } else if (stage === 'request') {
          // VER CMD RSV ATYP DST.ADDR DST.PORT; only CONNECT (0x01).
          if (buffer.length < 5) return;
          const atyp = buffer[3]!;
          const addressLength = atyp === 0x01 ? 4 : atyp === 0x04 ? 16 : 1 + buffer[4]!;
          if (buffer.length < 4 + addressLength + 2) return;
          const address = buffer.subarray(4, 4 + addressLength);
          const host =
            atyp === 0x01 ? [...address].join('.') : atyp === 0x03 ? address.subarray(1).toString() : (address.toString('hex').match(/.{4}/g) ?? []).join(':');
          const port = buffer.readUInt16BE(4 + addressLength);
          const rest = buffer.subarray(4 + addressLength + 2);
          stage = 'piping';
          client.off('data', onData);
          forwarded.push(`CONNECT ${host}:${port}`);
          const upstream = connect(port, host, () => {
            client.write(Buffer.from([0x05, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0]));
            if (rest.length > 0) upstream.write(rest);
            upstream.pipe(client);
            client.pipe(upstream);
          });
          trackUpstream(upstream, upstreamSockets, ports);
          upstream.on('error', () => client.end(Buffer.from([0x05, 0x05, 0x00, 0x01, 0, 0, 0, 0, 0, 0])));
          return;
        } else {
          return;
        }
      }
    };
    client.on('data', onData);
  });
  const sockets = trackSockets(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    hostPort: `127.0.0.1:${port}`,
    forwarded,
    get refused() {
      return state.refused;
    },
    set refused(value: number) {
      state.refused = value;
    },
    carries: (remotePort) => remotePort !== undefined && ports.has(remotePort),
    close: () => closeServer(server, sockets, upstreamSockets),
  };
}
