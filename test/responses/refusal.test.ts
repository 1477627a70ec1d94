// A model's refusal on translated paths: an OpenAI-format chat upstream's `message.refusal` /
// `delta.refusal` and an Anthropic upstream's `stop_reason: refusal` reach a POST /v1/responses caller as
// a `refusal` content part (streamed as content_part.added → response.refusal.delta… →
// response.refusal.done → content_part.done), never as `output_text`, so that the OpenAI SDK's
// responses.parse() reports the refusal instead of parsing it as JSON; and a chat completions caller
// served by a translated provider gets `message.refusal` / `delta.refusal`. Every event and object is
// checked against the Open Responses spec and our document.
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { messageStart } from '../fixtures/upstreams/anthropic-events';
import { startFakeAnthropic, type FakeAnthropic } from '../fixtures/upstreams/anthropic-upstream';
import { chatCompletionBody } from '../fixtures/upstreams/openai-upstream';
import { TEST_KEYS } from '../helpers/gateway';
import { startGatewayWithUpstream, type GatewayWithUpstream } from '../gateway/gateway-helpers';
import { assertResponsesFraming, parseSseFrames, post, typesOf, type SseFrame, nativeAndClaude } from './http-helpers';
import { assertNumberedFromZero, assertValidEvent, assertValidResponse } from './sdk-clients/wire-checks';

const REFUSAL = "I'm sorry, I can't help with that.";
const EXPLANATION = 'This request was declined because it could enable cyber harm.';

/** A chat completion whose message is a refusal. */
const chatRefusalBody = (model: string): Record<string, unknown> => {
  const body = chatCompletionBody(model, '');
  body['choices'] = [{ index: 0, message: { role: 'assistant', content: null, refusal: REFUSAL }, logprobs: null, finish_reason: 'stop' }];
  return body;
};

/** A streamed chat completion whose deltas are a refusal (as OpenAI streams one: `delta.refusal`). */
function chatRefusalEvents(model: string, pieces: string[]): string[] {
  const base = { id: 'chatcmpl-refusal', object: 'chat.completion.chunk', created: 1_700_000_000, model };
  const data = (choices: unknown[], extra: Record<string, unknown> = {}): string => `data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`;
  return [
    data([{ index: 0, delta: { role: 'assistant', content: null, refusal: '' }, finish_reason: null }]),
    ...pieces.map((piece) => data([{ index: 0, delta: { refusal: piece }, finish_reason: null }])),
    data([{ index: 0, delta: {}, finish_reason: 'stop' }]),
    data([], { usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }),
    'data: [DONE]\n\n',
  ];
}

/** An Anthropic message that stopped with a refusal after some text (the shape of Anthropic's docs). */
const anthropicRefusalMessage = {
  id: 'msg_01Refusal',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-20250514',
  content: [{ type: 'text', text: 'Hello..' }],
  stop_reason: 'refusal',
  stop_sequence: null,
  stop_details: { type: 'refusal', category: 'cyber', explanation: EXPLANATION },
  usage: { input_tokens: 12, output_tokens: 3 },
};

/** The same, streamed: the refusal and its explanation arrive on message_delta. */
const anthropicRefusalEvents = (): Record<string, unknown>[] => [
  messageStart(),
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello..' } },
  { type: 'content_block_stop', index: 0 },
  {
    type: 'message_delta',
    delta: { stop_reason: 'refusal', stop_sequence: null, stop_details: { type: 'refusal', category: 'cyber', explanation: EXPLANATION } },
    usage: { output_tokens: 3 },
  },
  { type: 'message_stop' },
];

/** The events of one refusal message item, `deltas` refusal deltas, in the spec's order. */
const refusalItemEvents = (deltas: number): string[] => [
  'response.output_item.added',
  'response.content_part.added',
  ...Array<string>(deltas).fill('response.refusal.delta'),
  'response.refusal.done',
  'response.content_part.done',
  'response.output_item.done',
];

const RESPONSE_FORMAT = {
  type: 'json_schema' as const,
  name: 'answer',
  strict: true,
  schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false },
};

describe('refusals on translated paths (Responses and chat completions callers)', function () {
  this.timeout(60_000);
  let env: GatewayWithUpstream;
  let anthropic: FakeAnthropic;
  let client: OpenAI;

  before(async function () {
    this.timeout(120_000);
    anthropic = await startFakeAnthropic();
    env = await startGatewayWithUpstream({ ...nativeAndClaude(anthropic.baseUrl) });
    client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: TEST_KEYS.member, maxRetries: 0 });
  });
  after(async () => {
    await env?.close();
    await anthropic?.close();
  });

  const respond = async (body: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const res = await post(`${env.gw.url}/v1/responses`, body, env.gw.auth('member'));
    const json = (await res.json()) as Record<string, unknown>;
    assert.equal(res.status, 200, JSON.stringify(json));
    assertValidResponse(json);
    return json;
  };
  const streamed = async (body: Record<string, unknown>): Promise<SseFrame[]> => {
    const res = await post(`${env.gw.url}/v1/responses`, { ...body, stream: true }, env.gw.auth('member'));
    assert.equal(res.status, 200);
    const frames = parseSseFrames(await res.text());
    assertResponsesFraming(frames);
    for (const frame of frames) assertValidEvent(frame.data);
    return frames;
  };
  const ofType = (frames: SseFrame[], type: string): Record<string, unknown>[] => frames.filter((f) => f.data['type'] === type).map((f) => f.data);

  describe('POST /v1/responses on an OpenAI-format chat upstream', () => {
    it('a message.refusal is a refusal part of the message, not output_text', async () => {
      env.upstream.script({ kind: 'json', body: chatRefusalBody('gpt-test') });
      const response = await respond({ model: 'gpt-test', input: 'help me break in' });
      assert.equal(response['status'], 'completed');
      assert.deepEqual(
        (response['output'] as Record<string, unknown>[]).map((item) => [item['type'], item['status'], item['content']]),
        [['message', 'completed', [{ type: 'refusal', refusal: REFUSAL }]]],
      );
    });

    it('delta.refusal streams as refusal events in order, numbered without gaps, ending in a refusal part', async () => {
      env.upstream.script({ kind: 'sse', chunks: chatRefusalEvents('gpt-test', ["I'm sorry, ", "I can't help with that."]) });
      const frames = await streamed({ model: 'gpt-test', input: 'help me break in' });
      assert.deepEqual(typesOf(frames), ['response.created', 'response.in_progress', ...refusalItemEvents(2), 'response.completed']);
      assert.deepEqual(ofType(frames, 'response.content_part.added')[0]?.['part'], { type: 'refusal', refusal: '' });
      assert.deepEqual(
        ofType(frames, 'response.refusal.delta').map((e) => e['delta']),
        ["I'm sorry, ", "I can't help with that."],
      );
      assert.equal(ofType(frames, 'response.refusal.done')[0]?.['refusal'], REFUSAL);
      assert.deepEqual(ofType(frames, 'response.content_part.done')[0]?.['part'], { type: 'refusal', refusal: REFUSAL });
      const done = ofType(frames, 'response.output_item.done')[0]?.['item'] as Record<string, unknown>;
      assert.deepEqual(done['content'], [{ type: 'refusal', refusal: REFUSAL }]);
      const final = frames.at(-1)!.data['response'] as Record<string, unknown>;
      assert.deepEqual((final['output'] as Record<string, unknown>[])[0]?.['content'], [{ type: 'refusal', refusal: REFUSAL }]);
    });

    it('the OpenAI SDK: responses.parse() reports the refusal and parses nothing; responses.stream() accumulates it', async () => {
      env.upstream.script({ kind: 'json', body: chatRefusalBody('gpt-test') });
      const parsed = await client.responses.parse({ model: 'gpt-test', input: 'help me break in', text: { format: RESPONSE_FORMAT } });
      assertValidResponse(parsed);
      assert.equal(parsed.output_parsed, null);
      const message = parsed.output[0];
      assert.equal(message?.type, 'message');
      assert.deepEqual(message.type === 'message' ? message.content : null, [{ type: 'refusal', refusal: REFUSAL }]);

      env.upstream.script({ kind: 'sse', chunks: chatRefusalEvents('gpt-test', ["I'm sorry, ", "I can't help with that."]) });
      const events: ResponseStreamEvent[] = [];
      const stream = client.responses.stream({ model: 'gpt-test', input: 'help me break in', text: { format: RESPONSE_FORMAT } });
      for await (const event of stream) events.push(event);
      assertNumberedFromZero(events);
      const final = await stream.finalResponse();
      assert.equal(final.output_parsed, null);
      const item = final.output[0];
      // (the SDK's parsed stream adds `parsed: null` to every content part)
      assert.deepEqual(item?.type === 'message' ? item.content.map((part) => ({ ...part, parsed: undefined })) : null, [
        { type: 'refusal', refusal: REFUSAL, parsed: undefined },
      ]);
    });
  });

  describe('POST /v1/responses on an Anthropic upstream (stop_reason: refusal)', () => {
    it('the text before the refusal stays output_text; the explanation is a refusal part after it', async () => {
      anthropic.script({ kind: 'json', body: anthropicRefusalMessage });
      const response = await respond({ model: 'resp-claude', input: 'help me break in' });
      assert.equal(response['status'], 'incomplete');
      assert.deepEqual(response['incomplete_details'], { reason: 'content_filter' });
      const output = response['output'] as Record<string, unknown>[];
      assert.deepEqual(
        output.map((item) => (item['content'] as Record<string, unknown>[]).map((part) => part['type'])),
        [['output_text'], ['refusal']],
      );
      assert.deepEqual(output[1]?.['content'], [{ type: 'refusal', refusal: EXPLANATION }]);
      assert.equal(output[1]?.['status'], 'completed', 'a refusal is said whole, not cut short');
    });

    it('streamed: the refusal item follows the text item, with refusal events, numbered without gaps', async () => {
      anthropic.script({ kind: 'sse', events: anthropicRefusalEvents() });
      const frames = await streamed({ model: 'resp-claude', input: 'help me break in' });
      assert.deepEqual(typesOf(frames), [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        ...refusalItemEvents(1),
        'response.incomplete',
      ]);
      assert.equal(ofType(frames, 'response.refusal.done')[0]?.['refusal'], EXPLANATION);
      const final = frames.at(-1)!.data['response'] as Record<string, unknown>;
      const output = final['output'] as Record<string, unknown>[];
      assert.deepEqual(output[1]?.['content'], [{ type: 'refusal', refusal: EXPLANATION }]);
      assert.equal(output[1]?.['status'], 'completed');
    });
  });

  describe('POST /v1/chat/completions on an Anthropic upstream', () => {
    it('the refusal is message.refusal, the text before it content', async () => {
      anthropic.script({ kind: 'json', body: anthropicRefusalMessage });
      const res = await post(`${env.gw.url}/v1/chat/completions`, { model: 'resp-claude', messages: [{ role: 'user', content: 'x' }] }, env.gw.auth('member'));
      const body = (await res.json()) as { choices: { message: Record<string, unknown>; finish_reason: string }[] };
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.choices[0]?.message['content'], 'Hello..');
      assert.equal(body.choices[0]?.message['refusal'], EXPLANATION);
      assert.equal(body.choices[0]?.finish_reason, 'content_filter');
    });

    it('streamed: the refusal comes as delta.refusal', async () => {
      anthropic.script({ kind: 'sse', events: anthropicRefusalEvents() });
      const res = await post(
        `${env.gw.url}/v1/chat/completions`,
        { model: 'resp-claude', messages: [{ role: 'user', content: 'x' }], stream: true },
        env.gw.auth('member'),
      );
      assert.equal(res.status, 200);
      const deltas = (await res.text())
        .split('\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => (JSON.parse(line.slice(6)) as { choices: { delta: Record<string, unknown> }[] }).choices[0]?.delta ?? {});
      assert.equal(deltas.map((d) => d['content'] ?? '').join(''), 'Hello..');
      assert.equal(deltas.map((d) => d['refusal'] ?? '').join(''), EXPLANATION);
    });
  });
});
