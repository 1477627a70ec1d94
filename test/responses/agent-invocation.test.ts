// Agents invoked as models (spec "POST /v1/responses" rule 7, "GET /v1/responses/{response_id}", "Response
// status"): `model: agent/<agent_id>` starts a run; the response returns at once, in progress, as
// `resp_run_<run_id>`, is polled to the run's end (output: the final assistant message) and streams the
// run live. Over HTTP against a fake chat-completions upstream that records what it was sent; on
// embedded/inline in this process, and on postgres/bullmq with the gateway and the worker executing
// the run as two real processes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Queue } from 'bullmq';
import { RUN_QUEUE_NAME } from '../../src/queue/bullmq-queue';
import { startRunUpstream, runUpstreamConfig, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { mergeConfig, startTestGateway, TEST_KEYS, type TestGateway } from '../helpers/gateway';
import { tempDir } from '../helpers/process';
import { createTestSchema } from '../helpers/store';
import { waitFor } from '../helpers/wait';
import { killAll, startProcess, writeProcessConfig } from '../queue/processes';
import { assertOpenResponsesEvent, assertOpenResponsesObject } from '../support/open-responses';
import {
  assertNestedError,
  assertResponsesFraming,
  assertStreamErrorEvent,
  jsonReply,
  post,
  SseFollower,
  typesOf,
  within,
  type SseFrame,
} from './http-helpers';

const REDIS_URL = process.env['REDIS_URL'] || 'redis://127.0.0.1:6379';
const ASKER = 'a9e00000-0000-4000-8000-000000000001';
const DOER = 'a9e00000-0000-4000-8000-000000000002';
const PRIVATE = 'a9e00000-0000-4000-8000-000000000003';
const NEEDY = 'a9e00000-0000-4000-8000-000000000004';

type Who = keyof typeof TEST_KEYS;
const auth = (who: Who = 'member'): Record<string, string> => ({ authorization: `Bearer ${TEST_KEYS[who]}` });
type Json = Record<string, unknown>;

function agentsPatch(upstream: RunUpstream): Json {
  const common = { organization: 'acme', createdBy: 'u-admin', model: 'fake', description: 'invoked as a model', timeoutSeconds: 30 };
  const shared = [{ user: 'u-member', permissions: ['view'] }];
  return {
    ...runUpstreamConfig(upstream),
    plugins: { auth: { enabled: true } },
    agents: [
      {
        ...common,
        id: ASKER,
        name: 'Asker',
        instructions: 'You are the asker agent.',
        sharedWith: shared,
        inputs: [
          { label: 'Question', required: true },
          { label: 'Style', required: false },
        ],
        steps: [{ name: 'Answer', prompt: 'Answer this: {{Question}}', objective: 'The question is answered.' }],
      },
      { ...common, id: DOER, name: 'Doer', instructions: 'You are the doer agent.', sharedWith: shared, steps: [{ prompt: 'Do the task above.' }] },
      { ...common, id: PRIVATE, name: 'Private', steps: [{ prompt: 'Secret.' }] },
      {
        ...common,
        id: NEEDY,
        name: 'Needy',
        sharedWith: shared,
        inputs: [
          { label: 'Invoice', required: true },
          { label: 'PO', required: true },
        ],
        steps: [{ prompt: 'Compare {{Invoice}} with {{PO}}.' }],
      },
    ],
  };
}

interface Target {
  url: string;
}

const invoke = (target: Target, body: Json, who: Who = 'member'): Promise<Response> => post(`${target.url}/v1/responses`, { input: 'hi', ...body }, auth(who));

async function getJson(target: Target, route: string, who: Who = 'member'): Promise<{ status: number; body: Json; text: string }> {
  const res = await fetch(`${target.url}${route}`, { headers: auth(who) });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Json, text };
}

async function pollResponse(target: Target, id: string, who: Who = 'member'): Promise<Json> {
  let body: Json = {};
  await waitFor(
    async () => {
      const reply = await getJson(target, `/v1/responses/${id}`, who);
      assert.equal(reply.status, 200, reply.text);
      body = reply.body;
      return body['status'] !== 'in_progress';
    },
    { what: `response ${id} finished`, timeoutMs: 20_000, intervalMs: 50 },
  );
  return body;
}

const runIdOf = (responseId: string): string => {
  const match = /^resp_run_([0-9a-f-]{36})$/.exec(responseId);
  assert.ok(match, `a resp_run_<run_id> id: ${responseId}`);
  return match[1]!;
};

function outputText(body: Json): string {
  const output = body['output'] as Json[];
  assert.equal(output.length, 1, `one output item, the final assistant message: ${JSON.stringify(output)}`);
  const item = output[0]!;
  assert.equal(item['type'], 'message');
  assert.equal(item['role'], 'assistant');
  const content = item['content'] as Json[];
  assert.equal(content[0]!['type'], 'output_text');
  return String(content[0]!['text']);
}

/** Every event valid by the Open Responses spec, framed as the spec's Events section says. */
function assertValidStream(frames: readonly SseFrame[]): void {
  assertResponsesFraming(frames);
  for (const frame of frames) assertOpenResponsesEvent(frame.data);
  assert.deepEqual(typesOf(frames).slice(0, 2), ['response.created', 'response.in_progress']);
}

const streamedText = (frames: readonly SseFrame[]): string =>
  frames
    .filter((f) => f.data['type'] === 'response.output_text.delta')
    .map((f) => String(f.data['delta']))
    .join('');

/** The checks both deployments run: a live stream of a run with a tool round, polled and replayed. */
function liveStreamChecks(ctx: () => { target: Target; upstream: RunUpstream }): void {
  it('stream: true streams the run live (function call, then the answer in deltas) and ends with response.completed; polling agrees', async () => {
    const { target, upstream } = ctx();
    const tag = `live-${randomBytes(3).toString('hex')}`;
    upstream.rule({ match: tag, judge: false, times: 1, toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' }] });
    upstream.rule({ match: tag, judge: false, reply: `The answer about ${tag} is forty-two, said slowly.`, chunk: { size: 4, gapMs: 40 } });
    const caller = new SseFollower(await invoke(target, { model: `agent/${ASKER}`, input: tag, stream: true }));
    assert.equal(caller.response.status, 200);
    assert.match(caller.response.headers.get('content-type') ?? '', /text\/event-stream/);
    await caller.until('the first delta', 8);
    const id = String((caller.frames[0]!.data['response'] as Json)['id']);
    // The run is still going while its deltas arrive: the stream is live, not a replay of a finished run.
    const polled = await getJson(target, `/v1/responses/${id}`);
    assert.equal(polled.body['status'], 'in_progress', 'still in progress mid-stream');
    await within(caller.finished, 20_000, 'the stream ends');
    assertValidStream(caller.frames);
    const types = typesOf(caller.frames);
    for (const type of [
      'response.output_item.added',
      'response.function_call_arguments.done',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
    ]) {
      assert.ok(types.includes(type), `${type} in ${types.join(', ')}`);
    }
    const answer = `The answer about ${tag} is forty-two, said slowly.`;
    assert.equal(streamedText(caller.frames), answer);
    const added = caller.frames.filter((f) => f.data['type'] === 'response.output_item.added').map((f) => (f.data['item'] as Json)['type']);
    assert.deepEqual(added, ['function_call', 'message'], 'the function call the run made, then its answer');
    const final = caller.frames[caller.frames.length - 1]!.data['response'] as Json;
    assert.equal(final['status'], 'completed');
    assert.equal(outputText(final), answer);

    const body = await pollResponse(target, id);
    assertOpenResponsesObject(body);
    assert.equal(body['status'], 'completed');
    assert.equal(outputText(body), answer, 'polling shows the final assistant message');
    const run = await getJson(target, `/v1/runs/${runIdOf(id)}`);
    assert.equal(run.body['status'], 'success');
    assert.equal(JSON.parse(String(run.body['result'])).parts[0].text, answer, 'the same message as the run result');

    // Full replay: absent and 0 give the whole log, a positive starting_after is refused.
    for (const query of ['?stream=true', '?stream=true&starting_after=0']) {
      const replay = new SseFollower(await fetch(`${target.url}/v1/responses/${id}${query}`, { headers: auth() }));
      await within(replay.finished, 10_000, `replay ${query}`);
      assertValidStream(replay.frames);
      assert.deepEqual(
        replay.frames.map((f) => f.data),
        caller.frames.map((f) => f.data),
        `replay ${query} is the stream the caller got`,
      );
    }
    const positive = await jsonReply(await fetch(`${target.url}/v1/responses/${id}?stream=true&starting_after=3`, { headers: auth() }));
    assertNestedError(positive, 400, null, 'starting_after');
    const header = await jsonReply(await fetch(`${target.url}/v1/responses/${id}?stream=true`, { headers: { ...auth(), 'last-event-id': '5' } }));
    assertNestedError(header, 400, null, 'Last-Event-ID');
  });

  it('a failing run: the stream ends with error then response.failed, and polling says failed', async () => {
    const { target, upstream } = ctx();
    const tag = `boom-${randomBytes(3).toString('hex')}`;
    upstream.rule({ match: tag, judge: false, status: 400 });
    const caller = new SseFollower(await invoke(target, { model: `agent/${ASKER}`, input: tag, stream: true }));
    await within(caller.finished, 20_000, 'the stream ends');
    assertValidStream(caller.frames);
    assert.deepEqual(typesOf(caller.frames).slice(-2), ['error', 'response.failed']);
    assertStreamErrorEvent(caller.frames[caller.frames.length - 2]!);
    const id = String((caller.frames[0]!.data['response'] as Json)['id']);
    const body = await pollResponse(target, id);
    assert.equal(body['status'], 'failed');
    assert.equal((body['error'] as Json)['code'], 'upstream_error');
    assert.deepEqual(body['output'], []);
    assert.equal((await getJson(target, `/v1/runs/${runIdOf(id)}`)).body['status'], 'failure');
  });
}

describe('agents invoked as models (model: agent/<agent_id>), embedded/inline', function () {
  this.timeout(60_000);
  let upstream: RunUpstream;
  let gw: TestGateway;

  before(async () => {
    upstream = await startRunUpstream();
    gw = await startTestGateway({ config: mergeConfig(agentsPatch(upstream), { queue: { driver: 'inline', concurrency: 4, leaseSeconds: 3 } }) });
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  describe('forbidden fields: 400 unsupported_parameter naming the field', () => {
    const cases: [string, unknown][] = [
      ['tools', [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }]],
      ['tool_choice', 'required'],
      ['tool_choice', 'none'],
      ['conversation', 'conv_abc'],
      ['previous_response_id', 'resp_abc'],
      ['background', true],
      ['temperature', 0.2],
      ['top_p', 0.5],
      ['presence_penalty', 0.1],
      ['frequency_penalty', 0.1],
      ['top_logprobs', 2],
      ['seed', 7],
    ];
    for (const [field, value] of cases) {
      it(`${field}: ${JSON.stringify(value)}`, async () => {
        const before = upstream.calls.length;
        const reply = await jsonReply(await invoke(gw, { model: `agent/${ASKER}`, [field]: value }));
        const error = assertNestedError(reply, 400, 'unsupported_parameter', field);
        assert.match(String(error['message']), new RegExp(`'${field}'`), 'the message names the field');
        assert.equal(upstream.calls.length, before, 'no run, no model call');
      });
    }

    it('an empty tools array and tool_choice auto are accepted', async () => {
      const reply = await jsonReply(await invoke(gw, { model: `agent/${ASKER}`, tools: [], tool_choice: 'auto', input: 'accepted' }));
      assert.equal(reply.status, 200, reply.text);
      await pollResponse(gw, String(reply.body['id']));
    });
  });

  it('an agent the caller cannot see, or that does not exist: 404 in the nested envelope', async () => {
    for (const [model, who] of [
      [`agent/${PRIVATE}`, 'member'],
      [`agent/${ASKER}`, 'outsider'],
      ['agent/a9e00000-0000-4000-8000-0000000000ff', 'member'],
      ['agent/not-a-uuid', 'member'],
    ] as const) {
      const reply = await jsonReply(await invoke(gw, { model }, who));
      const error = assertNestedError(reply, 404, 'model_not_found', 'model');
      assert.ok(String(error['message']).includes(model), reply.text);
    }
  });

  it('returns at once in progress as resp_run_<run_id>; the run is at /v1/runs/{runId}; polling ends completed with the final assistant message', async () => {
    const tag = `slow-${randomBytes(3).toString('hex')}`;
    upstream.rule({ match: tag, judge: false, delayMs: 800, reply: `Slow answer for ${tag}.` });
    const started = Date.now();
    const reply = await jsonReply(await invoke(gw, { model: `agent/${ASKER}`, input: tag, metadata: { ticket: 'T-1' } }));
    assert.equal(reply.status, 200, reply.text);
    assert.ok(Date.now() - started < 700, 'answered before the model did');
    assert.equal(reply.body['status'], 'in_progress');
    assert.equal(reply.body['object'], 'response');
    assert.equal(reply.body['model'], `agent/${ASKER}`);
    assert.deepEqual(reply.body['metadata'], { ticket: 'T-1' });
    assertOpenResponsesObject(reply.body);
    const id = String(reply.body['id']);
    const runId = runIdOf(id);
    const run = await getJson(gw, `/v1/runs/${runId}`);
    assert.equal(run.status, 200, run.text);
    assert.equal(run.body['agentId'], ASKER);
    assert.equal(run.body['status'], 'in_progress');

    const body = await pollResponse(gw, id);
    assert.equal(body['status'], 'completed');
    assert.equal(outputText(body), `Slow answer for ${tag}.`);
    assertOpenResponsesObject(body);
    const evals = await getJson(gw, `/v1/runs/${runId}/evals`);
    assert.equal(evals.status, 200, evals.text);
    assert.equal((evals.body['steps'] as Json[]).length, 1, 'the run is judged like any other');
    const items = await getJson(gw, `/v1/responses/${id}/input_items`);
    assert.equal(((items.body['data'] as Json[])[0]!['content'] as Json[])[0]!['text'], tag);
  });

  it('instructions are appended after the agent’s own prompt; a string input fills the first declared input', async () => {
    const tag = `instr-${randomBytes(3).toString('hex')}`;
    const reply = await jsonReply(await invoke(gw, { model: `agent/${ASKER}`, input: `What is ${tag}?`, instructions: 'Answer in French.' }));
    await pollResponse(gw, String(reply.body['id']));
    const call = upstream.stepCalls().find((c) => c.prompt.includes(tag));
    assert.ok(call, 'the step call reached the upstream');
    const messages = call.body['messages'] as Json[];
    assert.deepEqual(messages[0], { role: 'system', content: 'You are the asker agent.\n\nAnswer in French.' });
    assert.equal(call.prompt, `Answer this: What is ${tag}?`, 'the text went to {{Question}}, the first declared input');
  });

  it('array input: the user messages’ text joined; an agent without inputs gets it as the first user message', async () => {
    const tag = `arr-${randomBytes(3).toString('hex')}`;
    const input = [
      { role: 'user', content: `First ${tag}.` },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Second ' },
          { type: 'input_text', text: 'part.' },
        ],
      },
    ];
    const reply = await jsonReply(await invoke(gw, { model: `agent/${DOER}`, input }));
    assert.equal(reply.status, 200, reply.text);
    const body = await pollResponse(gw, String(reply.body['id']));
    assert.equal(body['status'], 'completed');
    const call = upstream.stepCalls().find((c) => JSON.stringify(c.body).includes(tag));
    assert.ok(call);
    assert.deepEqual(call.body['messages'], [
      { role: 'system', content: 'You are the doer agent.' },
      { role: 'user', content: `First ${tag}.\n\nSecond part.` },
      { role: 'user', content: 'Do the task above.' },
    ]);
  });

  it('input that is not the caller’s text is a 400 naming it; an agent needing more inputs is a 422 naming them', async () => {
    const image = [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] }];
    assertNestedError(await jsonReply(await invoke(gw, { model: `agent/${ASKER}`, input: image })), 400, 'invalid_request', 'input[0].content[0]');
    const system = [{ role: 'system', content: 'x' }];
    assertNestedError(await jsonReply(await invoke(gw, { model: `agent/${ASKER}`, input: system })), 400, 'invalid_request', 'input[0].role');
    const call = [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }];
    assertNestedError(await jsonReply(await invoke(gw, { model: `agent/${ASKER}`, input: call })), 400, 'invalid_request', 'input[0].type');
    const needy = await jsonReply(await invoke(gw, { model: `agent/${NEEDY}` }));
    const error = assertNestedError(needy, 422, 'missing_inputs');
    assert.match(String(error['message']), /'PO'/);
  });

  it('the response of a run the caller cannot see is the 404 of an unknown response', async () => {
    const reply = await jsonReply(await invoke(gw, { model: `agent/${ASKER}`, input: 'mine' }));
    const id = String(reply.body['id']);
    await pollResponse(gw, id);
    for (const who of ['outsider', 'viewer'] as const) {
      const other = await getJson(gw, `/v1/responses/${id}`, who);
      assert.equal(other.status, 404, `${who}: ${other.text}`);
      assert.equal((other.body['error'] as Json)['code'] ?? null, null);
      assert.equal((await fetch(`${gw.url}/v1/responses/${id}?stream=true`, { headers: auth(who) })).status, 404);
    }
    assert.equal((await getJson(gw, `/v1/responses/${id}`, 'admin')).status, 200, 'an organization admin sees every run');
  });

  it('a run cancelled mid-stream ends the stream with error then response.failed', async () => {
    const tag = `cancel-${randomBytes(3).toString('hex')}`;
    upstream.rule({ match: tag, judge: false, reply: 'x'.repeat(400), chunk: { size: 2, gapMs: 30 } });
    const caller = new SseFollower(await invoke(gw, { model: `agent/${ASKER}`, input: tag, stream: true }));
    await caller.until('some deltas', 10);
    const id = String((caller.frames[0]!.data['response'] as Json)['id']);
    const cancelled = await post(`${gw.url}/v1/runs/${runIdOf(id)}/cancel`, { reason: 'changed my mind' }, auth('admin'));
    assert.equal(cancelled.status, 200, await cancelled.text());
    await within(caller.finished, 10_000, 'the stream ends after the cancel');
    assertValidStream(caller.frames);
    assert.deepEqual(typesOf(caller.frames).slice(-2), ['error', 'response.failed']);
    const body = await pollResponse(gw, id);
    assert.equal(body['status'], 'failed');
    assert.equal((body['error'] as Json)['code'], 'cancelled');
  });

  liveStreamChecks(() => ({ target: gw, upstream }));
});

describe('agents invoked as models on postgres/bullmq: the run executes on a worker process', function () {
  this.timeout(120_000);
  let upstream: RunUpstream;
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let prefix: string;
  let target: Target;

  before(async function () {
    this.timeout(120_000);
    upstream = await startRunUpstream();
    schema = await createTestSchema('agentmodel');
    prefix = `agwam${randomBytes(4).toString('hex')}`;
    const file = writeProcessConfig(
      path.join(tempDir('agw-agent-model-'), 'gateway.yaml'),
      mergeConfig(agentsPatch(upstream), {
        store: { driver: 'postgres', url: schema.url },
        queue: { driver: 'bullmq', redisUrl: REDIS_URL, prefix, concurrency: 4, leaseSeconds: 3 },
        logging: { level: 'info', accessLog: false },
      }),
    );
    const gateway = await startProcess('serve', file, 90_000);
    await startProcess('worker', file, 90_000);
    target = { url: gateway.url };
  });
  after(async () => {
    await killAll();
    const queue = new Queue(RUN_QUEUE_NAME, { connection: { url: REDIS_URL, maxRetriesPerRequest: null }, prefix });
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await upstream?.close();
    await schema?.drop();
  });

  liveStreamChecks(() => ({ target, upstream }));
});
