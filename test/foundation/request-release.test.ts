// A finished request's context lets go of its request, response and body, but only once both its response
// closed and its handler ended: a context that reached V8's old generation kept all of them alive through
// every scavenge until the next full collection (docs/performance.md measures the bytes promoted).
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestContext } from '../../src/pipeline/context';
import { createDispatcher } from '../../src/http/dispatch';
import type { RouteSpec } from '../../src/http/route-spec';
import type { Handler } from '../../src/operations/types';
import type { AssembledPlugin } from '../../src/pipeline/assemble';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { waitFor } from '../helpers/wait';

/** Adds a finisher to a running gateway's pipeline that hands each finished context to `seen`. */
function captureContexts(gw: TestGateway, seen: (ctx: RequestContext, atFinish: { req: boolean; res: boolean; body: unknown }) => void): void {
  const finishers = gw.gateway.services.pipeline.finishers as AssembledPlugin[];
  finishers.push({
    definition: { name: 'capture' },
    hooks: { onFinish: (ctx: RequestContext) => seen(ctx, { req: ctx.req !== null, res: ctx.res !== null, body: ctx.body }) },
  } as unknown as AssembledPlugin);
}

describe('a finished request releases its context', function () {
  this.timeout(30_000);
  let upstream: Server;
  let gw: TestGateway;

  before(async () => {
    // An OpenAI-format upstream.
    upstream = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'c1',
            object: 'chat.completion',
            created: 1,
            model: 'm',
            choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    gw = await startTestGateway({
      config: {
        providers: { demo: { type: 'demo' }, now: { type: 'openai', baseUrl: `${base}/v1` } },
        models: [
          { id: 'demo', provider: 'demo' },
          { id: 'now', provider: 'now' },
        ],
      },
    });
  });

  after(async () => {
    await gw?.close();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  it('drops the request, response and body once the response closed and the handler ended', async () => {
    const contexts: RequestContext[] = [];
    const atFinish: { req: boolean; res: boolean; body: unknown }[] = [];
    captureContexts(gw, (ctx, seen) => {
      contexts.push(ctx);
      atFinish.push(seen);
    });
    const reply = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...gw.auth('member') },
      body: JSON.stringify({ model: 'now', messages: [{ role: 'user', content: 'hello' }] }),
    });
    assert.equal(reply.status, 200);
    await reply.json();
    await waitFor(() => contexts.length === 1, { what: 'the request to finish' });
    // The finish hooks (audit among them) still read the whole context.
    assert.equal(atFinish[0]!.req, true);
    assert.equal(atFinish[0]!.res, true);
    assert.ok(atFinish[0]!.body, 'the body at finish');
    const ctx = contexts[0]!;
    await waitFor(() => ctx.req === null && ctx.res === null, { what: 'the context to let go of its request and response' });
    assert.equal(ctx.body, undefined);
    assert.equal(ctx.rawBody, null);
    assert.equal(ctx.modelCall, null);
    assert.deepEqual(ctx.usage, []);
    assert.deepEqual(ctx.upstreamTransforms, []);
    // What code running past the request may still read stays.
    assert.ok(ctx.principal, 'the principal stays');
    assert.equal(ctx.finished, true);
    assert.ok(ctx.abort, 'the abort state stays');
  });

  it('keeps the context whole until its handler ended, whichever comes first', async () => {
    // The dispatcher alone, with a handler the test ends: once after the client left (the response closed
    // first), once after the handler answered and went on working (the handler ends last either way).
    const route: RouteSpec = {
      operationId: 'releaseProbe',
      method: 'post',
      template: '/probe',
      expressPath: '/probe',
      family: 'openai',
      authenticated: false,
      bodyValidator: null,
      bodyRequired: false,
      multipartBody: false,
      paramsValidator: null,
      queryValidator: null,
      pathParams: [],
      auditedParams: [],
      streams: false,
      tags: [],
    };
    let seen: RequestContext | null = null;
    let end: () => void = () => undefined;
    let answerFirst = false;
    const handler: Handler = async (ctx) => {
      seen = ctx;
      if (answerFirst) ctx.res.end('{}');
      await new Promise<void>((resolve) => (end = resolve));
      return undefined;
    };
    const dispatch = createDispatcher(route, handler, { body: null, params: null, query: null }, gw.gateway.services, null);
    const server = createServer((req, res) => dispatch(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/probe`;
    try {
      for (const order of ['client left first', 'handler answered first'] as const) {
        answerFirst = order === 'handler answered first';
        seen = null;
        const req = httpRequest(url, { method: 'POST' });
        req.on('error', () => undefined);
        req.on('response', (res) => res.resume());
        req.end();
        await waitFor(() => seen !== null, { what: `the handler to start (${order})` });
        const ctx = seen as unknown as RequestContext;
        if (!answerFirst) req.destroy();
        await waitFor(() => ctx.finished, { what: `the response to close (${order})` });
        // The response closed and its finish hooks ran; the handler runs on and still reads its request.
        for (let turn = 0; turn < 5; turn++) await new Promise((r) => setImmediate(r));
        assert.notEqual(ctx.req, null, `${order}: released before the handler ended`);
        assert.notEqual(ctx.res, null, order);
        end();
        await waitFor(() => ctx.req === null && ctx.res === null, { what: `the release once the handler ended (${order})` });
      }
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
