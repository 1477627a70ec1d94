// The Anthropic family end to end: the real gateway (auth, routes, SSE writer) in front of the fake
// Anthropic and Bedrock upstreams, driven by the official `openai` and `@anthropic-ai/sdk` clients.
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startTestGateway, TEST_KEYS, type TestGateway } from '../helpers/gateway';
import { jsonToolMessage, textThenToolEvents } from '../fixtures/upstreams/anthropic-events';
import { fakeAnthropicProviderConfig, startFakeAnthropic, type FakeAnthropic } from '../fixtures/upstreams/anthropic-upstream';
import { BEDROCK_TEST_CREDENTIALS, startFakeBedrock, type FakeBedrock } from '../fixtures/upstreams/bedrock-upstream';

describe('Anthropic family through the gateway (official SDKs)', function () {
  let anthropic: FakeAnthropic;
  let bedrock: FakeBedrock;
  let gw: TestGateway;
  let openai: OpenAI;
  let claude: Anthropic;

  before(async function () {
    this.timeout(90_000); // the embedded store's first start is slow on a busy machine
    anthropic = await startFakeAnthropic();
    bedrock = await startFakeBedrock();
    gw = await startTestGateway({
      config: {
        providers: {
          demo: { type: 'demo' },
          claude: fakeAnthropicProviderConfig(anthropic),
          bedrock: { type: 'bedrock-anthropic', baseUrl: bedrock.baseUrl, ...BEDROCK_TEST_CREDENTIALS, retries: { max: 0 } },
        },
        models: [
          // Organization "other" of the base config names the demo model; config check refuses unknown ids.
          { id: 'demo', provider: 'demo', created: 1700000000 },
          { id: 'claude-direct', provider: 'claude', upstream: 'claude-sonnet-4-20250514' },
          { id: 'claude-bedrock', provider: 'bedrock', upstream: 'anthropic.claude-3-5-sonnet-20240620-v1:0' },
        ],
      },
    });
    openai = new OpenAI({ apiKey: TEST_KEYS.member, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    claude = new Anthropic({ apiKey: TEST_KEYS.member, baseURL: gw.url, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await anthropic?.close();
    await bedrock?.close();
  });

  it('chat completions (openai SDK, streaming) over Anthropic: tool calls and usage arrive intact', async () => {
    anthropic.script({ kind: 'sse', events: textThenToolEvents(), chunkBytes: 6 });
    const stream = await openai.chat.completions.create({
      model: 'claude-direct',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Weather in SF?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }],
    });
    let content = '';
    let args = '';
    let name = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      content += choice?.delta.content ?? '';
      for (const call of choice?.delta.tool_calls ?? []) {
        name ||= call.function?.name ?? '';
        args += call.function?.arguments ?? '';
      }
      finish = choice?.finish_reason ?? finish;
    }
    assert.equal(content, 'Okay, let me check.');
    assert.equal(name, 'get_weather');
    assert.deepEqual(JSON.parse(args), { location: 'San Francisco, CA' });
    assert.equal(finish, 'tool_calls');
    assert.equal(usage?.completion_tokens, 89);
    assert.equal(anthropic.requests.at(-1)?.body['model'], 'claude-sonnet-4-20250514');
  });

  it('a client that leaves a translated stream aborts the upstream call (the request abort signal reaches the provider)', async () => {
    anthropic.script({ kind: 'hang', events: textThenToolEvents().slice(0, 3) });
    const gone = anthropic.clientGone();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEYS.member}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-direct', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    await gone;
  });

  it('Responses (openai SDK) with a reasoning effort and max_output_tokens: the limit is never raised, the thinking budget fits under it', async () => {
    // max_output_tokens bounds all generated tokens, reasoning included; the effort's budget (24576 for high) does not raise it.
    const reply = { ...jsonToolMessage({}), content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn' };
    anthropic.script({ kind: 'json', body: reply });
    const fits = await openai.responses
      .create({ model: 'claude-direct', input: 'Think hard.', reasoning: { effort: 'high' }, max_output_tokens: 10_000 })
      .withResponse();
    const fitted = anthropic.requests.at(-1)!.body;
    assert.equal(fitted['max_tokens'], 10_000);
    assert.deepEqual(fitted['thinking'], { type: 'enabled', budget_tokens: 9_999 });
    assert.equal(fits.response.headers.get('x-gateway-dropped-params'), null);
    // Below Anthropic's smallest budget (1024): no thinking rather than a larger limit, and said so.
    anthropic.script({ kind: 'json', body: reply });
    const { data: response, response: http } = await openai.responses
      .create({ model: 'claude-direct', input: 'Think hard.', reasoning: { effort: 'high' }, max_output_tokens: 1000 })
      .withResponse();
    const small = anthropic.requests.at(-1)!.body;
    assert.equal(small['max_tokens'], 1000);
    assert.equal(small['thinking'], undefined);
    assert.equal(response.max_output_tokens, 1000);
    assert.equal(http.headers.get('x-gateway-dropped-params'), 'reasoning');
    // The same on chat completions, named as the caller named it.
    anthropic.script({ kind: 'json', body: reply });
    const chat = await openai.chat.completions
      .create({ model: 'claude-direct', messages: [{ role: 'user', content: 'Think hard.' }], reasoning_effort: 'low', max_completion_tokens: 500 })
      .withResponse();
    assert.equal(anthropic.requests.at(-1)!.body['thinking'], undefined);
    assert.equal(chat.response.headers.get('x-gateway-dropped-params'), 'reasoning_effort');
  });

  it('chat completions JSON mode (openai SDK, not streaming): content is raw JSON without a fence', async () => {
    anthropic.script({ kind: 'json', body: jsonToolMessage({ answer: 42 }) });
    const completion = await openai.chat.completions.create({
      model: 'claude-direct',
      messages: [{ role: 'user', content: 'Answer in JSON' }],
      response_format: { type: 'json_object' },
    });
    assert.equal(completion.choices[0]?.message.content, '{"answer":42}');
    assert.equal(completion.choices[0]?.finish_reason, 'stop');
  });

  it('/v1/messages (Anthropic SDK, streaming) over Bedrock: translated both ways, tool_use block rebuilt', async () => {
    bedrock.script({ kind: 'stream', events: textThenToolEvents() });
    const stream = claude.messages.stream({
      model: 'claude-bedrock',
      max_tokens: 256,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Weather in SF?' }],
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } }],
    });
    const message = await stream.finalMessage();
    const seen = bedrock.requests.at(-1);
    assert.equal(seen?.signatureValid, true);
    assert.equal(seen?.body['anthropic_version'], 'bedrock-2023-05-31');
    assert.equal(seen?.body['system'], 'Be brief.');
    assert.equal(message.stop_reason, 'tool_use');
    const text = message.content.find((b) => b.type === 'text');
    const tool = message.content.find((b) => b.type === 'tool_use');
    assert.equal(text?.type === 'text' ? text.text : '', 'Okay, let me check.');
    assert.deepEqual(tool?.type === 'tool_use' ? tool.input : null, { location: 'San Francisco, CA' });
    assert.equal(message.usage.output_tokens, 89);
  });

  it("/v1/messages (Anthropic SDK) with an upstream error: the upstream status and message in Anthropic's envelope", async () => {
    anthropic.script({
      kind: 'error',
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 300000 tokens > 200000 maximum' } },
    });
    await assert.rejects(
      claude.messages.create({ model: 'claude-direct', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
      (err: unknown) => err instanceof Anthropic.APIError && err.status === 400 && /prompt is too long/.test(err.message),
    );
  });
});
