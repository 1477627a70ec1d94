import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SseWriter } from '../../src/http/sse';

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
    const { server, url } = await serve(async (sse) => {
      for (let i = 0; i < 5; i += 1) {
        void sse.event(`${i}`);
        await sleep(30);
      }
      void sse.event('a\nb', 'message_delta');
      void sse.done();
    }, 80);
    try {
      const text = await (await fetch(url)).text();
      assert.equal(text, 'data: 0\n\ndata: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\nevent: message_delta\ndata: a\ndata: b\n\ndata: [DONE]\n\n');
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
});
