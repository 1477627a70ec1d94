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

/** What a proxy's handlers report to the listener that runs them: targets, refusals, upstream connections. */
interface ProxyLog {
  readonly forwarded: string[];
  readonly refuse: () => void;
  /** Remembers an upstream connection's local port while it is open (the port the target sees). */
  readonly track: (upstream: Socket) => void;
}

/** Listens on 127.0.0.1 with the server `build` makes, and answers for it as a FakeProxy. */
async function startProxy(build: (log: ProxyLog) => Server | TcpServer): Promise<FakeProxy> {
  const upstreamSockets = new Set<Socket>();
  const ports = new Set<number>();
  const state = { refused: 0 };
  const forwarded: string[] = [];
  const server = build({
    forwarded,
    refuse: () => {
      state.refused += 1;
    },
    track: (upstream) => {
      upstreamSockets.add(upstream);
      if (upstream.localPort !== undefined) ports.add(upstream.localPort);
      upstream.on('connect', () => {
        if (upstream.localPort !== undefined) ports.add(upstream.localPort);
      });
      upstream.on('close', () => {
        upstreamSockets.delete(upstream);
        if (upstream.localPort !== undefined) ports.delete(upstream.localPort);
      });
    },
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
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
    close: async () => {
      for (const socket of [...sockets, ...upstreamSockets]) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** An HTTP proxy wanting `Proxy-Authorization: Basic base64(user:password)`. */
export function startHttpProxy(user: string, password: string): Promise<FakeProxy> {
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  return startProxy(({ forwarded, refuse, track }) => {
    const server = createServer((req, res) => {
      if (req.headers['proxy-authorization'] !== expected) {
        refuse();
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
      upstream.on('socket', track);
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    server.on('connect', (req, client: Socket, head: Buffer) => {
      if (req.headers['proxy-authorization'] !== expected) {
        refuse();
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
      track(upstream);
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    return server;
  });
}

/** A SOCKS5 proxy wanting username/password authentication. */
export function startSocksProxy(user: string, password: string): Promise<FakeProxy> {
  return startProxy(({ forwarded, refuse, track }) =>
    createTcpServer((client) => {
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
              refuse();
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
              refuse();
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
              atyp === 0x01
                ? [...address].join('.')
                : atyp === 0x03
                  ? address.subarray(1).toString()
                  : (address.toString('hex').match(/.{4}/g) ?? []).join(':');
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
            track(upstream);
            upstream.on('error', () => client.end(Buffer.from([0x05, 0x05, 0x00, 0x01, 0, 0, 0, 0, 0, 0])));
            return;
          } else {
            return;
          }
        }
      };
      client.on('data', onData);
    }),
  );
}
