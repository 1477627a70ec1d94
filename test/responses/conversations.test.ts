// Stateful Responses over HTTP (spec "POST /v1/responses" rules 2-5, "Responses input items",
// "Opt-in extensions", GET /v1/conversations/{id}/items), on embedded/inline and postgres/bullmq:
// `store: true` returns a conversation, `conversation` alone stores, `previous_response_id` continues;
// the history is loaded server-side and the upstream gets all of it (never `conversation` or
// `previous_response_id`, never asked to store); conversations are linear; one turn at a time per
// conversation (409 conversation_locked); images lose `detail` and file parts are not carried on the
// stateful path; item_reference resolves against the conversation; the conversation's items list;
// `agent_default` on a stateful turn sends service context and the current date, `off` nothing.
import assert from 'node:assert/strict';
import { startFakeAnthropic, type FakeAnthropic } from '../fixtures/upstreams/anthropic-upstream';
import { textEvents } from '../fixtures/upstreams/anthropic-events';
import { responsesBody, responsesStreamEvents } from '../fixtures/upstreams/responses-wire';
import { TEST_KEYS } from '../helpers/gateway';
import { BACKENDS, openBackend, type BackendEnv } from '../helpers/backends';
import { startGatewayWithUpstream, type GatewayWithUpstream } from '../gateway/gateway-helpers';
import { assertNestedError, assertResponsesFraming, jsonReply, parseSseFrames, post, type JsonReply, nativeAndClaude } from './http-helpers';

type Json = Record<string, unknown>;

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** A message's text (string content, or its text parts joined). */
function textOf(item: Json): string {
  const content = item['content'];
  if (typeof content === 'string') return content;
  return (content as Json[]).map((p) => String(p['text'] ?? '')).join('');
}

for (const backend of BACKENDS) {
  describe(`stateful Responses: conversations (${backend})`, function () {
    this.timeout(60_000);
    let env: GatewayWithUpstream;
    let anthropic: FakeAnthropic;
    let deployment: BackendEnv | null = null;

    before(async function () {
      this.timeout(120_000);
      anthropic = await startFakeAnthropic();
      deployment = await openBackend(backend, 'conv');
      const { config: storeConfig, pg } = deployment;
      env = await startGatewayWithUpstream({
        ...nativeAndClaude(anthropic.baseUrl),
        config: { ...storeConfig, responses: { timezone: 'Europe/Berlin', serviceContext: { text: 'Support tier: gold' } } },
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
      anthropic.requests.length = 0;
    });

    const create = async (body: Json, who: keyof typeof TEST_KEYS = 'member'): Promise<JsonReply> =>
      jsonReply(await post(`${env.gw.url}/v1/responses`, body, env.gw.auth(who)));
    const get = async (path: string, who: keyof typeof TEST_KEYS = 'member'): Promise<JsonReply> =>
      jsonReply(await fetch(`${env.gw.url}${path}`, { headers: { authorization: `Bearer ${TEST_KEYS[who]}` } }));
    /** One native turn answered `text`: the reply and what the upstream was sent. */
    const nativeTurn = async (body: Json, text: string, who: keyof typeof TEST_KEYS = 'member'): Promise<{ reply: JsonReply; sent: Json }> => {
      env.upstream.script({ kind: 'json', body: responsesBody('resp-native', text) });
      const before = env.upstream.requests.length;
      const reply = await create({ model: 'resp-native', ...body }, who);
      assert.equal(reply.status, 200, reply.text);
      assert.equal(env.upstream.requests.length, before + 1);
      return { reply, sent: env.upstream.requests[before]!.json() };
    };
    const conversationOf = (reply: JsonReply): string => String((reply.body['conversation'] as Json)['id']);
    const texts = (sent: Json): string[] => (sent['input'] as Json[]).map((item) => `${String(item['role'] ?? item['type'])}:${textOf(item)}`);

    it('store: true returns a conversation id; previous_response_id continues it with the whole history loaded server-side', async () => {
      const first = await nativeTurn({ input: 'My name is Ada.', store: true, metadata: { t: '1' } }, 'Hello Ada.');
      const conversation = conversationOf(first.reply);
      assert.match(conversation, /^conv_/);
      assert.equal(first.reply.body['store'], true);
      assert.deepEqual(first.reply.body['metadata'], { t: '1' });
      // The upstream is sent the turn, not asked to store it, and never sees our fields.
      assert.equal(first.sent['store'], false);
      assert.deepEqual(texts(first.sent), ['user:My name is Ada.']);

      const second = await nativeTurn({ input: 'What is my name?', previous_response_id: first.reply.body['id'] }, 'Ada.');
      assert.equal(conversationOf(second.reply), conversation, 'the same conversation');
      assert.equal(second.reply.body['previous_response_id'], first.reply.body['id']);
      assert.equal(second.reply.body['store'], true, 'previous_response_id alone stores');
      assert.deepEqual(texts(second.sent), ['user:My name is Ada.', 'assistant:Hello Ada.', 'user:What is my name?']);
      for (const field of ['previous_response_id', 'conversation', 'metadata']) assert.equal(field in second.sent, false, field);
      for (const item of second.sent['input'] as Json[]) assert.equal('id' in item, false, 'our item ids are not sent upstream');

      // GET returns the stored turn with its conversation.
      const fetched = await get(`/v1/responses/${String(second.reply.body['id'])}`);
      assert.equal(fetched.status, 200, fetched.text);
      assert.deepEqual(fetched.body['conversation'], { id: conversation });
      // input_items: the turn's own user message, not the history.
      const inputItems = await get(`/v1/responses/${String(second.reply.body['id'])}/input_items`);
      assert.deepEqual((inputItems.body['data'] as Json[]).map(textOf), ['What is my name?']);
    });

    it('conversation alone stores and continues; the items list shows the turns in the OpenAI Conversations shape', async () => {
      const first = await nativeTurn({ input: 'one', store: true }, 'reply one');
      const conversation = conversationOf(first.reply);
      const second = await nativeTurn({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'two' }] }], conversation }, 'reply two');
      assert.equal(conversationOf(second.reply), conversation);
      assert.equal(second.reply.body['store'], true);
      assert.deepEqual(texts(second.sent), ['user:one', 'assistant:reply one', 'user:two']);
      const third = await nativeTurn({ input: 'three', conversation: { id: conversation } }, 'reply three');
      assert.deepEqual(texts(third.sent).slice(-2), ['assistant:reply two', 'user:three']);

      const list = await get(`/v1/conversations/${conversation}/items?order=asc&limit=4`);
      assert.equal(list.status, 200, list.text);
      assert.equal(list.body['object'], 'list');
      const data = list.body['data'] as Json[];
      assert.deepEqual(
        data.map((item) => [item['type'], item['role'], textOf(item)]),
        [
          ['message', 'user', 'one'],
          ['message', 'assistant', 'reply one'],
          ['message', 'user', 'two'],
          ['message', 'assistant', 'reply two'],
        ],
      );
      assert.equal(list.body['has_more'], true);
      assert.equal(list.body['first_id'], data[0]!['id']);
      for (const item of data) assert.equal(item['status'], 'completed');
      const rest = await get(`/v1/conversations/${conversation}/items?order=asc&after=${String(list.body['last_id'])}`);
      assert.deepEqual((rest.body['data'] as Json[]).map(textOf), ['three', 'reply three']);
      const newest = await get(`/v1/conversations/${conversation}/items?limit=1`);
      assert.deepEqual((newest.body['data'] as Json[]).map(textOf), ['reply three'], 'desc by default');
      // Another organization's conversation is 404, like one that does not exist; so is continuing it.
      assertNestedError(await get(`/v1/conversations/${conversation}/items`, 'outsider'), 404, null);
      env.upstream.requests.length = 0;
      assertNestedError(await create({ model: 'resp-native', input: 'x', conversation }, 'outsider'), 404, null, 'conversation');
      assertNestedError(await create({ model: 'resp-native', input: 'x', conversation: 'conv_nope' }), 404, null, 'conversation');
      assert.equal(env.upstream.requests.length, 0);
    });

    it('conversations are linear: continuing from an older response continues the whole history, it does not fork', async () => {
      const a = await nativeTurn({ input: 'A', store: true }, 'ra');
      const b = await nativeTurn({ input: 'B', previous_response_id: a.reply.body['id'] }, 'rb');
      await nativeTurn({ input: 'C', previous_response_id: b.reply.body['id'] }, 'rc');
      const fromA = await nativeTurn({ input: 'D', previous_response_id: a.reply.body['id'] }, 'rd');
      assert.deepEqual(texts(fromA.sent), ['user:A', 'assistant:ra', 'user:B', 'assistant:rb', 'user:C', 'assistant:rc', 'user:D']);
      assert.equal(conversationOf(fromA.reply), conversationOf(a.reply));
    });

    it('previous_response_id that is unknown, unstored or another organization’s: 404 previous_response_not_found, nothing sent', async () => {
      const stateless = await nativeTurn({ input: 'not stored' }, 'x');
      const stored = await nativeTurn({ input: 'stored', store: true }, 'y');
      env.upstream.requests.length = 0;
      for (const [id, who] of [
        ['resp_0123456789abcdef0123456789abcdef', 'member'],
        [String(stateless.reply.body['id']), 'member'],
        [String(stored.reply.body['id']), 'outsider'],
      ] as const) {
        assertNestedError(
          await create({ model: 'resp-native', input: 'next', previous_response_id: id }, who),
          404,
          'previous_response_not_found',
          'previous_response_id',
        );
      }
      assert.equal(env.upstream.requests.length, 0);
      // Stateful rules of the route: both continuations at once, background on the stateful path.
      assertNestedError(
        await create({ model: 'resp-native', input: 'x', previous_response_id: stored.reply.body['id'], conversation: conversationOf(stored.reply) }),
        400,
        'mutually_exclusive_parameters',
      );
      assertNestedError(
        await create({ model: 'resp-native', input: 'x', previous_response_id: stored.reply.body['id'], background: true }),
        400,
        'unsupported_parameter',
        'background',
      );
      // null stands for absent (SDKs send it): stateless, nothing stored.
      const nulls = await nativeTurn({ input: 'n', previous_response_id: null, conversation: null }, 'z');
      assert.equal(nulls.reply.body['conversation'] ?? null, null);
    });

    it('one turn at a time: a second request continuing a conversation whose turn is generating gets 409 conversation_locked; it goes through once the first ends', async () => {
      const first = await nativeTurn({ input: 'start', store: true }, 'ok');
      const conversation = conversationOf(first.reply);
      env.upstream.script({ kind: 'sse', chunks: responsesStreamEvents('resp-native', ['slow ', 'answer ', 'here']), gapMs: 300 });
      const slow = post(`${env.gw.url}/v1/responses`, { model: 'resp-native', input: 'slow one', conversation, stream: true }, env.gw.auth('member'));
      const slowRes = await slow;
      assert.equal(slowRes.status, 200);
      const racing = await create({ model: 'resp-native', input: 'racing', conversation });
      const error = assertNestedError(racing, 409, 'conversation_locked', 'conversation');
      assert.match(String(error['message']), new RegExp(conversation));
      const racingByPrevious = await create({ model: 'resp-native', input: 'racing', previous_response_id: first.reply.body['id'] });
      assertNestedError(racingByPrevious, 409, 'conversation_locked', 'previous_response_id');
      const frames = parseSseFrames(await slowRes.text());
      assertResponsesFraming(frames);
      const after = await nativeTurn({ input: 'after', conversation }, 'fine');
      assert.deepEqual(
        texts(after.sent),
        ['user:start', 'assistant:ok', 'user:slow one', 'assistant:slow answer here', 'user:after'],
        'the refused turns left nothing',
      );
    });

    it('a failed turn appends nothing and frees the conversation', async () => {
      const first = await nativeTurn({ input: 'hello', store: true }, 'hi');
      const conversation = conversationOf(first.reply);
      env.upstream.script({ kind: 'json', status: 500, body: { error: { message: 'boom', type: 'server_error' } } });
      const failed = await create({ model: 'resp-native', input: 'this fails', conversation });
      assert.ok(failed.status >= 500, failed.text);
      const next = await nativeTurn({ input: 'again', conversation }, 'ok');
      assert.deepEqual(texts(next.sent), ['user:hello', 'assistant:hi', 'user:again']);
    });

    it('input_image works on the stateful path without its detail; file parts are not carried, text is (stateless forwards both)', async () => {
      const parts = [
        { type: 'input_text', text: 'look' },
        { type: 'input_image', image_url: PNG, detail: 'high' },
        { type: 'input_file', filename: 'notes.txt', file_data: `data:text/plain;base64,${Buffer.from('file text').toString('base64')}` },
      ];
      const stateless = await nativeTurn({ input: [{ role: 'user', content: parts }] }, 'seen');
      assert.deepEqual(
        ((stateless.sent['input'] as Json[])[0]!['content'] as Json[]).map((p) => p['type']),
        ['input_text', 'input_image', 'input_file'],
      );
      assert.equal(((stateless.sent['input'] as Json[])[0]!['content'] as Json[])[1]!['detail'], 'high');
      const first = await nativeTurn({ input: [{ role: 'user', content: parts }], store: true }, 'seen');
      const sentParts = (first.sent['input'] as Json[])[0]!['content'] as Json[];
      assert.deepEqual(sentParts, [
        { type: 'input_text', text: 'look' },
        { type: 'input_image', image_url: PNG },
      ]);
      // And the history carries the image (no detail) to the next turn, on a translated provider too.
      anthropic.script({ kind: 'sse', events: textEvents('a red dot') });
      const next = await create({ model: 'resp-claude', input: 'what was it?', previous_response_id: first.reply.body['id'] });
      assert.equal(next.status, 200, next.text);
      const messages = anthropic.requests[0]!.body['messages'] as Json[];
      assert.equal(messages.length, 3);
      const firstUser = messages[0]!['content'] as Json[];
      assert.deepEqual(
        firstUser.map((b) => b['type']),
        ['text', 'image'],
      );
      assert.equal(textOf(messages[1]! as Json), 'seen');
      assert.equal(conversationOf(next), conversationOf(first.reply), 'a conversation is not tied to one provider');
    });

    it('item_reference: to an item already in the history it is not sent twice; to an unknown item 400 naming it', async () => {
      const first = await nativeTurn({ input: 'q', store: true }, 'a');
      const output = (first.reply.body['output'] as Json[])[0]!;
      const list = await get(`/v1/conversations/${conversationOf(first.reply)}/items?order=asc`);
      const assistant = (list.body['data'] as Json[])[1]!;
      assert.equal(textOf(assistant), 'a');
      const next = await nativeTurn(
        {
          input: [
            { type: 'item_reference', id: assistant['id'] },
            { role: 'user', content: 'next' },
          ],
          previous_response_id: first.reply.body['id'],
        },
        'b',
      );
      assert.deepEqual(texts(next.sent), ['user:q', 'assistant:a', 'user:next']);
      assert.ok(typeof output['id'] === 'string');
      const bad = await create({
        model: 'resp-native',
        input: [
          { role: 'user', content: 'x' },
          { type: 'item_reference', id: 'msg_unknown' },
        ],
        previous_response_id: next.reply.body['id'],
      });
      assertNestedError(bad, 400, 'invalid_request', 'input[1].id');
    });

    it('a translated provider continues the conversation too (streamed): history as messages, conversation echoed in every snapshot', async () => {
      anthropic.script({ kind: 'sse', events: textEvents('Nice to meet you, Bo.') });
      const first = await create({ model: 'resp-claude', input: 'I am Bo.', store: true, instructions: 'Be brief.' });
      assert.equal(first.status, 200, first.text);
      anthropic.script({ kind: 'sse', events: textEvents('Bo.') });
      const res = await post(
        `${env.gw.url}/v1/responses`,
        { model: 'resp-claude', input: 'Who am I?', previous_response_id: first.body['id'], stream: true },
        env.gw.auth('member'),
      );
      const frames = parseSseFrames(await res.text());
      assertResponsesFraming(frames);
      for (const frame of frames.filter((f) => f.data['response'])) {
        const response = frame.data['response'] as Json;
        assert.deepEqual(response['conversation'], { id: conversationOf(first) });
        assert.equal(response['previous_response_id'], first.body['id']);
      }
      const sent = anthropic.requests[1]!.body;
      assert.deepEqual(
        (sent['messages'] as Json[]).map((m) => `${String(m['role'])}:${textOf(m)}`),
        ['user:I am Bo.', 'assistant:Nice to meet you, Bo.', 'user:Who am I?'],
      );
      assert.equal(sent['system'] ?? null, null, 'instructions are per request, not carried by the conversation');
    });

    describe('the curated prompt on stateful turns', () => {
      it('agent_default: curated prompt, caller instructions, then service context; the date and time zone go with the triggering input', async () => {
        const { sent, reply } = await nativeTurn(
          { input: 'hi', store: true, instructions: 'Answer in French.', svc: { system_prompt: 'agent_default' } },
          'Salut',
        );
        const instructions = String(sent['instructions']);
        assert.match(instructions, /^You are a capable assistant/);
        const callerAt = instructions.indexOf('Answer in French.');
        const contextAt = instructions.indexOf('Service context:');
        assert.ok(callerAt > 0 && contextAt > callerAt, instructions);
        assert.match(instructions, /Organization: Acme \(acme\)/);
        assert.match(instructions, /User: Member \(u-member\), role member/);
        assert.match(instructions, /Support tier: gold/);
        const input = sent['input'] as Json[];
        assert.equal(input.length, 2);
        assert.equal(input[0]!['role'], 'developer');
        assert.match(textOf(input[0]!), /Current date and time: .*\d{4}-\d{2}-\d{2}.* \(time zone Europe\/Berlin\)/);
        assert.deepEqual(input[1], { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] });
        // The service context is not part of the conversation: the next turn's history is the caller's.
        const next = await nativeTurn({ input: 'again', previous_response_id: reply.body['id'] }, 'ok');
        assert.deepEqual(texts(next.sent), ['user:hi', 'assistant:Salut', 'user:again']);
        assert.equal(next.sent['instructions'] ?? null, null);
      });

      it('off (and absent): instructions and input unchanged, nothing added', async () => {
        for (const svc of [{ system_prompt: 'off' }, undefined]) {
          const { sent } = await nativeTurn({ input: 'hi', store: true, instructions: 'Mine.', ...(svc ? { svc } : {}) }, 'ok');
          assert.equal(sent['instructions'], 'Mine.');
          assert.deepEqual(sent['input'], [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }]);
        }
      });

      it('agent_default on a stateless request adds the curated prompt only (no service context, no date)', async () => {
        const { sent } = await nativeTurn({ input: 'hi', svc: { system_prompt: 'agent_default' } }, 'ok');
        assert.doesNotMatch(String(sent['instructions']), /Service context/);
        assert.equal(sent['input'], 'hi');
      });
    });
  });
}
