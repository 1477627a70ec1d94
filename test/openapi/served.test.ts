// The document and its reference page are served by a real gateway, and the gateway's validation
// answers with the envelope of the path family naming the offending field, as the document declares.
import assert from 'node:assert/strict';
import request from 'supertest';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { loadGeneratedDocument } from '../helpers/openapi-document';

describe('OpenAPI document served over HTTP', function () {
  this.timeout(120_000);
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => {
    await gw?.close();
  });

  it('serves the bundled document at GET /openapi.json without a key', async () => {
    const res = await request(gw.url).get('/openapi.json').expect(200);
    assert.match(res.headers['content-type'] ?? '', /^application\/json/);
    assert.ok(res.headers['x-request-id']);
    const { servers, ...rest } = res.body as Record<string, unknown>;
    const { servers: fileServers, ...fileRest } = loadGeneratedDocument() as Record<string, unknown>;
    assert.deepEqual(rest, fileRest);
    assert.notDeepEqual(servers, fileServers);
  });

  it('points the document\'s servers (what /docs "Try it out" calls) at the gateway that served it, on any port', async () => {
    const documentUrl = `${gw.url}/openapi.json`;
    const document = (await request(gw.url).get('/openapi.json').expect(200)).body as { servers: { url: string }[] };
    assert.ok(document.servers.length > 0);
    for (const server of document.servers) {
      // How a client resolves a server URL: relative to where the document was fetched (OpenAPI 3.1, 4.8.5).
      const base = new URL(server.url, documentUrl);
      assert.equal(base.origin, new URL(gw.url).origin, server.url);
      const call = await request(base.origin)
        .get(`${base.pathname.replace(/\/$/, '')}/v1/models`)
        .set(gw.auth('admin'));
      assert.equal(call.status, 200);
    }
  });

  it('serves a reference page at GET /docs whose assets load from the gateway itself', async () => {
    const page = await request(gw.url).get('/docs').expect(200);
    assert.match(page.headers['content-type'] ?? '', /^text\/html/);
    assert.match(page.text, /['"]\/openapi\.json['"]/);
    const assets = [...page.text.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.length >= 2, 'script and stylesheet');
    for (const asset of assets) {
      const res = await request(gw.url).get(asset).expect(200);
      assert.ok(res.text.length > 1000, asset);
    }
    await request(gw.url).get('/docs/assets/not-there.js').expect(404);
  });

  it('answers a body violation on a flat path with {error, message} naming the field', async () => {
    const res = await request(gw.url)
      .post('/v1/agents/runs')
      .set(gw.auth('admin'))
      .send({ agentId: 'x', inputs: [{ name: 'a' }] })
      .expect(400);
    assert.equal(res.body.error, 'Bad Request');
    assert.match(res.body.message, /inputs\[0\]\.value/);
  });

  it('answers a body violation on an OpenAI path with the nested envelope and param', async () => {
    const empty = await request(gw.url).post('/v1/chat/completions').set(gw.auth('admin')).send({ model: 'demo', messages: [] }).expect(400);
    assert.equal(empty.body.error.type, 'invalid_request_error');
    assert.equal(empty.body.error.param, 'messages');
    const svc = await request(gw.url)
      .post('/v1/chat/completions')
      .set(gw.auth('admin'))
      .send({ model: 'demo', messages: [{ role: 'user', content: 'hi' }], svc: { system_prompt: 'agent_default' } })
      .expect(400);
    assert.equal(svc.body.error.param, 'svc');
  });

  it('answers a body violation on /v1/messages with the Anthropic envelope', async () => {
    const res = await request(gw.url)
      .post('/v1/messages')
      .set(gw.auth('admin'))
      .send({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] })
      .expect(400);
    assert.equal(res.body.type, 'error');
    assert.equal(res.body.error.type, 'invalid_request_error');
    assert.match(res.body.error.message, /max_tokens/);
  });

  it('answers a malformed Responses request with the nested envelope naming the field, as JSON (never SSE)', async () => {
    const res = await request(gw.url)
      .post('/v1/responses')
      .set(gw.auth('admin'))
      .send({ model: 'demo', stream: true, input: [{ type: 'message', content: 'hi' }] })
      .expect(400);
    assert.match(res.headers['content-type'] ?? '', /^application\/json/);
    assert.equal(res.body.error.type, 'invalid_request_error');
    assert.equal(res.body.error.param, 'input[0].role');
    assert.match(res.body.error.message, /'input\[0\]\.role' is required/);
  });

  it('answers a negative or non-integer starting_after with 400 in the nested envelope naming it', async () => {
    for (const bad of ['-1', '1.5', 'abc', '']) {
      const res = await request(gw.url).get(`/v1/responses/resp_0123456789abcdef?stream=true&starting_after=${bad}`).set(gw.auth('admin')).expect(400);
      assert.match(res.headers['content-type'] ?? '', /^application\/json/, bad);
      assert.equal(res.body.error.type, 'invalid_request_error', bad);
      assert.equal(res.body.error.param, 'starting_after', bad);
      assert.match(res.body.error.message, /'starting_after'/, bad);
    }
  });

  it('rejects a malformed runId in the path with 400 naming it', async () => {
    const res = await request(gw.url).get('/v1/runs/not-a-uuid').set(gw.auth('admin')).expect(400);
    assert.equal(res.body.error, 'Bad Request');
    assert.match(res.body.message, /runId/);
  });
});
