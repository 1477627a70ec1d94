// Stored responses over HTTP (spec rule 9, "GET /v1/responses/{response_id}", "GET …/input_items",
// "Stored response and input-items list"), on both store configurations a deployment uses (embedded
// store with the inline queue; PostgreSQL with BullMQ, whose live events go over Redis): `store: true`
// can be fetched and replayed, anything else (store: false, another organization's, expired, pruned)
// is the one 404 without an error.code; input_items lists the originating user messages, redacted
// under a DLP policy; a replay gives every event, or those after starting_after / Last-Event-ID, with
// continuous numbering, and a reader that comes while the response is still streaming gets the
// earlier events and then the live ones; a caller that leaves does not stop a stored response.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startFakeAnthropic, type FakeAnthropic } from '../fixtures/upstreams/anthropic-upstream';
import { textThenToolEvents } from '../fixtures/upstreams/anthropic-events';
import { responsesBody, responsesStreamEvents } from '../fixtures/upstreams/responses-wire';
import { baseConfigDocument } from '../helpers/config';
import { TEST_KEYS } from '../helpers/gateway';
import { BACKENDS, openBackend, type BackendEnv } from '../helpers/backends';
import { waitFor } from '../helpers/wait';
import { startGatewayWithUpstream, type GatewayWithUpstream } from '../gateway/gateway-helpers';
import {
  assertNestedError,
  assertResponsesFraming,
  jsonReply,
  medianLagMs,
  parseSseFrames,
  post,
  SseFollower,
  typesOf,
  type JsonReply,
  type SseFrame,
  nativeAndClaude,
} from './http-helpers';

const SECRET = 'jane.doe@example.com';

/** The text deltas of a slow native stream: long enough for a reader to join while it streams. */
const SLOW_PIECES = Array.from({ length: 12 }, (_, i) => `piece${i} `);

for (const backend of BACKENDS) {
  describe(`stored responses over HTTP (${backend})`, function () {
    this.timeout(60_000);
    let env: GatewayWithUpstream;
    let anthropic: FakeAnthropic;
    let deployment: BackendEnv | null = null;

    before(async function () {
      this.timeout(120_000);
      anthropic = await startFakeAnthropic();
      const organizations = (baseConfigDocument()['organizations'] as Record<string, unknown>[]).map((org) =>
        org['id'] === 'acme' ? { ...org, dlp: { enabled: true } } : { ...org, models: ['*'] },
      );
      deployment = await openBackend(backend, 'stored');
      const { config: storeConfig, pg } = deployment;
      env = await startGatewayWithUpstream({
        ...nativeAndClaude(anthropic.baseUrl),
        plugins: { dlp: { enabled: true } },
        organizations,
        config: storeConfig,
        ...(pg ? { store: pg.store } : {}),
      });
    });
    after(async () => {
      await env?.close();
      await anthropic?.close();
      await deployment?.cleanup();
    });
    beforeEach(() => {
      env.upstream.requests.length = 0;
      env.upstream.aborted.length = 0;
      anthropic.requests.length = 0;
    });

    const create = (body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> =>
      post(`${env.gw.url}/v1/responses`, body, env.gw.auth('member'), signal);
    const get = async (path: string, who: keyof typeof TEST_KEYS = 'member', headers: Record<string, string> = {}): Promise<Response> =>
      fetch(`${env.gw.url}/v1/responses/${path}`, { headers: { authorization: `Bearer ${TEST_KEYS[who]}`, ...headers } });
    const getJson = async (path: string, who: keyof typeof TEST_KEYS = 'member'): Promise<JsonReply> => jsonReply(await get(path, who));
    const replay = async (query: string, headers: Record<string, string> = {}, id = ''): Promise<SseFrame[]> => {
      const res = await get(`${id}?stream=true${query}`, 'member', headers);
      assert.equal(res.status, 200, `replay of ${id}${query}`);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      return parseSseFrames(await res.text());
    };

    /** The stored response once finished (the final object is written just after the caller's last byte). */
    const finished = async (id: string): Promise<Record<string, unknown>> => {
      let body: Record<string, unknown> = {};
      await waitFor(
        async () => {
          body = (await getJson(id)).body;
          return body['status'] !== 'in_progress';
        },
        { what: `response ${id} to finish`, timeoutMs: 15_000 },
      );
      return body;
    };

    /** A stored streamed response from the native upstream: its frames and id. */
    const storedStream = async (pieces = ['Hel', 'lo']): Promise<{ id: string; frames: SseFrame[] }> => {
      env.upstream.script({ kind: 'sse', chunks: responsesStreamEvents('resp-native', pieces, { id: `resp_up_${randomBytes(4).toString('hex')}` }) });
      const res = await create({ model: 'resp-native', input: 'hi', store: true, stream: true });
      const frames = parseSseFrames(await res.text());
      assertResponsesFraming(frames);
      return { id: String((frames[0]!.data['response'] as Record<string, unknown>)['id']), frames };
    };

    /** The stored response read the moment its stream ended: the store says what the stream said. */
    const storedNow = async (id: string): Promise<Record<string, unknown>> => {
      const fetched = await getJson(id);
      assert.equal(fetched.status, 200, fetched.text);
      return fetched.body;
    };

    describe('GET /v1/responses/{id}', () => {
      it('store: true (native, JSON): GET returns the completed response with its metadata', async () => {
        env.upstream.script({ kind: 'json', body: responsesBody('resp-native', 'Stored hello', { id: 'resp_native_json1' }) });
        const created = await jsonReply(await create({ model: 'resp-native', input: 'hi', store: true, metadata: { ticket: 'T-1' } }));
        assert.equal(created.status, 200, created.text);
        const id = String(created.body['id']);
        const fetched = await getJson(id);
        assert.equal(fetched.status, 200, fetched.text);
        assert.equal(fetched.body['id'], id);
        assert.equal(fetched.body['status'], 'completed');
        assert.deepEqual(fetched.body['metadata'], { ticket: 'T-1' });
        assert.deepEqual(fetched.body['output'], created.body['output']);
      });

      it('store: true (translated, streamed): the id of response.created is the one GET returns, completed, with the streamed output', async () => {
        anthropic.script({ kind: 'sse', events: textThenToolEvents() });
        const res = await create({ model: 'resp-claude', input: 'weather?', store: true, stream: true });
        const frames = parseSseFrames(await res.text());
        assertResponsesFraming(frames);
        const id = String((frames[0]!.data['response'] as Record<string, unknown>)['id']);
        const body = await storedNow(id);
        assert.equal(body['status'], 'completed');
        assert.deepEqual(body['output'], (frames[frames.length - 1]!.data['response'] as Record<string, unknown>)['output']);
      });

      it('store: true, translated and not streamed: stored completed, GET equals the reply', async () => {
        anthropic.script({ kind: 'sse', events: textThenToolEvents() });
        const created = await jsonReply(await create({ model: 'resp-claude', input: 'weather?', store: true }));
        assert.equal(created.status, 200, created.text);
        const body = await storedNow(String(created.body['id']));
        assert.equal(body['status'], 'completed');
        assert.deepEqual(body['output'], created.body['output']);
      });

      for (const model of ['resp-native', 'resp-claude']) {
        it(`a stream’s end means the store agrees: a GET made at once finds it completed (${model === 'resp-native' ? 'native' : 'translated'})`, async () => {
          for (let i = 0; i < 6; i++) {
            if (model === 'resp-claude') anthropic.script({ kind: 'sse', events: textThenToolEvents() });
            const res = await create({ model, input: 'hi', store: true, stream: true });
            const frames = parseSseFrames(await res.text());
            assert.equal(frames[frames.length - 1]!.data['type'], 'response.completed');
            const body = await storedNow(String((frames[0]!.data['response'] as Record<string, unknown>)['id']));
            assert.equal(body['status'], 'completed', `attempt ${i}: the stream said completed`);
          }
        });
      }

      it('stored native responses get the gateway’s own ids: an upstream reusing one id makes two responses, not an error', async () => {
        // The fake upstream answers every call with the id resp_up1.
        const json = await jsonReply(await create({ model: 'resp-native', input: 'one', store: true }));
        assert.equal(json.status, 200, json.text);
        env.upstream.script({ kind: 'sse', chunks: responsesStreamEvents('resp-native', ['two']) });
        const res = await create({ model: 'resp-native', input: 'two', store: true, stream: true });
        const frames = parseSseFrames(await res.text());
        assertResponsesFraming(frames);
        const ids = [String(json.body['id']), String((frames[0]!.data['response'] as Record<string, unknown>)['id'])];
        for (const frame of frames.filter((f) => f.data['response']))
          assert.equal((frame.data['response'] as Record<string, unknown>)['id'], ids[1], 'every snapshot');
        assert.notEqual(ids[0], ids[1]);
        for (const id of ids) {
          assert.match(id, /^resp_[0-9a-f]{32}$/);
          assert.equal((await storedNow(id))['id'], id);
        }
        assert.deepEqual(
          await Promise.all(
            ids.map(async (id) => ((await getJson(`${id}/input_items`)).body['data'] as { content: { text: string }[] }[])[0]!.content[0]!.text),
          ),
          ['one', 'two'],
        );
        const stateless = await jsonReply(await create({ model: 'resp-native', input: 'three' }));
        assert.equal(stateless.body['id'], 'resp_up1', 'a response that is not stored keeps the upstream’s id');
      });

      for (const model of ['resp-native', 'resp-claude']) {
        it(`the store refusing to create a stored response: a JSON error before any byte, not a broken stream (${model === 'resp-native' ? 'native' : 'translated'})`, async () => {
          // A stored response's record is written through the turns' group commit.
          const turns = env.gw.store.turns;
          const commit0 = turns.commit.bind(turns);
          turns.commit = (begins, ends) => (begins.length > 0 ? Promise.reject(new Error('the store refuses')) : commit0(begins, ends));
          try {
            // Anthropic holds its stream open until the gateway lets go of it.
            const released = model === 'resp-claude' ? anthropic.clientGone() : null;
            if (model === 'resp-claude') anthropic.script({ kind: 'hang', events: textThenToolEvents().slice(0, 3) });
            const reply = await jsonReply(await create({ model, input: 'hi', store: true, stream: true }));
            assert.equal(reply.status, 500, reply.text);
            assert.equal((reply.body['error'] as Record<string, unknown>)['type'], 'server_error');
            if (released) {
              const late = new Promise((_, reject) => setTimeout(() => reject(new Error('the upstream stream was left open')), 5000).unref());
              await Promise.race([released, late]);
            }
          } finally {
            turns.commit = commit0;
          }
          if (model === 'resp-claude') anthropic.script({ kind: 'sse', events: textThenToolEvents() });
          const again = await create({ model, input: 'hi', store: true, stream: true });
          assertResponsesFraming(parseSseFrames(await again.text()));
        });
      }

      it('store: false: GET is 404 not_found with no error.code, exactly like an id that never existed', async () => {
        const created = await jsonReply(await create({ model: 'resp-native', input: 'hi' }));
        assert.equal(created.status, 200, created.text);
        const id = String(created.body['id']);
        const unstored = await getJson(id);
        assertNestedError(unstored, 404, null);
        const never = await getJson('resp_never_existed_0000');
        assert.deepEqual(unstored.body, JSON.parse(never.text.replaceAll('resp_never_existed_0000', id)), 'the same envelope');
        assertNestedError(await getJson(`${id}/input_items`), 404, null);
        assertNestedError(await jsonReply(await get(`${id}?stream=true`)), 404, null);
      });

      it('another organization’s response: the same 404 on GET, replay and input_items', async () => {
        const { id } = await storedStream();
        for (const path of [id, `${id}/input_items`]) {
          const other = await getJson(path, 'outsider');
          assertNestedError(other, 404, null);
          assert.ok(!other.text.includes('"status"'), 'nothing of the response');
        }
        assertNestedError(await jsonReply(await get(`${id}?stream=true`, 'outsider')), 404, null);
        assert.equal((await getJson(id, 'viewer')).status, 200, 'the same organization reads it');
      });

      it('an expired response is 404 at once; a pruned one is the same 404', async () => {
        const { id } = await storedStream();
        await env.gw.store.responses.update(id, { expiresAt: new Date(Date.now() - 1000).toISOString() });
        const expired = await getJson(id);
        assertNestedError(expired, 404, null);
        assertNestedError(await getJson(`${id}/input_items`), 404, null);
        assertNestedError(await jsonReply(await get(`${id}?stream=true`)), 404, null);
        assert.ok((await env.gw.store.responses.prune(new Date().toISOString(), 100)) >= 1, 'the retention prune deletes it');
        const pruned = await getJson(id);
        assert.deepEqual(pruned.body, expired.body);
        assert.equal(await env.gw.store.responses.lastSequenceNumber(id), -1, 'its events went with it');
      });
    });

    describe('GET /v1/responses/{id}/input_items', () => {
      it('lists the originating user messages (not system, developer or assistant items) in the list envelope', async () => {
        const created = await jsonReply(
          await create({
            model: 'resp-native',
            store: true,
            instructions: 'be brief',
            input: [
              { role: 'developer', content: 'internal rules' },
              { role: 'user', content: 'first question' },
              { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'an answer' }] },
              { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'second question' }] },
            ],
          }),
        );
        assert.equal(created.status, 200, created.text);
        const list = await getJson(`${String(created.body['id'])}/input_items`);
        assert.equal(list.status, 200, list.text);
        assert.equal(list.body['object'], 'list');
        assert.equal(list.body['has_more'], false);
        const data = list.body['data'] as Record<string, unknown>[];
        assert.equal(data.length, 2, list.text);
        for (const item of data) {
          assert.equal(item['type'], 'message');
          assert.equal(item['role'], 'user');
          assert.equal(typeof item['id'], 'string');
          assert.equal(typeof item['status'], 'string');
          assert.ok(Array.isArray(item['content']));
        }
        assert.deepEqual(data[0]!['content'], [{ type: 'input_text', text: 'first question' }]);
        assert.deepEqual(data[1]!['content'], [{ type: 'input_text', text: 'second question' }]);
        assert.equal(list.body['first_id'], data[0]!['id']);
        assert.equal(list.body['last_id'], data[1]!['id']);
        assert.notEqual(data[0]!['id'], data[1]!['id']);
      });

      it('a string input is one user message; pagination parameters are ignored', async () => {
        anthropic.script({ kind: 'sse', events: textThenToolEvents() });
        const created = await jsonReply(await create({ model: 'resp-claude', store: true, input: 'just this' }));
        const id = String(created.body['id']);
        const list = await jsonReply(await get(`${id}/input_items?limit=1&order=desc&after=msg_x`));
        assert.equal(list.status, 200, list.text);
        const data = list.body['data'] as Record<string, unknown>[];
        assert.equal(data.length, 1);
        assert.deepEqual(data[0]!['content'], [{ type: 'input_text', text: 'just this' }]);
        assert.equal(list.body['first_id'], data[0]!['id']);
        assert.equal(list.body['last_id'], data[0]!['id']);
      });

      for (const model of ['resp-native', 'resp-claude']) {
        it(`under a DLP policy the stored input is the redacted text (${model === 'resp-native' ? 'native' : 'translated'})`, async () => {
          if (model === 'resp-claude') anthropic.script({ kind: 'sse', events: textThenToolEvents() });
          const created = await jsonReply(
            await create({
              model,
              store: true,
              instructions: `escalate to ${SECRET}`,
              input: [{ role: 'user', content: [{ type: 'input_text', text: `mail ${SECRET} please` }] }],
            }),
          );
          assert.equal(created.status, 200, created.text);
          const id = String(created.body['id']);
          const list = await getJson(`${id}/input_items`);
          assert.ok(!list.text.includes(SECRET), list.text);
          assert.deepEqual((list.body['data'] as Record<string, unknown>[])[0]!['content'], [{ type: 'input_text', text: 'mail [REDACTED:email] please' }]);
          const record = await env.gw.store.responses.get(id);
          assert.ok(record);
          assert.ok(!JSON.stringify(record).includes(SECRET), `nothing unredacted is stored: ${JSON.stringify(record.body).slice(0, 300)}`);
        });
      }
    });

    describe('replay (GET ?stream=true)', () => {
      it('a finished response replays every event as it was streamed, ending with response.completed', async () => {
        const { id, frames } = await storedStream(['a', 'b', 'c']);
        const replayed = await replay('', {}, id);
        assertResponsesFraming(replayed);
        assert.deepEqual(typesOf(replayed), typesOf(frames));
        assert.equal(replayed[replayed.length - 1]!.data['type'], 'response.completed');
        assert.deepEqual(replayed.map((f) => f.data['delta']).filter(Boolean), ['a', 'b', 'c']);
      });

      it('starting_after=N replays only the events after N, numbered on from N + 1', async () => {
        const { id, frames } = await storedStream(['a', 'b', 'c']);
        const after4 = await replay('&starting_after=4', {}, id);
        assertResponsesFraming(after4, 5);
        assert.deepEqual(typesOf(after4), typesOf(frames).slice(5));
        const fromStart = await replay('&starting_after=0', {}, id);
        assertResponsesFraming(fromStart, 1);
        assert.equal(fromStart.length, frames.length - 1);
        const last = frames.length - 1;
        // Finished: its response.completed at once, numbered on (the stream still ends with its terminal event).
        const afterEnd = await replay(`&starting_after=${last}`, {}, id);
        assert.deepEqual(typesOf(afterEnd), ['response.completed']);
        assertResponsesFraming(afterEnd, last + 1);
      });

      it('a starting_after or Last-Event-ID past the 32-bit range: response.completed at once, numbered on, not an empty stream', async () => {
        const { id } = await storedStream();
        for (const [query, headers] of [
          ['&starting_after=2147483648', {}],
          [`&starting_after=${Number.MAX_SAFE_INTEGER}`, {}],
          ['', { 'last-event-id': '2147483648' }],
        ] as const) {
          const frames = await replay(query, headers, id);
          assert.deepEqual(typesOf(frames), ['response.completed'], `${query} ${JSON.stringify(headers)}`);
          assert.equal(frames[0]!.id, String(Number(query.split('=')[1] ?? headers['last-event-id']) + 1));
        }
      });

      it('Last-Event-ID is honoured when starting_after is absent, and starting_after wins when both are sent', async () => {
        const { id, frames } = await storedStream(['a', 'b', 'c']);
        const resumed = await replay('', { 'last-event-id': '6' }, id);
        assertResponsesFraming(resumed, 7);
        assert.deepEqual(typesOf(resumed), typesOf(frames).slice(7));
        const both = await replay('&starting_after=2', { 'last-event-id': '6' }, id);
        assertResponsesFraming(both, 3);
      });

      for (const bad of ['-1', '1.5', 'abc', '-7']) {
        it(`starting_after=${bad}: 400 in JSON, not SSE`, async () => {
          const { id } = await storedStream();
          const reply = await jsonReply(await get(`${id}?stream=true&starting_after=${encodeURIComponent(bad)}`));
          assert.equal(reply.status, 400, reply.text);
          assert.equal(typeof (reply.body['error'] as Record<string, unknown>)['message'], 'string');
        });
      }

      it('a reader that joins while the response streams gets the earlier events, then the live ones, to the terminal event', async () => {
        env.upstream.script({ kind: 'sse', chunks: responsesStreamEvents('resp-native', SLOW_PIECES, { id: 'resp_up_live' }), gapMs: 80 });
        const caller = new SseFollower(await create({ model: 'resp-native', input: 'hi', store: true, stream: true }));
        await caller.until('the first deltas', 6);
        const id = String((caller.frames[0]!.data['response'] as Record<string, unknown>)['id']);
        const readerRes = await get(`${id}?stream=true`);
        assert.equal(readerRes.status, 200);
        const reader = new SseFollower(readerRes);
        await reader.until('the earlier events', 6);
        const liveFrom = reader.frames.length;
        assert.ok(caller.frames[caller.frames.length - 1]!.data['type'] !== 'response.completed', 'the response was still streaming when the reader came');
        await Promise.all([caller.finished, reader.finished]);
        assertResponsesFraming(reader.frames);
        assert.deepEqual(
          reader.frames.map((f) => f.data),
          caller.frames.map((f) => f.data),
          'the reader saw what the caller saw',
        );
        const lag = medianLagMs(caller, reader, liveFrom);
        assert.ok(lag < 500, `the later events came live, not from a store poll (median ${Math.round(lag)} ms behind the caller)`);
      });

      it('a reader joining mid-stream with starting_after gets the rest, live, then the end', async () => {
        env.upstream.script({ kind: 'sse', chunks: responsesStreamEvents('resp-native', SLOW_PIECES, { id: 'resp_up_live2' }), gapMs: 80 });
        const caller = new SseFollower(await create({ model: 'resp-native', input: 'hi', store: true, stream: true }));
        await caller.until('the first deltas', 5);
        const id = String((caller.frames[0]!.data['response'] as Record<string, unknown>)['id']);
        const reader = new SseFollower(await get(`${id}?stream=true&starting_after=3`));
        await Promise.all([caller.finished, reader.finished]);
        assertResponsesFraming(reader.frames, 4);
        assert.deepEqual(
          reader.frames.map((f) => f.data),
          caller.frames.slice(4).map((f) => f.data),
        );
      });

      it('the store failing the replay’s first read: a JSON 500 before any byte, not an empty 200 stream', async () => {
        const { id, frames } = await storedStream(['a', 'b']);
        const responses = env.gw.store.responses;
        const listEvents0 = responses.listEvents.bind(responses);
        responses.listEvents = () => Promise.reject(new Error('the store is away'));
        try {
          const reply = await jsonReply(await get(`${id}?stream=true`));
          assert.equal(reply.status, 500, reply.text);
          assert.equal((reply.body['error'] as Record<string, unknown>)['type'], 'server_error');
        } finally {
          responses.listEvents = listEvents0;
        }
        assert.deepEqual(typesOf(await replay('', {}, id)), typesOf(frames), 'the store back: the whole replay');
      });

      it('a live reader whose store read fails once goes on live to the terminal event instead of ending the stream there', async () => {
        env.upstream.script({ kind: 'sse', chunks: responsesStreamEvents('resp-native', SLOW_PIECES, { id: 'resp_up_blip' }), gapMs: 80 });
        const caller = new SseFollower(await create({ model: 'resp-native', input: 'hi', store: true, stream: true }));
        await caller.until('the first deltas', 6);
        const id = String((caller.frames[0]!.data['response'] as Record<string, unknown>)['id']);
        const responses = env.gw.store.responses;
        const listEvents0 = responses.listEvents.bind(responses);
        let calls = 0;
        let failed = 0;
        // The reader's first read succeeds; its next ones (its settle reads) fail: a store briefly away.
        responses.listEvents = (...args) => {
          if (++calls <= 1) return listEvents0(...args);
          failed++;
          return Promise.reject(new Error('the store is away'));
        };
        try {
          const reader = new SseFollower(await get(`${id}?stream=true`));
          await waitFor(() => failed > 0, { what: 'a failed store read of the reader', timeoutMs: 5000 });
          responses.listEvents = listEvents0;
          await Promise.all([caller.finished, reader.finished]);
          assertResponsesFraming(reader.frames);
          assert.deepEqual(
            reader.frames.map((f) => f.data),
            caller.frames.map((f) => f.data),
          );
        } finally {
          responses.listEvents = listEvents0;
        }
      });

      it('the caller leaving mid-stream does not stop a stored response: the upstream is read to its end, GET shows it completed', async () => {
        env.upstream.script({ kind: 'sse', chunks: responsesStreamEvents('resp-native', SLOW_PIECES, { id: 'resp_up_left' }), gapMs: 40 });
        const caller = new SseFollower(await create({ model: 'resp-native', input: 'hi', store: true, stream: true }));
        await caller.until('the first deltas', 5);
        const id = String((caller.frames[0]!.data['response'] as Record<string, unknown>)['id']);
        caller.leave();
        await caller.finished;
        const body = await finished(id);
        assert.equal(body['status'], 'completed');
        const output = body['output'] as { content: { text: string }[] }[];
        assert.equal(output[0]!.content[0]!.text, SLOW_PIECES.join(''), 'the whole answer');
        const replayed = await replay('', {}, id);
        assertResponsesFraming(replayed);
        assert.equal(replayed[replayed.length - 1]!.data['type'], 'response.completed');
      });

      it('a stateless caller leaving mid-stream releases the upstream (the contrast: nothing to finish for)', async () => {
        env.upstream.script({ kind: 'sse', chunks: responsesStreamEvents('resp-native', SLOW_PIECES), gapMs: 40 });
        const caller = new SseFollower(await create({ model: 'resp-native', input: 'hi', stream: true }));
        await caller.until('the first deltas', 5);
        caller.leave();
        await caller.finished;
        await env.upstream.waitForAborts(1, 5000);
      });

      it('a stored stream that fails mid-way is stored failed and replays its error then response.failed', async () => {
        env.upstream.script({ kind: 'sse', chunks: responsesStreamEvents('resp-native', ['one', 'two', 'three']), failAfter: 5, gapMs: 5 });
        const res = await create({ model: 'resp-native', input: 'hi', store: true, stream: true });
        const frames = parseSseFrames(await res.text());
        assertResponsesFraming(frames);
        const id = String((frames[0]!.data['response'] as Record<string, unknown>)['id']);
        const body = await storedNow(id);
        assert.equal(body['status'], 'failed');
        const replayed = await replay('', {}, id);
        assertResponsesFraming(replayed);
        assert.deepEqual(typesOf(replayed), typesOf(frames));
      });
    });
  });
}
