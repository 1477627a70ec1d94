// Foundation behaviour over real HTTP: meta endpoints, models, request ids, envelopes, body limits,
// route binding.
import assert from 'node:assert/strict';
import request from 'supertest';
import { checkHandlers } from '../../src/app';
import { routes } from '../../src/generated/routes';
import { handlers } from '../../src/operations/index';
import { startTestGateway, type TestGateway } from '../helpers/gateway';

describe('foundation over HTTP', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({
      config: {
        server: { bodyLimitBytes: 4096 },
        plugins: { auth: { enabled: true } },
        models: [
          { id: 'demo', provider: 'demo', created: 1700000000 },
          { id: 'demo-large', provider: 'demo' },
        ],
      },
    });
  });
  after(() => gw.close());

  describe('health, metrics, documents', () => {
    it('answers liveness and readiness without a key', async () => {
      const live = await request(gw.url).get('/health/live').expect(200);
      assert.equal(live.body.status, 'ok');
      const ready = await request(gw.url).get('/health/ready').expect(200);
      assert.equal(ready.body.status, 'ok');
      assert.equal(ready.body.checks.store, 'ok');
    });

    it('reports not ready (503) when the store is unreachable', async () => {
      const gw2 = await startTestGateway();
      try {
        const original = gw2.store.ping.bind(gw2.store);
        gw2.store.ping = async () => {
          throw new Error('connection refused');
        };
        const res = await request(gw2.url).get('/health/ready').expect(503);
        assert.equal(res.body.status, 'unavailable');
        assert.notEqual(res.body.checks.store, 'ok');
        gw2.store.ping = original;
      } finally {
        await gw2.close();
      }
    });

    it('serves Prometheus metrics counting requests', async () => {
      await request(gw.url).get('/v1/models').set(gw.auth('admin')).expect(200);
      const res = await request(gw.url).get('/metrics').expect(200);
      assert.match(res.headers['content-type'] ?? '', /^text\/plain/);
      assert.match(res.text, /agw_http_requests_total\{[^}]*operation="listModels"[^}]*\} \d+/);
    });

    it('serves the OpenAPI document and a human-readable reference', async () => {
      const doc = await request(gw.url).get('/openapi.json').expect(200);
      assert.match(doc.body.openapi, /^3\.1/);
      assert.deepEqual(Object.keys(doc.body.components.securitySchemes).length >= 3, true, 'three key header forms are declared');
      const page = await request(gw.url).get('/docs').expect(200);
      assert.match(page.headers['content-type'] ?? '', /text\/html/);
      assert.match(page.text, /openapi\.json/);
      const asset = await request(gw.url).get('/docs/assets/swagger-ui-bundle.js').expect(200);
      assert.ok(asset.text.length > 1000);
    });
  });

  describe('GET /v1/models', () => {
    it('lists the organization models in the list envelope with a stable created', async () => {
      const first = await request(gw.url).get('/v1/models').set(gw.auth('admin')).expect(200);
      assert.equal(first.body.object, 'list');
      assert.deepEqual(
        first.body.data.map((m: { id: string }) => m.id),
        ['demo', 'demo-large'],
      );
      for (const model of first.body.data) {
        assert.equal(model.object, 'model');
        assert.equal(typeof model.created, 'number');
        assert.equal(typeof model.owned_by, 'string');
      }
      assert.equal(first.body.data[0].created, 1700000000);
      const second = await request(gw.url).get('/v1/models').set(gw.auth('admin')).expect(200);
      assert.deepEqual(second.body, first.body, 'created does not change between calls');
    });

    it("lists only the models of the caller's organization", async () => {
      const res = await request(gw.url).get('/v1/models').set(gw.auth('outsider')).expect(200);
      assert.deepEqual(
        res.body.data.map((m: { id: string }) => m.id),
        ['demo'],
      );
    });
  });

  describe('request ids', () => {
    it('honours an incoming X-Request-Id', async () => {
      const res = await request(gw.url).get('/health/live').set('x-request-id', 'abc-123.XYZ').expect(200);
      assert.equal(res.headers['x-request-id'], 'abc-123.XYZ');
    });
    it('generates one when absent or unusable', async () => {
      const none = await request(gw.url).get('/health/live').expect(200);
      assert.match(none.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
      const bad = await request(gw.url).get('/health/live').set('x-request-id', 'has spaces and "quotes"').expect(200);
      assert.notEqual(bad.headers['x-request-id'], 'has spaces and "quotes"');
    });
  });

  describe('errors and envelopes', () => {
    it('answers an unknown route with 404 in the envelope of its family', async () => {
      const flat = await request(gw.url).get('/v1/agents/x/y/z').set(gw.auth('admin')).expect(404);
      assert.equal(flat.body.error, 'Not found');
      assert.equal(typeof flat.body.message, 'string');
      const nested = await request(gw.url).get('/v1/nothing-here').set(gw.auth('admin')).expect(404);
      assert.equal(typeof nested.body.error.message, 'string');
    });

    it('rejects a body over the configured limit with 413', async () => {
      const big = JSON.stringify({ agentId: '0f8b2a8e-6c55-4a8e-9d0e-3a1f2b3c4d5e', inputs: { a: 'x'.repeat(5000) } });
      const res = await request(gw.url).post('/v1/agents/runs').set(gw.auth('admin')).set('content-type', 'application/json').send(big).expect(413);
      assert.equal(res.body.error, 'Payload Too Large');
    });

    it('rejects a body that is not JSON with a clear 4xx naming the problem', async () => {
      const broken = await request(gw.url)
        .post('/v1/agents/runs')
        .set(gw.auth('admin'))
        .set('content-type', 'application/json')
        .send('{"agentId": ')
        .expect(400);
      assert.match(broken.body.message, /JSON/);
      const wrongType = await request(gw.url).post('/v1/agents/runs').set(gw.auth('admin')).set('content-type', 'text/plain').send('hello').expect(415);
      assert.match(wrongType.body.message, /application\/json/);
    });

    it('names the offending field of a schema violation, flat family', async () => {
      const res = await request(gw.url).post('/v1/agents/runs').set(gw.auth('admin')).send({ inputs: {} }).expect(400);
      assert.equal(res.body.error, 'Bad Request');
      assert.match(res.body.message, /agentId/);
    });

    it('names the offending field of a schema violation, nested family', async () => {
      const res = await request(gw.url).post('/v1/chat/completions').set(gw.auth('admin')).send({ model: 'demo', messages: 'hi' }).expect(400);
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.match(res.body.error.param ?? res.body.error.message, /messages/);
    });

    it('answers an unknown stored response with 404 not_found and no error.code, in the nested envelope (Responses rule 9)', async () => {
      const res = await request(gw.url).get('/v1/responses/resp_never_existed').set(gw.auth('admin')).expect(404);
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.code, null);
    });
  });

  describe('routes bound from the OpenAPI document', () => {
    it('has exactly one handler per operation', () => {
      assert.doesNotThrow(() =>
        checkHandlers(
          routes.map((r) => r.operationId),
          handlers,
        ),
      );
    });
    it('fails start-up for an operation without a handler and for a handler without an operation', () => {
      const ids = routes.map((r) => r.operationId);
      const { listModels: _omitted, ...missingOne } = handlers;
      assert.throws(() => checkHandlers(ids, missingOne), /operation listModels has no handler/);
      assert.throws(() => checkHandlers(ids, { ...handlers, deleteEverything: handlers['listModels']! }), /handler deleteEverything names no operation/);
    });
  });
});
