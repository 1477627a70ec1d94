// Streaming POST /v1/responses over HTTP (spec "Events"): on a native upstream (relayed) and a
// translated one (Anthropic, built from canonical stream parts) every frame has `event:` equal to its
// payload type and `id:` equal to its sequence_number, numbered from 0 without gaps, in the spec's
// order; a failure after the first byte (the upstream cut, garbage, a stream that just stops) is an
// `error` event `{error: {message, type, code}}` followed by `response.failed`, and every stream ends
// with a terminal event.
import assert from 'node:assert/strict';
import { textThenToolEvents } from '../fixtures/upstreams/anthropic-events';
import { startFakeAnthropic, type FakeAnthropic } from '../fixtures/upstreams/anthropic-upstream';
import { responsesStreamEvents } from '../fixtures/upstreams/responses-wire';
import { startGatewayWithUpstream, type GatewayWithUpstream } from '../gateway/gateway-helpers';
import { assertResponsesFraming, assertStreamErrorEvent, parseSseFrames, post, typesOf, type SseFrame, nativeAndClaude } from './http-helpers';

/** The spec's order of a message item then a function call item. */
const TEXT_THEN_CALL = [
  'response.created',
  'response.in_progress',
  'response.output_item.added',
  'response.content_part.added',
  'response.output_text.delta',
  'response.output_text.delta',
  'response.output_text.done',
  'response.content_part.done',
  'response.output_item.done',
  'response.output_item.added',
  'response.function_call_arguments.delta',
  'response.function_call_arguments.done',
  'response.output_item.done',
  'response.completed',
];

/** Consecutive deltas of one kind collapsed, so the order can be compared whatever the chunking. */
function shape(types: readonly string[]): string[] {
  return types.filter((type, i) => !(type.endsWith('.delta') && types[i - 1] === type));
}

function failedSnapshot(frames: readonly SseFrame[]): Record<string, unknown> {
  const last = frames[frames.length - 1]!;
  assert.equal(last.data['type'], 'response.failed');
  const response = last.data['response'] as Record<string, unknown>;
  assert.equal(response['status'], 'failed');
  return response;
}

describe('POST /v1/responses streaming: framing, order, failures after the first byte', function () {
  this.timeout(60_000);
  let env: GatewayWithUpstream;
  let anthropic: FakeAnthropic;

  before(async function () {
    this.timeout(120_000);
    anthropic = await startFakeAnthropic();
    env = await startGatewayWithUpstream({
      ...nativeAndClaude(anthropic.baseUrl),
    });
  });
  after(async () => {
    await env?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    env.upstream.requests.length = 0;
    anthropic.requests.length = 0;
  });

  const stream = async (model: string): Promise<{ res: Response; frames: SseFrame[] }> => {
    const res = await post(`${env.gw.url}/v1/responses`, { model, input: 'weather in SF?', stream: true }, env.gw.auth('member'));
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    return { res, frames: parseSseFrames(await res.text()) };
  };

  describe('native upstream (relayed)', () => {
    it('every event framed and numbered from 0, in the spec’s order, ending with response.completed', async () => {
      env.upstream.script({
        kind: 'sse',
        chunks: responsesStreamEvents('resp-native', ['Hel', 'lo'], { functionCall: { name: 'get_weather', arguments: '{"city":"SF"}' } }),
      });
      const { frames } = await stream('resp-native');
      assertResponsesFraming(frames);
      assert.deepEqual(shape(typesOf(frames)), shape(TEXT_THEN_CALL));
      const completed = frames[frames.length - 1]!.data['response'] as Record<string, unknown>;
      assert.equal(completed['status'], 'completed');
    });

    it('numbered by the gateway: an upstream whose numbering starts elsewhere and skips still gives 0, 1, 2, …', async () => {
      const chunks = responsesStreamEvents('resp-native', ['a', 'b', 'c']).map((chunk, i) =>
        chunk.replace(/"sequence_number":\d+/, `"sequence_number":${10 + i * 3}`),
      );
      env.upstream.script({ kind: 'sse', chunks });
      const { frames } = await stream('resp-native');
      assertResponsesFraming(frames);
      assert.equal(frames.length, chunks.length);
    });

    it('the upstream connection cut mid-stream: error then response.failed, the stream ends', async () => {
      // created, in_progress, item added, part added, first delta: then the connection drops.
      env.upstream.script({ kind: 'sse', chunks: responsesStreamEvents('resp-native', ['one', 'two', 'three']), failAfter: 5, gapMs: 5 });
      const { frames } = await stream('resp-native');
      assertResponsesFraming(frames);
      assert.deepEqual(typesOf(frames).slice(0, 5), TEXT_THEN_CALL.slice(0, 5), 'what came before the cut is relayed');
      assertStreamErrorEvent(frames[frames.length - 2]!);
      failedSnapshot(frames);
    });

    it('a garbage event (not JSON) mid-stream: error then response.failed', async () => {
      const chunks = responsesStreamEvents('resp-native', ['one', 'two']);
      chunks.splice(4, 0, 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta", this is not json\n\n');
      env.upstream.script({ kind: 'sse', chunks });
      const { frames } = await stream('resp-native');
      assertResponsesFraming(frames);
      assert.equal(frames.length, 6, `4 relayed, then the failure: ${typesOf(frames).join(', ')}`);
      assertStreamErrorEvent(frames[4]!);
      failedSnapshot(frames);
    });

    it('an event split over several data lines (legal SSE) is relayed whole, as data lines', async () => {
      const chunks = responsesStreamEvents('resp-native', ['one', 'two']);
      const at = chunks.findIndex((chunk) => chunk.includes('"response.output_text.delta"'));
      chunks[at] = chunks[at]!.replace(',"delta":', ',\ndata: "delta":');
      assert.ok(chunks[at]!.includes('\ndata: "delta"'), 'the fixture splits the event');
      env.upstream.script({ kind: 'sse', chunks });
      const { frames } = await stream('resp-native');
      assertResponsesFraming(frames);
      const deltas = frames.filter((frame) => frame.data['type'] === 'response.output_text.delta').map((frame) => frame.data['delta']);
      assert.deepEqual(deltas, ['one', 'two']);
      assert.equal(frames[frames.length - 1]!.data['type'], 'response.completed');
    });

    it('an event without a type: error then response.failed', async () => {
      const chunks = responsesStreamEvents('resp-native', ['one']);
      chunks.splice(3, 0, 'data: {"sequence_number":3,"delta":"x"}\n\n');
      env.upstream.script({ kind: 'sse', chunks });
      const { frames } = await stream('resp-native');
      assertResponsesFraming(frames);
      assertStreamErrorEvent(frames[frames.length - 2]!);
    });

    it('an upstream stream that ends cleanly before its terminal event: error then response.failed', async () => {
      const chunks = responsesStreamEvents('resp-native', ['one', 'two']).slice(0, -1);
      env.upstream.script({ kind: 'sse', chunks });
      const { frames } = await stream('resp-native');
      assertResponsesFraming(frames);
      assert.equal(frames.length, chunks.length + 2);
      assertStreamErrorEvent(frames[frames.length - 2]!);
      const failed = failedSnapshot(frames);
      assert.equal((failed['output'] as unknown[]).length, 1, 'the item completed before the end is in the failed response');
    });
  });

  describe('translated upstream (Anthropic)', () => {
    it('every event framed and numbered from 0, in the spec’s order, ending with response.completed', async () => {
      anthropic.script({ kind: 'sse', events: textThenToolEvents() });
      const { frames } = await stream('resp-claude');
      assertResponsesFraming(frames);
      assert.deepEqual(shape(typesOf(frames)), shape(TEXT_THEN_CALL));
      const deltas = frames.filter((f) => f.data['type'] === 'response.output_text.delta').map((f) => f.data['delta']);
      assert.equal(deltas.join(''), 'Okay, let me check.');
      const args = frames.filter((f) => f.data['type'] === 'response.function_call_arguments.delta').map((f) => f.data['delta']);
      assert.equal(JSON.stringify(JSON.parse((args as string[]).join(''))), '{"location":"San Francisco, CA"}');
      const completed = frames[frames.length - 1]!.data['response'] as Record<string, unknown>;
      assert.equal(completed['status'], 'completed');
    });

    it('max_tokens hit mid-call: the cut function_call is done incomplete (the message before it completed), then response.incomplete', async () => {
      // The text, then a tool call whose input stops mid-JSON; Anthropic closes the block, then says max_tokens.
      const events = textThenToolEvents().slice(0, 10);
      events.push(
        { type: 'content_block_stop', index: 1 },
        { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 16 } },
        { type: 'message_stop' },
      );
      anthropic.script({ kind: 'sse', events });
      const { frames } = await stream('resp-claude');
      assertResponsesFraming(frames);
      const done = frames.filter((f) => f.data['type'] === 'response.output_item.done').map((f) => f.data['item'] as Record<string, unknown>);
      assert.deepEqual(
        done.map((item) => [item['type'], item['status']]),
        [
          ['message', 'completed'],
          ['function_call', 'incomplete'],
        ],
      );
      assert.equal(done[1]!['arguments'], '{"location": "San Fra');
      const last = frames[frames.length - 1]!.data;
      assert.equal(last['type'], 'response.incomplete');
      const response = last['response'] as Record<string, unknown>;
      assert.deepEqual(response['incomplete_details'], { reason: 'max_output_tokens' });
      assert.deepEqual(
        (response['output'] as Record<string, unknown>[]).map((item) => item['status']),
        ['completed', 'incomplete'],
      );

      // Not streamed: the same object.
      anthropic.script({
        kind: 'json',
        body: {
          id: 'msg_01Cut',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-20250514',
          content: [{ type: 'text', text: 'Hello wor' }],
          stop_reason: 'max_tokens',
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 5 },
        },
      });
      const res = await post(`${env.gw.url}/v1/responses`, { model: 'resp-claude', input: 'hi', max_output_tokens: 5 }, env.gw.auth('member'));
      const body = (await res.json()) as Record<string, unknown>;
      assert.equal(body['status'], 'incomplete');
      assert.deepEqual(
        (body['output'] as Record<string, unknown>[]).map((item) => [item['type'], item['status']]),
        [['message', 'incomplete']],
      );
    });

    it('created_at is when the gateway made the response, streamed or not (not the upstream reply’s created)', async () => {
      // The demo provider's replies carry a fixed created (1700000000, November 2023).
      const before = Math.floor(Date.now() / 1000);
      const res = await post(`${env.gw.url}/v1/responses`, { model: 'demo', input: 'hi' }, env.gw.auth('member'));
      const body = (await res.json()) as Record<string, unknown>;
      const { frames } = await stream('demo');
      const streamed = frames[frames.length - 1]!.data['response'] as Record<string, unknown>;
      const after = Math.floor(Date.now() / 1000);
      for (const response of [body, streamed]) {
        assert.equal(response['status'], 'completed');
        const createdAt = response['created_at'] as number;
        assert.ok(createdAt >= before && createdAt <= after, `created_at ${createdAt} is now (${before}..${after})`);
        assert.ok(createdAt <= (response['completed_at'] as number), 'created before completed');
      }
    });

    it('the Anthropic stream cut mid-way: error then response.failed, the stream ends', async () => {
      // Up to the first text delta, then the connection is destroyed.
      anthropic.script({ kind: 'sse', events: textThenToolEvents().slice(0, 4), endAbruptly: true });
      const { frames } = await stream('resp-claude');
      assertResponsesFraming(frames);
      assert.ok(typesOf(frames).includes('response.output_text.delta'), `the text before the cut was streamed: ${typesOf(frames).join(', ')}`);
      assertStreamErrorEvent(frames[frames.length - 2]!);
      failedSnapshot(frames);
    });

    it('an Anthropic error event mid-stream: error then response.failed', async () => {
      anthropic.script({
        kind: 'sse',
        events: [...textThenToolEvents().slice(0, 4), { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
      });
      const { frames } = await stream('resp-claude');
      assertResponsesFraming(frames);
      assertStreamErrorEvent(frames[frames.length - 2]!);
      failedSnapshot(frames);
    });
  });
});
