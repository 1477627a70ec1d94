// The size bound of what an MCP server may send (bounded-fetch.ts), against a real HTTP server: a JSON
// body as a whole, an event stream per event (so a long-lived stream of small events is never cut).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { boundedFetch, McpResponseTooLargeError } from '../../src/tools/mcp/bounded-fetch';

const MAX = 1024;

describe('MCP bounded fetch', () => {
  let server: Server;
  let base: string;
  let reply: { type: string; body: string; length: boolean; piece: number } = { type: 'application/json', body: '', length: false, piece: 100 };

  before(async () => {
    server = createServer((_req, res) => {
      const headers: Record<string, string | number> = { 'content-type': reply.type };
      if (reply.length) headers['content-length'] = Buffer.byteLength(reply.body);
      res.writeHead(200, headers);
      // Written in pieces, so boundaries fall inside and across chunks.
      for (let at = 0; at < reply.body.length; at += reply.piece) res.write(reply.body.slice(at, at + reply.piece));
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function read(body: string, type: string, length = false, piece = 100): Promise<{ text?: string; error?: unknown; overflows: number }> {
    reply = { type, body, length, piece };
    let overflows = 0;
    const guarded = boundedFetch(fetch, MAX, (error) => {
      assert.ok(error instanceof McpResponseTooLargeError);
      overflows += 1;
    });
    try {
      const response = await guarded(base);
      return { text: await response.text(), overflows };
    } catch (error) {
      return { error, overflows };
    }
  }

  const event = (size: number): string => `data: ${'x'.repeat(size)}\n\n`;

  it('passes an event stream of many small events, far past the bound in total', async () => {
    const body = Array.from({ length: 50 }, () => event(500)).join('');
    const { text, overflows } = await read(body, 'text/event-stream');
    assert.equal(text, body);
    assert.equal(overflows, 0);
  });

  it('treats CRLF and CR blank lines as event ends too', async () => {
    const body = Array.from({ length: 10 }, (_, i) => `data: ${'y'.repeat(600)}${i % 2 === 0 ? '\r\n\r\n' : '\r\r'}`).join('');
    const { text, overflows } = await read(body, 'text/event-stream');
    assert.equal(text, body);
    assert.equal(overflows, 0);
  });

  it('cuts one event larger than the bound, even when it ends within the same chunk', async () => {
    const body = event(600) + `data: ${'z'.repeat(500)}\ndata: ${'z'.repeat(600)}\n\n`;
    const { error, overflows } = await read(body, 'text/event-stream', false, body.length);
    assert.ok(error instanceof TypeError || error instanceof McpResponseTooLargeError, String(error));
    assert.equal(overflows, 1);
  });

  it('cuts a JSON body larger than the bound, and refuses a declared one before reading it', async () => {
    const json = JSON.stringify({ padding: 'p'.repeat(2000) });
    const streamed = await read(json, 'application/json');
    assert.equal(streamed.overflows, 1);
    assert.ok(streamed.error !== undefined);
    const declared = await read(json, 'application/json', true);
    assert.ok(declared.error instanceof McpResponseTooLargeError);
    assert.equal(declared.overflows, 1);
    assert.equal((await read('{"ok":true}', 'application/json')).text, '{"ok":true}');
  });
});
