// The OpenAI SDK (the real `openai` package) against POST /v1/responses, GET /v1/responses/{id} and
// …/input_items, on a native Responses upstream and on the Anthropic provider (translated through the
// canonical model), on the embedded store with the inline queue and on PostgreSQL with BullMQ. What the
// SDK parses is what a user gets: the assertions are on the SDK's own objects and errors, and every
// response object and stream event is also checked against the Open Responses spec and our document.
import assert from 'node:assert/strict';
import OpenAI, { NotFoundError } from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { responsesStreamEvents } from '../../fixtures/upstreams/responses-wire';
import {
  anthropicTextEvents,
  API_KEY,
  DEPLOYMENTS,
  MODEL_OF,
  scriptText,
  startClientEnvironment,
  UPSTREAM_MODEL_OF,
  UPSTREAMS,
  type ClientEnvironment,
  type UpstreamKind,
} from './environment';
import { assertNumberedFromZero, assertValidEvent, assertValidResponse } from './wire-checks';

/** The event types of a one-message text reply, in the spec's order ("Events"), `deltas` text deltas. */
function textReplyEventTypes(deltas: number): string[] {
  return [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    ...Array<string>(deltas).fill('response.output_text.delta'),
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
  ];
}

for (const deployment of DEPLOYMENTS) {
  describe(`OpenAI SDK against /v1/responses (${deployment})`, function () {
    this.timeout(60_000);
    let env: ClientEnvironment;
    let client: OpenAI;

    before(async function () {
      this.timeout(180_000); // the embedded store's first start is slow on a busy machine
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

    /** The body the upstream of `upstream` received last. */
    const sentUpstream = (upstream: UpstreamKind): Record<string, unknown> => {
      const last = upstream === 'native' ? env.openai.requests.at(-1)?.json() : env.anthropic.requests.at(-1)?.body;
      assert.ok(last, `the ${upstream} upstream was called`);
      return last;
    };

    for (const upstream of UPSTREAMS) {
      const model = MODEL_OF[upstream];

      describe(`${upstream === 'native' ? 'native Responses upstream' : 'Anthropic (translated)'}`, () => {
        it('responses.create: the SDK reads output_text, usage, the echoed metadata and the id', async () => {
          const reply = scriptText(env, upstream, false, ['The answer', ' is 42.']);
          const response = await client.responses.create({ model, input: 'What is the answer?', metadata: { ticket: 'T-1', team: 'core' } });
          assertValidResponse(response);
          assert.equal(response.object, 'response');
          assert.equal(response.status, 'completed');
          assert.equal(response.output_text, 'The answer is 42.');
          assert.deepEqual(response.metadata, { ticket: 'T-1', team: 'core' });
          assert.equal(response.usage?.input_tokens, reply.usage.input_tokens);
          assert.equal(response.usage?.output_tokens, reply.usage.output_tokens);
          assert.equal(response.usage?.total_tokens, reply.usage.input_tokens + reply.usage.output_tokens);
          if (upstream === 'native') {
            assert.equal(response.id, reply.id, "a native upstream's response id is relayed");
          } else {
            assert.match(response.id, /^resp_[0-9a-f]{32}$/);
            assert.equal(response.model, model, 'the translated response names the model as the caller did');
          }
          const sent = sentUpstream(upstream);
          assert.equal(sent['model'], UPSTREAM_MODEL_OF[upstream]);
          assert.equal(sent['metadata'], undefined, 'metadata is echoed, never forwarded');
        });

        it('stream: true: the events in the spec order, numbered from 0 without gaps, each valid', async () => {
          const reply = scriptText(env, upstream, true, ['Hel', 'lo ', 'there']);
          const stream = await client.responses.create({ model, input: 'Say hello', stream: true, metadata: { run: 'r-7' } });
          const events: ResponseStreamEvent[] = [];
          for await (const event of stream) events.push(event);
          assert.deepEqual(
            events.map((e) => e.type),
            textReplyEventTypes(3),
          );
          assertNumberedFromZero(events);
          for (const event of events) assertValidEvent(event);
          const deltas = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta);
          assert.deepEqual(deltas, ['Hel', 'lo ', 'there']);
          const created = events[0]!;
          const completed = events.at(-1)!;
          assert.ok(created.type === 'response.created' && completed.type === 'response.completed');
          assert.equal(created.response.status, 'in_progress');
          assert.equal(completed.response.status, 'completed');
          assert.equal(completed.response.id, created.response.id, 'one response id for the whole stream');
          assert.deepEqual(completed.response.metadata, { run: 'r-7' }, 'metadata echoed in the snapshots');
          assert.deepEqual(created.response.metadata, { run: 'r-7' });
          assert.equal(completed.response.usage?.output_tokens, reply.usage.output_tokens);
          assert.equal(sentUpstream(upstream)['stream'], true);
        });

        it('the raw frames (asResponse()): text/event-stream, each with event:, id: equal to its sequence_number, and JSON data:', async () => {
          scriptText(env, upstream, true, ['Framed', ' events']);
          const raw = await client.responses.create({ model, input: 'Frame it', stream: true }).asResponse();
          assert.match(raw.headers.get('content-type') ?? '', /^text\/event-stream/);
          const frames = (await raw.text()).split('\n\n').filter((frame) => frame.trim() !== '');
          assert.equal(frames.length, textReplyEventTypes(2).length);
          frames.forEach((frame, n) => {
            const fields = Object.fromEntries(frame.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]));
            const data = JSON.parse(fields['data'] ?? '') as { type: string; sequence_number: number };
            assert.equal(fields['event'], data.type);
            assert.equal(fields['id'], String(n), `frame ${n} has id: ${n}`);
            assert.equal(data.sequence_number, n);
          });
        });

        it('the .stream() helper: typed delta events and finalResponse()', async () => {
          scriptText(env, upstream, true, ['Streamed', ' via', ' helper']);
          const stream = client.responses.stream({ model, input: 'Stream it' });
          const snapshots: string[] = [];
          stream.on('response.output_text.delta', (event) => snapshots.push(event.snapshot));
          const final = await stream.finalResponse();
          assert.deepEqual(snapshots, ['Streamed', 'Streamed via', 'Streamed via helper'], 'each delta found its output item and content part');
          assert.equal(final.status, 'completed');
          assert.equal(final.output_text, 'Streamed via helper');
          assert.ok(final.usage && final.usage.total_tokens > 0);
        });

        it('store: true: responses.retrieve and responses.inputItems.list', async () => {
          // A stored translated response is generated as a stream (its event log is kept for replay).
          const reply = scriptText(env, upstream, upstream === 'anthropic', ['Stored', ' reply']);
          const created = await client.responses.create({
            model,
            input: [{ role: 'user', content: [{ type: 'input_text', text: 'Keep this one' }] }],
            store: true,
            metadata: { kept: 'yes' },
          });
          // Stored under the gateway's own id, not the upstream's (which need not be unique).
          if (upstream === 'native') assert.notEqual(created.id, reply.id);
          assert.match(created.id, /^resp_[0-9a-f]{32}$/);
          const retrieved = await client.responses.retrieve(created.id);
          assertValidResponse(retrieved);
          assert.equal(retrieved.id, created.id);
          assert.equal(retrieved.status, 'completed');
          assert.equal(retrieved.output_text, 'Stored reply');
          assert.deepEqual(retrieved.metadata, { kept: 'yes' });
          assert.deepEqual(retrieved.usage, created.usage);

          const items = await client.responses.inputItems.list(created.id);
          assert.equal(items.data.length, 1);
          const [item] = items.data;
          assert.ok(item?.type === 'message');
          assert.equal(item.role, 'user');
          assert.match(item.id, /^msg_/);
          assert.deepEqual(item.content, [{ type: 'input_text', text: 'Keep this one' }]);
          assert.equal(items.has_more, false);
        });

        it('store: true, streamed: retrieve returns the completed response, and retrieve with stream: true replays its events', async () => {
          scriptText(env, upstream, true, ['Kept', ' streaming']);
          const stream = await client.responses.create({ model, input: 'Stream and keep', stream: true, store: true, metadata: { kept: 'streamed' } });
          const live: ResponseStreamEvent[] = [];
          for await (const event of stream) live.push(event);
          const completed = live.at(-1);
          assert.ok(completed?.type === 'response.completed');
          const id = completed.response.id;

          const retrieved = await client.responses.retrieve(id);
          assertValidResponse(retrieved);
          assert.equal(retrieved.status, 'completed');
          assert.equal(retrieved.output_text, 'Kept streaming');
          assert.deepEqual(retrieved.metadata, { kept: 'streamed' });

          const replay = await client.responses.retrieve(id, { stream: true });
          const replayed: ResponseStreamEvent[] = [];
          for await (const event of replay) replayed.push(event);
          assert.deepEqual(replayed, live, 'the replay is the stream the caller received');
        });

        it('store: false: the response is not retrievable (the SDK raises NotFoundError)', async () => {
          scriptText(env, upstream, false);
          const created = await client.responses.create({ model, input: 'Forget this', store: false });
          await assert.rejects(client.responses.retrieve(created.id), (err: unknown) => {
            assert.ok(err instanceof NotFoundError, String(err));
            assert.equal(err.status, 404);
            assert.equal(err.code, null, 'not_found carries no error.code');
            assert.match(err.message, new RegExp(created.id));
            return true;
          });
          await assert.rejects(client.responses.inputItems.list(created.id), NotFoundError);
        });

        it('a stream the upstream cuts ends with an error event: the SDK raises it, after the events received', async () => {
          if (upstream === 'native') {
            const chunks = responsesStreamEvents(UPSTREAM_MODEL_OF.native, ['Half', ' a', ' reply']);
            env.openai.script({ kind: 'sse', chunks, gapMs: 10, failAfter: 5 });
          } else {
            const events = anthropicTextEvents(['Half', ' a', ' reply']);
            env.anthropic.script({ kind: 'sse', events: events.slice(0, 4), endAbruptly: true });
          }
          const stream = await client.responses.create({ model, input: 'Tell me', stream: true });
          const received: ResponseStreamEvent[] = [];
          await assert.rejects(
            (async () => {
              for await (const event of stream) received.push(event);
            })(),
            (err: unknown) => {
              assert.ok(err instanceof OpenAI.APIError, String(err));
              assert.match(err.message, /upstream|stream/i);
              return true;
            },
          );
          assert.equal(received[0]?.type, 'response.created');
          assert.ok(received.some((e) => e.type === 'response.output_text.delta'));
          assertNumberedFromZero(received);
          for (const event of received) assertValidEvent(event);
        });
      });
    }

    it('a native upstream that numbers no events (an OpenAI-compatible server): the SDK gets them numbered from 0', async () => {
      const chunks = responsesStreamEvents(UPSTREAM_MODEL_OF.native, ['Un', 'numbered']).map((chunk) => chunk.replace(/,"sequence_number":\d+/, ''));
      assert.ok(chunks.every((chunk) => !chunk.includes('sequence_number')));
      env.openai.script({ kind: 'sse', chunks });
      const stream = await client.responses.create({ model: MODEL_OF.native, input: 'hi', stream: true });
      const events: ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      assert.deepEqual(
        events.map((e) => e.type),
        textReplyEventTypes(2),
      );
      assertNumberedFromZero(events);
      for (const event of events) assertValidEvent(event);
    });

    it('an unknown model is 404 model_not_found (NotFoundError), streamed or not, and nothing is sent upstream', async () => {
      for (const stream of [false, true]) {
        await assert.rejects(client.responses.create({ model: 'no-such-model', input: 'hi', stream }), (err: unknown) => {
          assert.ok(err instanceof NotFoundError, String(err));
          assert.equal(err.code, 'model_not_found');
          return true;
        });
      }
      assert.equal(env.openai.requests.length + env.anthropic.requests.length, 0);
    });
  });
}
