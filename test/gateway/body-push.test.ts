// The reply body's push mode (forEach), which the SSE relay uses: chunks handed over inside the
// upstream's 'data' events, in order, with backpressure, early stop and failures.
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '../../src/http/errors';
import { STOP_READING } from '../../src/providers/http/reply-body';
import { UpstreamTransport, type UpstreamResponse } from '../../src/providers/http/transport';
import { waitFor } from '../helpers/wait';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('upstream reply body, push mode (forEach)', () => {
  let server: Server;
  let url: string;
  let reply: ServerResponse | null;
  let replyClosed: Promise<void>;
  let transport: UpstreamTransport;

  beforeEach(async () => {
    reply = null;
    let closed!: () => void;
    replyClosed = new Promise((resolve) => (closed = resolve));
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      res.on('close', closed);
      reply = res;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
    transport = new UpstreamTransport('fake', { type: 'openai', retries: { max: 0 } });
  });
  afterEach(async () => {
    await transport.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function open(): Promise<{ response: UpstreamResponse; upstream: ServerResponse }> {
    const response = await transport.send({ url, headers: {}, method: 'GET' });
    while (reply === null) await sleep(1);
    return { response, upstream: reply };
  }

  /** Writes one chunk upstream; resolves once it is handed to the connection. */
  function send(upstream: ServerResponse, text: string): Promise<void> {
    return new Promise((resolve) => upstream.write(text, () => resolve()));
  }

  it('hands over each chunk as it arrives, the ones that came before forEach first, and resolves at the end', async () => {
    const { response, upstream } = await open();
    await send(upstream, 'a');
    await send(upstream, 'b'); // both arrive before anyone consumes: queued
    const seen: string[] = [];
    const done = response.body.forEach((chunk) => void seen.push(chunk.toString()));
    await send(upstream, 'c');
    await waitFor(() => seen.length === 3, { what: 'c delivered while the reply is still open' });
    assert.deepEqual(seen, ['a', 'b', 'c']);
    upstream.end('d');
    await done;
    assert.deepEqual(seen, ['a', 'b', 'c', 'd']);
  });

  it('delivers nothing more while the consumer’s promise is pending (backpressure)', async () => {
    const { response, upstream } = await open();
    const seen: string[] = [];
    let release!: () => void;
    const done = response.body.forEach((chunk) => {
      seen.push(chunk.toString());
      if (seen.length === 1) return new Promise<void>((resolve) => (release = resolve));
      return undefined;
    });
    await send(upstream, 'first');
    await send(upstream, 'second');
    await send(upstream, 'third');
    await waitFor(() => seen.length > 0, { what: 'the first chunk' });
    // A negative check needs time to pass: on a slow machine it only gets weaker, it cannot fail falsely.
    await sleep(50);
    assert.deepEqual(seen, ['first'], 'held while the first chunk is still being written');
    release();
    await waitFor(() => seen.join('') === 'firstsecondthird', { what: 'the held chunks after release' });
    upstream.end();
    await done;
  });

  it('STOP_READING resolves forEach and releases the upstream connection', async () => {
    const { response, upstream } = await open();
    const seen: string[] = [];
    const done = response.body.forEach((chunk) => {
      seen.push(chunk.toString());
      return STOP_READING;
    });
    await send(upstream, 'only');
    await done;
    await replyClosed; // the upstream saw its reply's connection go away
    assert.deepEqual(seen, ['only']);
  });

  it('rejects with an upstream_error when the reply is cut off mid-way', async () => {
    const { response, upstream } = await open();
    const seen: string[] = [];
    const done = response.body.forEach((chunk) => void seen.push(chunk.toString()));
    await send(upstream, 'partial');
    upstream.socket!.destroy();
    await assert.rejects(done, (err: unknown) => err instanceof GatewayError && err.code === 'upstream_error');
    assert.deepEqual(seen, ['partial']);
  });

  it('a consumer that throws rejects forEach with its error and discards the rest of the reply', async () => {
    const { response, upstream } = await open();
    const rejected = assert.rejects(
      response.body.forEach(() => {
        throw new Error('consumer broke');
      }),
      /consumer broke/,
    );
    await send(upstream, 'x');
    await rejected;
    await replyClosed;
  });
});
