// The OpenAI SDK (the real `openai` package) on stateful Responses: responses.create chains with
// `previous_response_id` and with `conversation` (the id the first response returned, as a string and as
// `{ id }`), streamed and not, and client.conversations.items.list (GET /v1/conversations/{id}/items,
// paged by the SDK's own auto-pagination); on a native Responses upstream and on the Anthropic provider,
// on the embedded store with the inline queue and on PostgreSQL with BullMQ. The SDK sends only the new
// turn: what the fake upstream received shows the gateway loaded the history. The SDK's error classes
// carry the spec's codes.
import assert from 'node:assert/strict';
import OpenAI, { BadRequestError, NotFoundError } from 'openai';
import type { ConversationItem } from 'openai/resources/conversations/items';
import type { Response, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { TEST_KEYS } from '../../helpers/gateway';
import { API_KEY, DEPLOYMENTS, MODEL_OF, scriptText, startClientEnvironment, UPSTREAMS, type ClientEnvironment, type UpstreamKind } from './environment';
import { assertValidEvent, assertValidResponse } from './wire-checks';

type Json = Record<string, unknown>;

/** A message's text (string content, or its text parts joined). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return (content as Json[]).map((part) => (typeof part['text'] === 'string' ? part['text'] : '')).join('');
}

for (const deployment of DEPLOYMENTS) {
  describe(`OpenAI SDK: stateful Responses and conversation items (${deployment})`, function () {
    this.timeout(60_000);
    let env: ClientEnvironment;
    let client: OpenAI;

    before(async function () {
      this.timeout(180_000);
      env = await startClientEnvironment(deployment);
      client = new OpenAI({ baseURL: env.baseURL, apiKey: API_KEY, maxRetries: 0 });
    });
    after(async () => {
      await env?.close();
    });
    beforeEach(() => {
      env.openai.requests.length = 0;
      env.anthropic.requests.length = 0;
    });

    /** Queues a reply (a stored translated response is generated as a stream: Anthropic always answers with events). */
    const reply = (upstream: UpstreamKind, stream: boolean, pieces: string[]): void =>
      void scriptText(env, upstream, stream || upstream === 'anthropic', pieces);
    /** What the upstream was sent last, as `role:text` lines. */
    const sentHistory = (upstream: UpstreamKind): string[] => {
      const body = upstream === 'native' ? env.openai.requests.at(-1)?.json() : env.anthropic.requests.at(-1)?.body;
      assert.ok(body, `the ${upstream} upstream was called`);
      const items = (upstream === 'native' ? body['input'] : body['messages']) as Json[] | string;
      if (typeof items === 'string') return [`user:${items}`];
      return items.map((item) => `${String(item['role'])}:${textOf(item['content'])}`);
    };
    const conversationOf = (response: Response): string => {
      assert.ok(response.conversation, `a stored response names its conversation: ${JSON.stringify(response)}`);
      return response.conversation.id;
    };

    for (const upstream of UPSTREAMS) {
      const model = MODEL_OF[upstream];

      describe(`${upstream === 'native' ? 'native Responses upstream' : 'Anthropic (translated)'}`, () => {
        it('previous_response_id: each turn sends only itself, the upstream gets the whole history; retrieve shows the chain', async () => {
          reply(upstream, false, ['Hello', ' Ada.']);
          const first = await client.responses.create({ model, input: 'My name is Ada.', store: true });
          assertValidResponse(first);
          const conversation = conversationOf(first);
          assert.match(conversation, /^conv_/);
          assert.equal(first.output_text, 'Hello Ada.');
          assert.deepEqual(sentHistory(upstream), ['user:My name is Ada.']);

          reply(upstream, false, ['You are', ' Ada.']);
          const second = await client.responses.create({ model, input: 'Who am I?', previous_response_id: first.id });
          assertValidResponse(second);
          assert.equal(second.output_text, 'You are Ada.');
          assert.equal(second.previous_response_id, first.id);
          assert.equal(conversationOf(second), conversation, 'the same conversation');
          assert.deepEqual(sentHistory(upstream), ['user:My name is Ada.', 'assistant:Hello Ada.', 'user:Who am I?']);

          reply(upstream, false, ['Noted.']);
          const third = await client.responses.create({
            model,
            input: [{ role: 'user', content: [{ type: 'input_text', text: 'I like tea.' }] }],
            previous_response_id: second.id,
          });
          assert.deepEqual(sentHistory(upstream), [
            'user:My name is Ada.',
            'assistant:Hello Ada.',
            'user:Who am I?',
            'assistant:You are Ada.',
            'user:I like tea.',
          ]);

          const retrieved = await client.responses.retrieve(third.id);
          assertValidResponse(retrieved);
          assert.equal(retrieved.previous_response_id, second.id);
          assert.equal(conversationOf(retrieved), conversation);
          assert.equal(retrieved.output_text, 'Noted.');
          // input_items of a turn: its own input, not the history.
          const inputItems = await client.responses.inputItems.list(third.id);
          assert.deepEqual(
            inputItems.data.map((item) => (item.type === 'message' ? textOf(item.content) : item.type)),
            ['I like tea.'],
          );
        });

        it('conversation (the id the first response returned, as a string and as { id }): turns continue it, streamed too', async () => {
          reply(upstream, false, ['First', ' answer.']);
          const first = await client.responses.create({ model, input: 'First question', store: true });
          const conversation = conversationOf(first);

          reply(upstream, false, ['Second answer.']);
          const second = await client.responses.create({ model, input: 'Second question', conversation });
          assert.equal(conversationOf(second), conversation);
          // `store` is on the wire (the SDK's Response type does not declare it).
          assert.equal((second as unknown as Json)['store'], true, 'conversation alone stores');
          assert.deepEqual(sentHistory(upstream), ['user:First question', 'assistant:First answer.', 'user:Second question']);

          reply(upstream, true, ['Third', ' answer.']);
          const stream = await client.responses.create({ model, input: 'Third question', conversation: { id: conversation }, stream: true });
          const events: ResponseStreamEvent[] = [];
          for await (const event of stream) events.push(event);
          for (const event of events) assertValidEvent(event);
          const completed = events.at(-1);
          assert.ok(completed?.type === 'response.completed', events.map((e) => e.type).join(', '));
          const [message] = completed.response.output;
          assert.ok(message?.type === 'message');
          assert.equal(textOf(message.content), 'Third answer.');
          assert.deepEqual(completed.response.conversation, { id: conversation }, 'the conversation echoed in the snapshot');
          assert.deepEqual(sentHistory(upstream), [
            'user:First question',
            'assistant:First answer.',
            'user:Second question',
            'assistant:Second answer.',
            'user:Third question',
          ]);

          // The stream helper on a chain: finalResponse() of a turn continuing by previous_response_id.
          reply(upstream, true, ['Fourth.']);
          const final = await client.responses.stream({ model, input: 'Fourth question', previous_response_id: completed.response.id }).finalResponse();
          assert.equal(final.output_text, 'Fourth.');
          assert.equal(conversationOf(final), conversation);
          assert.equal(sentHistory(upstream).length, 7);
        });

        it('conversations.items.list: the turns in order, paged by the SDK (after, limit, order); another organization gets NotFoundError', async () => {
          reply(upstream, false, ['one back']);
          const first = await client.responses.create({ model, input: 'one', store: true });
          const conversation = conversationOf(first);
          reply(upstream, false, ['two back']);
          await client.responses.create({ model, input: 'two', conversation });

          const page = await client.conversations.items.list(conversation, { order: 'asc', limit: 3 });
          assert.equal(page.data.length, 3);
          assert.equal(page.has_more, true);
          const all: ConversationItem[] = [];
          for await (const item of client.conversations.items.list(conversation, { order: 'asc', limit: 3 })) all.push(item);
          assert.deepEqual(
            all.map((item) => (item.type === 'message' ? `${item.role}:${textOf(item.content)}` : item.type)),
            ['user:one', 'assistant:one back', 'user:two', 'assistant:two back'],
            'every item once, in order, across the pages',
          );
          for (const item of all) assert.ok(item.type === 'message' && item.id.length > 0 && item.status === 'completed');
          const newest = await client.conversations.items.list(conversation, { limit: 1 });
          assert.deepEqual(
            newest.data.map((item) => (item.type === 'message' ? textOf(item.content) : item.type)),
            ['two back'],
            'newest first by default',
          );

          const outsider = new OpenAI({ baseURL: env.baseURL, apiKey: TEST_KEYS.outsider, maxRetries: 0 });
          await assert.rejects(outsider.conversations.items.list(conversation), NotFoundError);
          await assert.rejects(outsider.responses.create({ model, input: 'x', conversation }), NotFoundError);
        });
      });
    }

    it('the SDK raises the stateful errors: NotFoundError previous_response_not_found, BadRequestError mutually_exclusive_parameters; nothing sent upstream', async () => {
      scriptText(env, 'native', false, ['kept']);
      const stored = await client.responses.create({ model: MODEL_OF.native, input: 'keep', store: true });
      env.openai.requests.length = 0;
      await assert.rejects(
        client.responses.create({ model: MODEL_OF.native, input: 'next', previous_response_id: 'resp_0123456789abcdef0123456789abcdef' }),
        (err: unknown) => {
          assert.ok(err instanceof NotFoundError, String(err));
          assert.equal(err.code, 'previous_response_not_found');
          assert.equal(err.param, 'previous_response_id');
          return true;
        },
      );
      await assert.rejects(
        client.responses.create({ model: MODEL_OF.native, input: 'next', previous_response_id: stored.id, conversation: conversationOf(stored) }),
        (err: unknown) => {
          assert.ok(err instanceof BadRequestError, String(err));
          assert.equal(err.code, 'mutually_exclusive_parameters');
          return true;
        },
      );
      assert.equal(env.openai.requests.length, 0);
    });
  });
}
