import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { chunkFrame, SseWriter } from '../../src/http/sse';

async function serve(handler: (sse: SseWriter) => Promise<void>, heartbeatMs: number): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => {
    const sse = new SseWriter(res, { heartbeatMs });
    void handler(sse).finally(() => sse.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('SSE writer', () => {
  it('sends headers before any event and a keep-alive comment after a silence', async () => {
    let eventWrittenAt = 0;
    const { server, url } = await serve(async (sse) => {
      await sleep(250);
      eventWrittenAt = Date.now();
      void sse.event('{"x":1}');
    }, 80);
    try {
      const res = await fetch(url);
      assert.equal(eventWrittenAt, 0, 'headers arrived only with the first event');
      assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      const text = await res.text();
      assert.match(text, /^(: keep-alive\n\n)+data: \{"x":1\}\n\n$/);
    } finally {
      server.close();
    }
  });

  it('sends the headers with the first event when that is written in the same turn: one socket write, not two', async () => {
    let writesBeforeEnd = -1;
    const server = createServer((_req, res) => {
      const socket = res.socket as unknown as { _write: (...a: unknown[]) => unknown; _writev?: (...a: unknown[]) => unknown };
      let writes = 0;
      const write = socket._write.bind(socket);
      socket._write = (...args) => (writes++, write(...args));
      const writev = socket._writev?.bind(socket);
      if (writev) socket._writev = (...args) => (writes++, writev(...args));
      const sse = new SseWriter(res, { heartbeatMs: 10_000 });
      void sse.event('{"first":true}');
      setTimeout(() => {
        writesBeforeEnd = writes;
        sse.end();
      }, 50);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(await res.text(), 'data: {"first":true}\n\n');
      assert.equal(writesBeforeEnd, 1, 'headers and the first event went out in one write');
    } finally {
      server.close();
    }
  });

  it('writes no heartbeat while events keep flowing, and frames multi-line data and named events', async () => {
    // The stream lasts longer than the heartbeat interval (25 × 50 ms against 1 s), so a writer that
    // ignored the events would beat; each gap is a twentieth of the interval, so a busy machine's
    // scheduling delays do not open a silence long enough for a beat.
    const EVENTS = 25;
    const { server, url } = await serve(async (sse) => {
      for (let i = 0; i < EVENTS; i += 1) {
        void sse.event(`${i}`);
        await sleep(50);
      }
      void sse.event('a\nb', 'message_delta');
      void sse.done();
    }, 1000);
    try {
      const text = await (await fetch(url)).text();
      const numbered = Array.from({ length: EVENTS }, (_, i) => `data: ${i}\n\n`).join('');
      assert.equal(text, `${numbered}event: message_delta\ndata: a\ndata: b\n\ndata: [DONE]\n\n`);
    } finally {
      server.close();
    }
  });

  it('an error after a relay stopped mid-event starts a fresh event', async () => {
    const { server, url } = await serve(async (sse) => {
      void sse.write('data: {"partial"');
      sse.fail('{"error":{"message":"boom"}}');
    }, 1000);
    try {
      const text = await (await fetch(url)).text();
      assert.equal(text, 'data: {"partial"\n\ndata: {"error":{"message":"boom"}}\n\n');
    } finally {
      server.close();
    }
  });

  it('frames each write as one HTTP/1.1 chunk itself, keeps Node framing for the rest, and the connection stays reusable', async () => {
    const socketWrites: number[] = [];
    const server = createServer((_req, res) => {
      const sse = new SseWriter(res, { heartbeatMs: 40 });
      void sse.write('data: 1\n\n');
      setTimeout(() => {
        // One socket write per event (Node's own framing makes four: size, CRLF, data, CRLF).
        const socket = res.socket!;
        const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
        let calls = 0;
        socket.write = ((...args: unknown[]) => (calls++, write(...args))) as typeof socket.write;
        void sse.write(Buffer.from('data: ü\n\n')); // a multi-byte character: the size counts bytes
        socketWrites.push(calls);
        socket.write = write as typeof socket.write;
        setTimeout(() => sse.end(), 60); // a heartbeat (Node-framed) goes out in between
      }, 20);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const socket = connect(port, '127.0.0.1');
      let wire = '';
      socket.setEncoding('latin1');
      const twoReplies = new Promise<void>((resolve) =>
        socket.on('data', (d: string) => {
          wire += d;
          if (wire.split('0\r\n\r\n').length === 3) resolve();
        }),
      );
      // Two requests on one connection: the second is answered only if the first one ended properly.
      socket.write('GET /a HTTP/1.1\r\nhost: x\r\n\r\n');
      await sleep(200);
      socket.write('GET /b HTTP/1.1\r\nhost: x\r\n\r\n');
      await twoReplies;
      socket.destroy();
      const first = wire.slice(0, wire.indexOf('0\r\n\r\n') + 5);
      assert.match(first, /transfer-encoding: chunked/i);
      const body = first.slice(first.indexOf('\r\n\r\n') + 4);
      const utf8 = Buffer.from('data: ü\n\n').toString('latin1');
      assert.deepEqual(socketWrites, [1, 1]);
      assert.equal(body, `9\r\ndata: 1\n\n\r\na\r\n${utf8}\r\ne\r\n: keep-alive\n\n\r\n0\r\n\r\n`);
    } finally {
      server.close();
    }
  });

  it('once the headers are out, events go to the socket without its cork-until-next-tick, and a slow client still holds the writer back', async () => {
    const EVENT = `data: ${'x'.repeat(64 * 1024)}\n\n`;
    let corks = -1;
    let waited = 0;
    let sent = 0;
    const server = createServer((_req, res) => {
      const sse = new SseWriter(res);
      void sse.write('data: first\n\n');
      setTimeout(() => {
        const socket = res.socket!;
        const cork = socket.cork.bind(socket);
        corks = 0;
        socket.cork = () => (corks++, cork());
        void (async () => {
          // The client reads nothing yet: the writer must stop at the socket's high-water mark.
          while (sent < 64) {
            const pending = sse.write(`data: ${sent}\n\n${EVENT}`);
            sent++;
            if (pending) {
              waited++;
              await pending;
            }
          }
          socket.cork = cork;
          sse.end();
        })();
      }, 20);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const socket = connect(port, '127.0.0.1');
      socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
      socket.pause();
      await sleep(300);
      assert.ok(sent < 64, `the writer waited for the slow client (${sent} of 64 events handed over before it read)`);
      const chunks: Buffer[] = [];
      socket.on('data', (d: Buffer) => chunks.push(d));
      const ended = new Promise<void>((resolve) => socket.on('data', () => Buffer.concat(chunks).toString('latin1').endsWith('\r\n0\r\n\r\n') && resolve()));
      socket.resume();
      await ended;
      socket.destroy();
      assert.equal(corks, 0, 'no cork per event');
      assert.ok(waited > 0);
      const wire = Buffer.concat(chunks).toString('latin1');
      const body = wire.slice(wire.indexOf('\r\n\r\n') + 4);
      // Every event arrived once, in order, each one framed as one chunk.
      const numbers = [...body.matchAll(/data: (\d+)\n\n/g)].map((m) => Number(m[1]));
      assert.deepEqual(
        numbers,
        Array.from({ length: 64 }, (_, i) => i),
      );
      assert.ok(body.startsWith('d\r\ndata: first\n\n\r\n'));
      assert.ok(body.endsWith('\r\n0\r\n\r\n'));
    } finally {
      server.close();
    }
  });

  it('an HTTP/1.0 client gets the events unframed and the connection closed at the end', async () => {
    const server = createServer((_req, res) => {
      const sse = new SseWriter(res, { heartbeatMs: 10_000 });
      void sse.event('{"x":1}');
      sse.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      let wire = '';
      socket.setEncoding('latin1');
      socket.on('data', (d: string) => (wire += d));
      const ended = new Promise((resolve) => socket.on('end', resolve));
      socket.write('GET / HTTP/1.0\r\n\r\n');
      await ended;
      assert.doesNotMatch(wire, /transfer-encoding/i);
      assert.equal(wire.slice(wire.indexOf('\r\n\r\n') + 4), 'data: {"x":1}\n\n');
    } finally {
      server.close();
    }
  });

  it('chunkFrame: size in hex over the bytes, CRLFs, empty stays empty', () => {
    assert.equal(chunkFrame('abc').toString(), '3\r\nabc\r\n');
    assert.equal(chunkFrame(Buffer.alloc(26, 'z')).toString(), `1a\r\n${'z'.repeat(26)}\r\n`);
    assert.equal(chunkFrame('é').toString(), '2\r\né\r\n');
    assert.equal(chunkFrame('').length, 0);
  });
});
