// The knowledge stores API over HTTP: stores and documents per organization (another organization's
// are 404), ranked search with snippets, pagination, the nested error envelope, and the body limits.
import assert from 'node:assert/strict';
import request from 'supertest';
import { startTestGateway, type TestGateway } from '../helpers/gateway';

type Who = 'admin' | 'member' | 'outsider';

describe('knowledge stores API', () => {
  let gw: TestGateway;
  // A small body limit, so the 413 is cheap to reach; the schema's text limit is checked separately.
  before(async () => {
    gw = await startTestGateway({ config: { server: { bodyLimitBytes: 1_200_000 }, plugins: { auth: { enabled: true } } } });
  });
  after(() => gw.close());

  const post = (path: string, body: unknown, who: Who = 'admin') =>
    request(gw.url)
      .post(path)
      .set(gw.auth(who))
      .send(body as object);
  const get = (path: string, who: Who = 'admin') => request(gw.url).get(path).set(gw.auth(who));
  const del = (path: string, who: Who = 'admin') => request(gw.url).delete(path).set(gw.auth(who));

  async function newStore(name: string, who: Who = 'admin'): Promise<string> {
    const res = await post('/v1/knowledge_stores', { name, description: `About ${name}` }, who).expect(201);
    return res.body.id as string;
  }

  it('creates a store, refuses a second of the same name (409), lists and fetches it', async () => {
    const res = await post('/v1/knowledge_stores', { name: 'Handbook', description: 'The staff handbook' }, 'member').expect(201);
    assert.match(res.body.id, /^ks_[0-9a-f]{32}$/);
    assert.deepEqual(
      { ...res.body, id: 'x', created_at: 0 },
      {
        id: 'x',
        object: 'knowledge_store',
        name: 'Handbook',
        description: 'The staff handbook',
        document_count: 0,
        created_by: 'u-member',
        created_at: 0,
      },
    );
    assert.ok(Math.abs(res.body.created_at - Date.now() / 1000) < 60);
    const again = await post('/v1/knowledge_stores', { name: 'Handbook' }).expect(409);
    assert.deepEqual(again.body, {
      error: {
        message: "A knowledge store named 'Handbook' already exists in this organization.",
        type: 'invalid_request_error',
        code: 'conflict',
        param: 'name',
      },
    });
    // The same name is free in another organization.
    await post('/v1/knowledge_stores', { name: 'Handbook' }, 'outsider').expect(201);
    const list = await get('/v1/knowledge_stores').expect(200);
    assert.equal(list.body.object, 'list');
    assert.ok(list.body.data.some((s: { id: string }) => s.id === res.body.id));
    assert.equal((await get(`/v1/knowledge_stores/${res.body.id}`).expect(200)).body.name, 'Handbook');
  });

  it('validates the store body: name syntax and unknown fields are 400s naming the field', async () => {
    const bad = await post('/v1/knowledge_stores', { name: ' leading space' }).expect(400);
    assert.equal(bad.body.error.param, 'name');
    assert.equal(bad.body.error.type, 'invalid_request_error');
    const extra = await post('/v1/knowledge_stores', { name: 'ok', colour: 'red' }).expect(400);
    assert.match(extra.body.error.message, /colour/);
  });

  it('adds documents, ranks the better match first with a snippet around the terms, and fetches a document with its text', async () => {
    const store = await newStore('Policies');
    const strong = await post(`/v1/knowledge_stores/${store}/documents`, {
      title: 'Remote work policy',
      source: 'https://intranet.example/remote-work',
      metadata: { owner: 'HR', year: 2025 },
      text: `${'General provisions apply to all staff. '.repeat(20)}Employees may work remotely up to three days a week with their manager's approval. Remote work equipment is provided.`,
    }).expect(201);
    assert.match(strong.body.id, /^kdoc_[0-9a-f]{32}$/);
    assert.equal(strong.body.object, 'knowledge_store.document');
    assert.equal(strong.body.store_id, store);
    assert.equal(strong.body.text, undefined, 'the text is not echoed');
    assert.ok(strong.body.text_length > 800);
    await post(`/v1/knowledge_stores/${store}/documents`, {
      title: 'Office hours',
      text: 'The office opens at eight. Some teams work remotely on Fridays.',
    }).expect(201);
    await post(`/v1/knowledge_stores/${store}/documents`, { title: 'Parking', text: 'Parking spaces are assigned by seniority.' }).expect(201);

    const res = await post(`/v1/knowledge_stores/${store}/search`, { query: 'work remotely', limit: 5 }).expect(200);
    assert.equal(res.body.object, 'list');
    assert.equal(res.body.data.length, 2, 'the parking document does not match');
    const [first, second] = res.body.data;
    assert.equal(first.document_id, strong.body.id);
    assert.equal(first.title, 'Remote work policy');
    assert.equal(first.source, 'https://intranet.example/remote-work');
    assert.deepEqual(first.metadata, { owner: 'HR', year: 2025 });
    assert.match(first.snippet, /\*\*work\*\* \*\*remotely\*\*/);
    assert.ok(
      !first.snippet.includes('General provisions apply to all staff. General provisions apply to all staff. General'),
      'the snippet is a passage, not the text',
    );
    assert.ok(first.score > second.score);

    const doc = await get(`/v1/knowledge_stores/${store}/documents/${strong.body.id}`).expect(200);
    assert.match(doc.body.text, /three days a week/);
    assert.equal((await get(`/v1/knowledge_stores/${store}`).expect(200)).body.document_count, 3);
  });

  it('lists documents oldest first in pages, and refuses an `after` that names no document', async () => {
    const store = await newStore('Paged');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await post(`/v1/knowledge_stores/${store}/documents`, { title: `Doc ${i}`, text: `Body ${i}` }).expect(201)).body.id);
    const first = await get(`/v1/knowledge_stores/${store}/documents?limit=2`).expect(200);
    assert.deepEqual(
      first.body.data.map((d: { id: string }) => d.id),
      ids.slice(0, 2),
    );
    assert.equal(first.body.has_more, true);
    assert.equal(first.body.last_id, ids[1]);
    const rest = await get(`/v1/knowledge_stores/${store}/documents?limit=2&after=${first.body.last_id}`).expect(200);
    assert.deepEqual(
      rest.body.data.map((d: { id: string }) => d.id),
      [ids[2]],
    );
    assert.equal(rest.body.has_more, false);
    const bad = await get(`/v1/knowledge_stores/${store}/documents?after=kdoc_nope`).expect(400);
    assert.equal(bad.body.error.param, 'after');
  });

  it("keeps organizations apart: another organization's store is 404 for every operation, and its documents are never found", async () => {
    const store = await newStore('Secret plans');
    const docId = (await post(`/v1/knowledge_stores/${store}/documents`, { title: 'Plan', text: 'The launch date is in March.' }).expect(201)).body.id;
    const notFound = { error: { message: `No knowledge store found with id '${store}'.`, type: 'invalid_request_error', code: null, param: 'store_id' } };
    assert.deepEqual((await get(`/v1/knowledge_stores/${store}`, 'outsider').expect(404)).body, notFound);
    assert.deepEqual((await post(`/v1/knowledge_stores/${store}/search`, { query: 'launch' }, 'outsider').expect(404)).body, notFound);
    assert.deepEqual((await post(`/v1/knowledge_stores/${store}/documents`, { title: 'x', text: 'y' }, 'outsider').expect(404)).body, notFound);
    await get(`/v1/knowledge_stores/${store}/documents`, 'outsider').expect(404);
    await get(`/v1/knowledge_stores/${store}/documents/${docId}`, 'outsider').expect(404);
    await del(`/v1/knowledge_stores/${store}/documents/${docId}`, 'outsider').expect(404);
    await del(`/v1/knowledge_stores/${store}`, 'outsider').expect(404);
    const theirs = await get('/v1/knowledge_stores', 'outsider').expect(200);
    assert.ok(!theirs.body.data.some((s: { id: string }) => s.id === store));
    // Still there for its own organization.
    assert.equal((await post(`/v1/knowledge_stores/${store}/search`, { query: 'launch' }).expect(200)).body.data.length, 1);
  });

  it('deletes a document and a store with its documents', async () => {
    const store = await newStore('Temporary');
    const docId = (await post(`/v1/knowledge_stores/${store}/documents`, { title: 'Note', text: 'Quarterly figures.' }).expect(201)).body.id;
    assert.deepEqual((await del(`/v1/knowledge_stores/${store}/documents/${docId}`).expect(200)).body, {
      id: docId,
      object: 'knowledge_store.document.deleted',
      deleted: true,
    });
    await get(`/v1/knowledge_stores/${store}/documents/${docId}`).expect(404);
    await post(`/v1/knowledge_stores/${store}/documents`, { title: 'Another', text: 'Quarterly figures again.' }).expect(201);
    assert.deepEqual((await del(`/v1/knowledge_stores/${store}`).expect(200)).body, { id: store, object: 'knowledge_store.deleted', deleted: true });
    await get(`/v1/knowledge_stores/${store}`).expect(404);
    await post(`/v1/knowledge_stores/${store}/search`, { query: 'quarterly' }).expect(404);
  });

  it('bounds bodies: text over 1,000,000 characters is a 400 naming text, a body over server.bodyLimitBytes a 413', async () => {
    const store = await newStore('Limits');
    const long = await post(`/v1/knowledge_stores/${store}/documents`, { title: 'Long', text: 'a'.repeat(1_000_001) }).expect(400);
    assert.equal(long.body.error.param, 'text');
    const huge = await post(`/v1/knowledge_stores/${store}/documents`, { title: 'Huge', text: 'a '.repeat(700_000) }).expect(413);
    assert.equal(huge.body.error.code, 'body_too_large');
    const missing = await post(`/v1/knowledge_stores/${store}/documents`, { title: 'No text' }).expect(400);
    assert.match(missing.body.error.message, /text/);
    const nul = await post(`/v1/knowledge_stores/${store}/documents`, { title: 'Nul', text: 'a\u0000b' }).expect(400);
    assert.deepEqual(nul.body.error, {
      message: "Invalid request: 'text' must not contain a NUL character.",
      type: 'invalid_request_error',
      code: 'invalid_request',
      param: 'text',
    });
    const query = await post(`/v1/knowledge_stores/${store}/search`, { query: 'q'.repeat(1001) }).expect(400);
    assert.equal(query.body.error.param, 'query');
    // Nothing of those was stored.
    assert.equal((await get(`/v1/knowledge_stores/${store}`).expect(200)).body.document_count, 0);
  });

  it('needs an API key', async () => {
    const res = await request(gw.url).get('/v1/knowledge_stores').expect(401);
    assert.equal(res.body.error, 'Unauthorized');
  });
});
