// A failure while writing an error response (here: Node refusing a header value the error carries)
// must cost that one connection only: the socket is destroyed, the failure is logged, no rejection
// escapes to the process (an unhandled one used to end it, buffered audit records with it), and the
// same app goes on serving. The write fails for real: the handler's error goes through the dispatcher
// and sendError to Node's writeHead, which throws on the control byte.
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Writable } from 'node:stream';
import winston from 'winston';
import { buildApp, type GatewayApp } from '../../src/app';
import { GatewayError } from '../../src/http/errors';
import { handlers } from '../../src/operations/index';
import type { Handler } from '../../src/operations/types';
import { testConfig } from '../helpers/config';
import { openTestStore, type TestStore } from '../helpers/store';

/** Waits for `condition` with a generous ceiling (a busy 2-core machine), never a fixed sleep. */
async function waitFor(condition: () => boolean, what: string, ceilingMs = 30_000): Promise<void> {
  const deadline = Date.now() + ceilingMs;
  while (!condition()) {
    assert.ok(Date.now() < deadline, `${what} did not happen within ${ceilingMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('dispatch: a failure while writing an error response', function () {
  this.timeout(120_000);
  let testStore: TestStore;
  let gateway: GatewayApp;
  let server: Server;
  let port: number;
  const logLines: string[] = [];
  const serverSockets: Socket[] = [];
  const processFaults: unknown[] = [];
  const onProcessFault = (err: unknown): void => void processFaults.push(err);

  // The liveness handler fails with an error whose header value Node's writeHead refuses.
  const refusedHeader: Handler = () => {
    throw new GatewayError('unavailable', 'Try again later.', { headers: { 'retry-after': '1\u0001' } });
  };

  before(async () => {
    process.on('unhandledRejection', onProcessFault);
    process.on('uncaughtException', onProcessFault);
    testStore = await openTestStore('postgres');
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    });
    const logger = winston.createLogger({ level: 'info', format: winston.format.json(), transports: [new winston.transports.Stream({ stream: sink })] });
    gateway = await buildApp(testConfig({}), { store: testStore.store, logger, handlers: { ...handlers, getLiveness: refusedHeader } });
    server = createServer(gateway.app);
    server.on('connection', (socket) => serverSockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    process.off('unhandledRejection', onProcessFault);
    process.off('uncaughtException', onProcessFault);
    server?.closeAllConnections();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await gateway?.close();
    await testStore?.cleanup();
  });

  /** One GET on a fresh connection: the status and body, or the client-side error (a 30 s ceiling). */
  const get = (path: string, requestId: string): Promise<{ status: number; body: string } | { error: Error }> =>
    new Promise((resolve) => {
      const ceiling = setTimeout(() => {
        req.destroy();
        resolve({ error: new Error('no answer and no closed connection within 30 s') });
      }, 30_000);
      const req = request({ host: '127.0.0.1', port, path, agent: false, headers: { 'x-request-id': requestId } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          clearTimeout(ceiling);
          resolve({ status: res.statusCode ?? 0, body });
        });
      });
      req.on('error', (error) => {
        clearTimeout(ceiling);
        resolve({ error });
      });
      req.end();
    });

  it('destroys that one socket, logs it, lets no rejection reach the process, and the app serves the next request', async () => {
    const outcome = await get('/health/live', 'write-failure-1');
    assert.deepEqual(processFaults, [], 'an unhandledRejection or uncaughtException reached the process');
    assert.ok('error' in outcome, `the client got a response instead of a closed connection: ${JSON.stringify(outcome)}`);
    assert.match(outcome.error.message, /socket hang up|ECONNRESET/, 'the server closed the connection');
    assert.equal(serverSockets.length, 1, 'one connection so far');
    await waitFor(() => serverSockets[0]!.destroyed, 'the server side of the socket being destroyed');
    await waitFor(
      () => logLines.some((line) => line.includes('error response could not be written') && line.includes('write-failure-1')),
      'the log line naming the request',
    );

    const next = await get('/health/ready', 'write-failure-2');
    assert.ok('status' in next, `the next request failed: ${'error' in next ? next.error.message : ''}`);
    assert.equal(next.status, 200);
    assert.equal((JSON.parse(next.body) as { status: string }).status, 'ok');
    // Any rejection of the failed request was reported long before the next request's round trip ended.
    assert.deepEqual(processFaults, [], 'an unhandledRejection or uncaughtException reached the process');
  });
});
