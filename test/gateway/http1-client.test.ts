// The upstream HTTP/1.1 client and its response parser, against raw sockets that send exactly the
// bytes each case needs (split reads, chunk extensions, trailers, stale connections, bad framing).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { Http1Agent, type Http1Controller, type Http1Request } from '../../src/providers/http/http1-client';
import { ResponseParseError, ResponseParser, type ResponseHead } from '../../src/providers/http/http1-response-parser';

interface Parsed {
  heads: ResponseHead[];
  body: Buffer;
  completions: number;
  parser: ResponseParser;
}

function parserFor(noBody = false): Parsed {
  const parsed: Parsed = { heads: [], body: Buffer.alloc(0), completions: 0, parser: null as unknown as ResponseParser };
  const parts: Buffer[] = [];
  parsed.parser = new ResponseParser({
    onHead: (head) => parsed.heads.push(head),
    onBody: (bytes) => {
      parts.push(Buffer.from(bytes));
      parsed.body = Buffer.concat(parts);
    },
    onComplete: () => parsed.completions++,
  });
  parsed.parser.expect(noBody);
  return parsed;
}

/** Feeds `wire` to a fresh parser in two reads split at `at` (every split is tried by the callers). */
function parseSplit(wire: string, at: number, noBody = false): Parsed {
  const bytes = Buffer.from(wire, 'latin1');
  const parsed = parserFor(noBody);
  parsed.parser.execute(bytes.subarray(0, at));
  parsed.parser.execute(bytes.subarray(at));
  return parsed;
}

const CHUNKED =
  'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nX-Twice: a\r\nx-twice: b\r\n\r\n' +
  '8;name="value"\r\ndata: 1\n\r\n' +
  'A \r\n\ndata: 22\n\r\n' +
  '0\r\nX-Trailer: yes\r\n\r\n';

describe('upstream HTTP/1.1 response parser', () => {
  it('reads a chunked body with extensions and trailers, split at every byte', () => {
    for (let at = 0; at <= CHUNKED.length; at++) {
      const parsed = parseSplit(CHUNKED, at);
      assert.equal(parsed.heads.length, 1, `split at ${at}`);
      assert.equal(parsed.heads[0]!.status, 200);
      assert.deepEqual(parsed.heads[0]!.headers['x-twice'], ['a', 'b']);
      assert.equal(parsed.body.toString(), 'data: 1\n\ndata: 22\n', `split at ${at}`);
      assert.equal(parsed.completions, 1, `split at ${at}`);
      assert.equal(parsed.parser.keepAlive, true);
    }
  });

  it('reads a Content-Length body split at every byte, then refuses bytes after it', () => {
    const wire = 'HTTP/1.1 201 Created\r\ncontent-length: 11\r\nkeep-alive: timeout=5, max=100\r\n\r\n{"ok":true}';
    for (let at = 0; at <= wire.length; at++) {
      const parsed = parseSplit(wire, at);
      assert.equal(parsed.heads[0]!.status, 201);
      assert.equal(parsed.heads[0]!.keepAliveMs, 5000);
      assert.equal(parsed.body.toString(), '{"ok":true}');
      assert.equal(parsed.completions, 1);
    }
    const parsed = parserFor();
    assert.throws(() => parsed.parser.execute(Buffer.from(`${wire}HTTP/1.1 200 OK\r\n`)), ResponseParseError);
  });

  it('skips informational heads and reads the final one', () => {
    const parsed = parseSplit('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok', 30);
    assert.deepEqual(
      parsed.heads.map((head) => head.status),
      [200],
    );
    assert.equal(parsed.body.toString(), 'ok');
  });

  it('gives 204, 304 and HEAD responses no body; a body that runs to the close completes at the close', () => {
    for (const wire of ['HTTP/1.1 204 No Content\r\n\r\n', 'HTTP/1.1 304 Not Modified\r\ncontent-length: 10\r\n\r\n']) {
      assert.equal(parseSplit(wire, 5).completions, 1);
    }
    assert.equal(parseSplit('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n', 5, true).completions, 1);
    const untilClose = parseSplit('HTTP/1.1 200 OK\r\n\r\nsome bytes', 22);
    assert.equal(untilClose.completions, 0);
    assert.equal(untilClose.parser.endsWithConnection, true);
    assert.equal(untilClose.parser.finish(), true);
    assert.equal(untilClose.completions, 1);
    assert.equal(untilClose.body.toString(), 'some bytes');
    assert.equal(untilClose.parser.keepAlive, false);
    // A chunked body cut short is not complete.
    const cut = parseSplit('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab', 10);
    assert.equal(cut.parser.finish(), false);
  });

  it('marks connections that must not be reused: close, HTTP/1.0, Transfer-Encoding beside Content-Length', () => {
    assert.equal(parseSplit('HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n', 3).parser.keepAlive, false);
    assert.equal(parseSplit('HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n', 3).parser.keepAlive, false);
    assert.equal(parseSplit('HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n', 3).parser.keepAlive, true);
    const both = parseSplit('HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n', 3);
    assert.equal(both.body.toString(), 'ok');
    assert.equal(both.parser.keepAlive, false);
  });

  it('refuses malformed responses instead of guessing where they end', () => {
    const bad = [
      'HTTP/2 200 OK\r\n\r\n',
      'ICY 200 OK\r\n\r\n',
      'HTTP/1.1 200 OK\r\n folded: value\r\n\r\n',
      'HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\nabc',
      'HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r3\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabc\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nfffffffffffffff\r\n',
      'HTTP/1.1 101 Switching Protocols\r\n\r\n',
      `HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(70 * 1024)}\r\n\r\n`,
    ];
    for (const wire of bad) {
      assert.throws(() => parserFor().parser.execute(Buffer.from(wire)), ResponseParseError, wire.slice(0, 60));
    }
    // A head past the limit with no blank line yet fails then, not when (if ever) its end arrives.
    const endless = parserFor();
    endless.parser.execute(Buffer.from('HTTP/1.1 200 OK\r\n'));
    assert.throws(() => endless.parser.execute(Buffer.from(`x-big: ${'a'.repeat(70 * 1024)}`)), ResponseParseError);
  });

  it('stops where a callback paused it and goes on from there', () => {
    const bytes = Buffer.from(CHUNKED, 'latin1');
    const parts: string[] = [];
    const parser: ResponseParser = new ResponseParser({
      onHead: () => undefined,
      onBody: (chunk) => {
        parts.push(chunk.toString());
        parser.paused = true;
      },
      onComplete: () => parts.push('<end>'),
    });
    parser.expect();
    let at = 0;
    let rounds = 0;
    while (at < bytes.length && rounds++ < 10) {
      parser.paused = false;
      at = parser.execute(bytes, at);
    }
    assert.deepEqual(parts, ['data: 1\n', '\ndata: 22\n', '<end>']);
    assert.equal(rounds, 3);
  });
});

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request through the agent, collected; `onData` may pause/resume through the controller. */
function send(
  agent: Http1Agent,
  origin: string,
  request: Partial<Http1Request> = {},
  onData?: (controller: Http1Controller, chunk: Buffer) => void,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let headers: Reply['headers'] = {};
    const parts: Buffer[] = [];
    agent.dispatch(
      origin,
      {
        method: 'POST',
        path: '/v1/x',
        headers: { 'content-type': 'application/json' },
        body: '{"a":"é"}',
        headersTimeoutMs: 2000,
        bodyTimeoutMs: 2000,
        ...request,
      },
      {
        onRequestStart: () => undefined,
        onResponseStart: (_c, code, head) => {
          status = code;
          headers = head;
        },
        onResponseData: (controller, chunk) => {
          parts.push(Buffer.from(chunk));
          onData?.(controller, chunk);
        },
        onResponseEnd: () => resolve({ status, headers, body: Buffer.concat(parts).toString() }),
        onResponseError: (_c, err) => reject(err),
      },
    );
  });
}

/** A raw server: `answer` gets each request's bytes (head and body) and the socket. */
async function rawServer(
  answer: (request: string, socket: net.Socket, index: number) => void,
): Promise<{ origin: string; connections: number; requests: string[]; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const state = { origin: '', connections: 0, requests: [] as string[], close: (): Promise<void> => Promise.resolve() };
  const server = net.createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffered = '';
    socket.on('data', (bytes) => {
      buffered += bytes.toString('latin1');
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const request = buffered.slice(0, end + 4 + length);
        buffered = buffered.slice(end + 4 + length);
        state.requests.push(request);
        answer(request, socket, state.requests.length - 1);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}

const OK = (body: string, extra = ''): string => `HTTP/1.1 200 OK\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

describe('upstream HTTP/1.1 client', () => {
  const agents: Http1Agent[] = [];
  const servers: { close(): Promise<void> }[] = [];
  const agent = (options: Partial<ConstructorParameters<typeof Http1Agent>[0]> = {}): Http1Agent => {
    const made = new Http1Agent({ connectTimeoutMs: 2000, keepAliveMs: 30_000, ...options });
    agents.push(made);
    return made;
  };
  const server = async (answer: Parameters<typeof rawServer>[0]) => {
    const made = await rawServer(answer);
    servers.push(made);
    return made;
  };
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((made) => made.close()));
    await Promise.all(servers.splice(0).map((made) => made.close()));
  });

  it('sends one well-formed request per exchange and reuses the connection', async () => {
    const upstream = await server((_request, socket, index) => socket.write(OK(`reply ${index}`)));
    const client = agent();
    for (let i = 0; i < 3; i++) assert.equal((await send(client, upstream.origin)).body, `reply ${i}`);
    assert.equal(upstream.connections, 1);
    const [head, body] = upstream.requests[0]!.split('\r\n\r\n');
    const lines = head!.split('\r\n');
    assert.equal(lines[0], 'POST /v1/x HTTP/1.1');
    assert.ok(lines.includes(`host: ${upstream.origin.slice('http://'.length)}`));
    assert.ok(lines.includes('content-type: application/json'));
    assert.ok(lines.includes('content-length: 10'), 'the length counts bytes, not characters');
    assert.equal(Buffer.from(body!, 'latin1').toString('utf8'), '{"a":"é"}');
  });

  it('refuses a header that would inject a line, and headers the client frames itself are its own', async () => {
    const upstream = await server((_request, socket) => socket.write(OK('ok')));
    const client = agent();
    await assert.rejects(send(client, upstream.origin, { headers: { 'x-evil': 'a\r\nx-injected: 1' } }), TypeError);
    await assert.rejects(send(client, upstream.origin, { headers: { 'bad name': 'x' } }), TypeError);
    await send(client, upstream.origin, { headers: { 'content-length': '999', host: 'elsewhere', 'x-fine': 'yes' } });
    const head = upstream.requests[0]!.split('\r\n\r\n')[0]!;
    assert.doesNotMatch(head, /999|elsewhere/);
    assert.match(head, /x-fine: yes/);
    assert.equal(upstream.requests.length, 1);
  });

  it('a reply that ends while its reader is paused leaves the connection usable for the next request', async () => {
    // The whole reply in one read, paused on its only (and last) chunk: the pause outlives the exchange,
    // and the resume that follows comes too late to count. Then a chunked reply paused mid-way.
    const upstream = await server((_request, socket, index) =>
      socket.write(index === 0 ? OK('abcdef') : `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nab${index}\r\n3\r\ndef\r\n0\r\n\r\n`),
    );
    const client = agent();
    const pauseBriefly = (controller: Http1Controller): void => {
      controller.pause();
      setTimeout(() => controller.resume(), 20);
    };
    assert.equal((await send(client, upstream.origin, {}, pauseBriefly)).body, 'abcdef');
    assert.equal((await send(client, upstream.origin, { headersTimeoutMs: 500 }, pauseBriefly)).body, 'ab1def');
    assert.equal((await send(client, upstream.origin, { headersTimeoutMs: 500 })).body, 'ab2def');
    assert.equal(upstream.connections, 1);
  });

  it('does not count a paused reply as a silent upstream', async () => {
    const upstream = await server((_request, socket) => {
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\na\r\n');
      setTimeout(() => socket.write('1\r\nb\r\n0\r\n\r\n'), 30);
    });
    const reply = await send(agent(), upstream.origin, { bodyTimeoutMs: 100 }, (controller, chunk) => {
      if (chunk.toString() !== 'a') return;
      controller.pause();
      setTimeout(() => controller.resume(), 300);
    });
    assert.equal(reply.body, 'ab');
  });

  it('opens a new connection when the server closed the idle one, announced a short keep-alive, or said close', async () => {
    const closing = await server((_request, socket) => socket.end(OK('bye')));
    const closer = agent();
    await send(closer, closing.origin);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await send(closer, closing.origin)).body, 'bye');
    assert.equal(closing.connections, 2);

    const hinted = await server((_request, socket) => socket.write(OK('hi', 'keep-alive: timeout=1\r\n')));
    const hinter = agent();
    await send(hinter, hinted.origin);
    await send(hinter, hinted.origin);
    assert.equal(hinted.connections, 2, 'a 1 s keep-alive is within the 2 s margin: not reused');

    const saying = await server((_request, socket) => socket.write(OK('x', 'connection: close\r\n')));
    const sayer = agent();
    await send(sayer, saying.origin);
    await send(sayer, saying.origin);
    assert.equal(saying.connections, 2);
  });

  it('throws away a connection that sent bytes past its response', async () => {
    const upstream = await server((_request, socket) => socket.write(`${OK('one')}garbage`));
    const client = agent();
    assert.equal((await send(client, upstream.origin)).body, 'one');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal((await send(client, upstream.origin)).body, 'one');
    assert.equal(upstream.connections, 2);
  });

  it('reports a connection closed mid-reply, a silent head, a silent body and a connect that never completes', async () => {
    const cut = await server((_request, socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc'));
    await assert.rejects(send(agent(), cut.origin), (err: unknown) => (err as { code?: string }).code === 'UPSTREAM_SOCKET_CLOSED');
    const silent = await server(() => undefined);
    await assert.rejects(
      send(agent(), silent.origin, { headersTimeoutMs: 100 }),
      (err: unknown) => (err as { code?: string }).code === 'UPSTREAM_HEADERS_TIMEOUT',
    );
    const stalls = await server((_request, socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc'));
    await assert.rejects(send(agent(), stalls.origin, { bodyTimeoutMs: 100 }), (err: unknown) => (err as { code?: string }).code === 'UPSTREAM_BODY_TIMEOUT');
    // A name whose lookup never answers keeps the socket connecting until the connect timeout.
    const stuck = agent({ connectTimeoutMs: 100, lookup: () => undefined });
    const started = Date.now();
    await assert.rejects(send(stuck, 'http://upstream.invalid:80'), (err: unknown) => (err as { code?: string }).code === 'UPSTREAM_CONNECT_TIMEOUT');
    assert.ok(Date.now() - started < 1500);
  });

  it('aborting an exchange mid-reply fails it with the reason and closes its connection', async () => {
    const upstream = await server((_request, socket, index) =>
      socket.write(index === 0 ? 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\na\r\n' : OK('second')),
    );
    const client = agent();
    const reason = new Error('client left');
    await assert.rejects(
      send(client, upstream.origin, {}, (controller) => controller.abort(reason)),
      (err: unknown) => err === reason,
    );
    assert.equal((await send(client, upstream.origin)).body, 'second');
    assert.equal(upstream.connections, 2);
  });

  it('speaks TLS to https origins, checking the certificate', async () => {
    const dir = path.join(__dirname, '../fixtures/tls');
    const key = readFileSync(path.join(dir, 'localhost.key'));
    const cert = readFileSync(path.join(dir, 'localhost.crt'));
    const secure = tls.createServer({ key, cert, ALPNProtocols: ['http/1.1'] }, (socket) => {
      socket.once('data', () => socket.write(OK(`alpn=${socket.alpnProtocol || 'none'}`)));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve));
    servers.push({ close: () => new Promise<void>((resolve) => secure.close(() => resolve())) });
    const port = (secure.address() as AddressInfo).port;
    secure.on('secureConnection', (socket) => servers.push({ close: async () => void socket.destroy() }));
    assert.equal((await send(agent({ ca: cert }), `https://localhost:${port}`)).body, 'alpn=http/1.1');
    await assert.rejects(send(agent(), `https://localhost:${port}`), (err: unknown) =>
      /self-signed|SELF_SIGNED/i.test(String((err as { code?: string }).code ?? err)),
    );
  });
});
