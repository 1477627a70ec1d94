// Stored responses across real gateway processes (the built CLI, `serve`), over HTTP: two gateways
// sharing PostgreSQL and Redis (queue.driver bullmq, live events over Redis pub/sub). A reader
// connected to one gateway follows a response another gateway is generating: the earlier events, then
// the live ones, to the end. A gateway killed (SIGKILL) mid-stream leaves its response in progress
// only until its lease lapses (queue.leaseSeconds, short here): the surviving gateway marks it failed,
// and a reader waiting on it ends with `error` then `response.failed`. An embedded gateway killed the
// same way finds the response at its next start and marks it failed then (it is the only process).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import { startFakeOpenAiUpstream, type FakeOpenAiUpstream } from '../fixtures/upstreams/openai-upstream';
import { responsesStreamEvents } from '../fixtures/upstreams/responses-wire';
import { baseConfigDocument, TEST_KEYS } from '../helpers/config';
import { startServer, tempDir, writeConfig, type ServerProcess } from '../helpers/process';
import { createTestSchema, openTestStore } from '../helpers/store';
import { waitFor } from '../helpers/wait';
import { assertResponsesFraming, assertStreamErrorEvent, jsonReply, medianLagMs, post, SseFollower, typesOf, within } from './http-helpers';

const REDIS_URL = process.env['REDIS_URL'] || 'redis://127.0.0.1:6379';
const AUTH = { authorization: `Bearer ${TEST_KEYS.member}` };
const LEASE_SECONDS = 2;

function gatewayDocument(upstream: FakeOpenAiUpstream, storeAndQueue: Record<string, unknown>): Record<string, unknown> {
  const base = baseConfigDocument();
  return {
    ...base,
    ...storeAndQueue,
    server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 2000 },
    providers: { demo: { type: 'demo' }, native: { type: 'openai', baseUrl: upstream.baseUrl, apiKey: 'sk-native', responses: 'native', retries: { max: 0 } } },
    models: [
      { id: 'demo', provider: 'demo' },
      { id: 'resp-native', provider: 'native' },
    ],
    plugins: { ...(base['plugins'] as Record<string, unknown>), auth: { enabled: true } },
    logging: { level: 'info', accessLog: false },
  };
}

const responseIdOf = (follower: SseFollower): string => String((follower.frames[0]!.data['response'] as Record<string, unknown>)['id']);

async function getResponse(gateway: ServerProcess, id: string): Promise<Record<string, unknown>> {
  const reply = await jsonReply(await fetch(`${gateway.url}/v1/responses/${id}`, { headers: AUTH }));
  assert.equal(reply.status, 200, reply.text);
  return reply.body;
}

/** A slow stored stream started on `gateway`, followed until `count` events came. */
async function slowStoredStream(gateway: ServerProcess, upstream: FakeOpenAiUpstream, pieces: number, gapMs: number, count: number): Promise<SseFollower> {
  const text = Array.from({ length: pieces }, (_, i) => `word${i} `);
  upstream.script({ kind: 'sse', chunks: responsesStreamEvents('resp-native', text), gapMs });
  const caller = new SseFollower(await post(`${gateway.url}/v1/responses`, { model: 'resp-native', input: 'hi', store: true, stream: true }, AUTH));
  assert.equal(caller.response.status, 200);
  await caller.until('the first events', count);
  return caller;
}

describe('stored responses across gateway processes (postgres and bullmq, real processes)', function () {
  this.timeout(120_000);
  const prefix = `agwresp${randomBytes(4).toString('hex')}`;
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let upstream: FakeOpenAiUpstream;
  let dir: string;
  let gatewayA: ServerProcess;
  let gatewayB: ServerProcess;

  before(async function () {
    this.timeout(180_000);
    schema = await createTestSchema('respproc');
    upstream = await startFakeOpenAiUpstream();
    dir = tempDir('agw-resp-proc-');
    const config = writeConfig(
      dir,
      gatewayDocument(upstream, {
        store: { driver: 'postgres', url: schema.url },
        queue: { driver: 'bullmq', redisUrl: REDIS_URL, prefix, leaseSeconds: LEASE_SECONDS },
      }),
    );
    // Started together: the schema's migrations take an advisory lock.
    [gatewayA, gatewayB] = await Promise.all([startServer(['serve', '--config', config]), startServer(['serve', '--config', config])]);
  });
  after(async () => {
    await Promise.all([gatewayA?.stop('SIGKILL'), gatewayB?.stop('SIGKILL')]);
    await upstream?.close();
    await schema?.drop();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a reader on another gateway gets the earlier events, then the live ones, to response.completed', async () => {
    const caller = await slowStoredStream(gatewayA, upstream, 12, 80, 6);
    const id = responseIdOf(caller);
    const reader = new SseFollower(await fetch(`${gatewayB.url}/v1/responses/${id}?stream=true`, { headers: AUTH }));
    assert.equal(reader.response.status, 200);
    await reader.until('the earlier events', 6);
    const liveFrom = reader.frames.length;
    assert.notEqual(caller.frames[caller.frames.length - 1]!.data['type'], 'response.completed', 'still streaming when the reader came');
    await Promise.all([caller.finished, reader.finished]);
    assertResponsesFraming(reader.frames);
    assert.deepEqual(
      reader.frames.map((f) => f.data),
      caller.frames.map((f) => f.data),
      'the reader on B saw what the caller on A saw',
    );
    const lag = medianLagMs(caller, reader, liveFrom);
    assert.ok(lag < 500, `the later events came live over Redis, not from a store poll (median ${Math.round(lag)} ms behind the caller)`);
    assert.equal((await getResponse(gatewayB, id))['status'], 'completed');
  });

  it('one turn at a time across processes: while A generates a turn, B refuses to continue that conversation (409), then continues it with A’s turn in the history', async () => {
    const caller = await slowStoredStream(gatewayA, upstream, 12, 80, 4);
    const conversation = String(((caller.frames[0]!.data['response'] as Record<string, unknown>)['conversation'] as Record<string, unknown>)['id']);
    const refused = await jsonReply(await post(`${gatewayB.url}/v1/responses`, { model: 'resp-native', input: 'meanwhile', conversation }, AUTH));
    assert.equal(refused.status, 409, refused.text);
    assert.equal((refused.body['error'] as Record<string, unknown>)['code'], 'conversation_locked');
    await caller.finished;
    const before = upstream.requests.length;
    const next = await jsonReply(await post(`${gatewayB.url}/v1/responses`, { model: 'resp-native', input: 'after', conversation }, AUTH));
    assert.equal(next.status, 200, next.text);
    const sent = upstream.requests[before]!.json();
    const roles = (sent['input'] as Record<string, unknown>[]).map((item) => item['role']);
    assert.deepEqual(roles, ['user', 'assistant', 'user'], 'A’s turn (its input and output) is in the history B loaded');
  });

  it('a gateway killed mid-stream: its response is failed once the lease lapses, and a reader waiting on another gateway ends', async () => {
    const caller = await slowStoredStream(gatewayA, upstream, 200, 100, 6);
    const id = responseIdOf(caller);
    const reader = new SseFollower(await fetch(`${gatewayB.url}/v1/responses/${id}?stream=true`, { headers: AUTH }));
    await reader.until('the events so far', 6);
    assert.equal((await getResponse(gatewayB, id))['status'], 'in_progress');
    const killedAt = Date.now();
    await gatewayA.stop('SIGKILL');
    await caller.finished.catch(() => undefined); // the caller's connection died with the process

    await within(reader.finished, 20_000, 'the waiting reader ends once the lease lapsed');
    const waited = Date.now() - killedAt;
    // Renewed every third of the lease: at the kill at least two thirds of it were left.
    assert.ok(waited >= (LEASE_SECONDS * 1000 * 2) / 3 - 250, `failed only once the lease lapsed (${waited} ms)`);
    assertResponsesFraming(reader.frames);
    assert.deepEqual(typesOf(reader.frames).slice(-2), ['error', 'response.failed']);
    assertStreamErrorEvent(reader.frames[reader.frames.length - 2]!);
    const body = await getResponse(gatewayB, id);
    assert.equal(body['status'], 'failed', 'not in_progress for ever');
    // A reader that comes later replays the same ending.
    const later = new SseFollower(await fetch(`${gatewayB.url}/v1/responses/${id}?stream=true`, { headers: AUTH }));
    await later.finished;
    assertResponsesFraming(later.frames);
    assert.deepEqual(typesOf(later.frames).slice(-2), ['error', 'response.failed']);
    // The dead gateway's turn is over with its response: the conversation continues on B, without it.
    const conversation = String(((caller.frames[0]!.data['response'] as Record<string, unknown>)['conversation'] as Record<string, unknown>)['id']);
    const before = upstream.requests.length;
    const next = await jsonReply(await post(`${gatewayB.url}/v1/responses`, { model: 'resp-native', input: 'still there?', conversation }, AUTH));
    assert.equal(next.status, 200, next.text);
    const sent = upstream.requests[before]!.json();
    assert.deepEqual(
      (sent['input'] as Record<string, unknown>[]).map((item) => item['role']),
      ['user'],
      'the failed turn appended nothing',
    );
  });
});

describe('stored responses: an embedded gateway killed mid-stream (real process)', function () {
  this.timeout(180_000);
  let upstream: FakeOpenAiUpstream;
  let dir: string;
  let gateway: ServerProcess | null = null;

  let storePath: string;

  before(async function () {
    this.timeout(180_000);
    upstream = await startFakeOpenAiUpstream();
    dir = tempDir('agw-resp-embedded-');
    // A migrated store copied from the tests' template: the process skips a slow first initdb.
    const migrated = await openTestStore('embedded');
    await migrated.store.close();
    storePath = migrated.config.path;
  });
  after(async () => {
    await gateway?.stop('SIGKILL');
    await upstream?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (storePath) rmSync(storePath, { recursive: true, force: true });
  });

  it('the next start finds the response in progress and marks it failed; a replay then ends', async () => {
    const config = writeConfig(
      dir,
      gatewayDocument(upstream, {
        store: { driver: 'embedded', path: storePath },
        queue: { driver: 'inline', leaseSeconds: 30 },
      }),
    );
    gateway = await startServer(['serve', '--config', config]);
    const caller = await slowStoredStream(gateway, upstream, 200, 100, 6);
    const id = responseIdOf(caller);
    await waitFor(async () => (await getResponse(gateway!, id))['status'] === 'in_progress', { what: 'the stored record' });
    await gateway.stop('SIGKILL');
    await caller.finished.catch(() => undefined);

    // The lease (30 s) has not lapsed: the restart itself knows a previous life's stream is over.
    gateway = await startServer(['serve', '--config', config]);
    const body = await getResponse(gateway, id);
    assert.equal(body['status'], 'failed');
    const replay = new SseFollower(await fetch(`${gateway.url}/v1/responses/${id}?stream=true`, { headers: AUTH }));
    await replay.finished;
    assertResponsesFraming(replay.frames);
    assert.equal(typesOf(replay.frames).at(-1), 'response.failed');
  });
});
