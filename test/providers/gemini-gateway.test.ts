// Gemini behind the real gateway, driven by the official `openai` client (a chat completion in JSON
// mode, a streamed tool call and its round trip, an upstream error) and the `@anthropic-ai/sdk`
// client (/v1/messages reaches Gemini through the canonical chat format), each asserted on both
// sides: what the fake Gemini API received, what the client got.
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startTestGateway, TEST_KEYS, type TestGateway } from '../helpers/gateway';
import {
  FAKE_GEMINI_KEY,
  geminiSignedCallEvents,
  geminiTextEvents,
  geminiTextReply,
  startFakeGemini,
  type FakeGemini,
} from '../fixtures/upstreams/gemini-upstream';

describe('gemini provider through the gateway (openai client)', () => {
  let fake: FakeGemini;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeGemini();
    gw = await startTestGateway({
      config: {
        providers: {
          demo: { type: 'demo' },
          gem: { type: 'gemini', baseUrl: fake.baseUrl, apiKey: FAKE_GEMINI_KEY, retries: { max: 0 } },
        },
        models: [
          { id: 'demo', provider: 'demo', created: 1700000000 },
          { id: 'gemini-flash', provider: 'gem', upstream: 'gemini-2.5-flash' },
        ],
      },
    });
    client = new OpenAI({ apiKey: TEST_KEYS.member, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('answers a JSON-mode chat completion with raw JSON content', async () => {
    fake.script({ kind: 'json', body: geminiTextReply('{"answer":42}') });
    const completion = await client.chat.completions.create({
      model: 'gemini-flash',
      messages: [
        { role: 'system', content: 'Reply in JSON.' },
        { role: 'user', content: 'The answer?' },
      ],
      response_format: { type: 'json_object' },
      temperature: 0,
    });
    const seen = fake.requests.at(-1)!;
    assert.equal(seen.path, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.deepEqual(seen.body, {
      contents: [{ role: 'user', parts: [{ text: 'The answer?' }] }],
      systemInstruction: { parts: [{ text: 'Reply in JSON.' }] },
      generationConfig: { temperature: 0, responseMimeType: 'application/json' },
    });
    assert.deepEqual(JSON.parse(completion.choices[0]!.message.content!), { answer: 42 });
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
    assert.equal(completion.usage?.total_tokens, 17);
  });

  it('streams a tool call the client can accumulate and send back', async () => {
    fake.script({ kind: 'sse', events: geminiSignedCallEvents() });
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } } },
    ];
    const stream = client.chat.completions.stream({
      model: 'gemini-flash',
      messages: [{ role: 'user', content: 'Look it up' }],
      tools,
      tool_choice: 'required',
      stream_options: { include_usage: true },
    });
    const final = await stream.finalChatCompletion();
    assert.equal(fake.requests.at(-1)!.query.get('alt'), 'sse');
    assert.deepEqual(fake.requests.at(-1)!.body['toolConfig'], { functionCallingConfig: { mode: 'ANY' } });
    const message = final.choices[0]!.message;
    assert.equal(final.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(message.tool_calls?.length, 1);
    const call = message.tool_calls![0]!;
    assert.equal(call.type, 'function');
    assert.deepEqual(call.type === 'function' ? call.function : null, { name: 'lookup', arguments: '{"q":"gateway"}' });
    assert.equal(final.usage?.total_tokens, 13);

    fake.script({ kind: 'json', body: geminiTextReply('Found it.') });
    const answer = await client.chat.completions.create({
      model: 'gemini-flash',
      messages: [
        { role: 'user', content: 'Look it up' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '{"hits":1}' },
      ],
      tools,
    });
    assert.equal(answer.choices[0]!.message.content, 'Found it.');
    const contents = fake.requests.at(-1)!.body['contents'] as { role: string; parts: Record<string, unknown>[] }[];
    assert.deepEqual(contents.slice(1), [
      { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: 'gateway' } }, thoughtSignature: 'U0lH' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { hits: 1 } } }] },
    ]);
  });

  it('passes an upstream error to the client with its status and message', async () => {
    fake.script({ kind: 'error', status: 400, body: { error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT' } } });
    await assert.rejects(client.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'x' }] }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.APIError);
      assert.equal(err.status, 400);
      assert.match(err.message, /Request contains an invalid argument\./);
      return true;
    });
  });

  it('serves /v1/messages from a Gemini model, streaming included (anthropic client)', async () => {
    const anthropic = new Anthropic({ apiKey: TEST_KEYS.member, baseURL: gw.url, maxRetries: 0 });
    fake.script({ kind: 'json', body: geminiTextReply('Hi from Gemini') });
    const message = await anthropic.messages.create({
      model: 'gemini-flash',
      max_tokens: 64,
      system: 'Be nice.',
      messages: [{ role: 'user', content: 'Hello' }],
    });
    assert.deepEqual(fake.requests.at(-1)!.body, {
      contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
      systemInstruction: { parts: [{ text: 'Be nice.' }] },
      generationConfig: { maxOutputTokens: 64 },
    });
    assert.deepEqual(message.content, [{ type: 'text', text: 'Hi from Gemini' }]);
    assert.equal(message.stop_reason, 'end_turn');

    fake.script({ kind: 'sse', events: geminiTextEvents(['Streamed ', 'reply']) });
    const stream = anthropic.messages.stream({ model: 'gemini-flash', max_tokens: 64, messages: [{ role: 'user', content: 'Stream it' }] });
    const final = await stream.finalMessage();
    assert.equal(fake.requests.at(-1)!.query.get('alt'), 'sse');
    assert.deepEqual(final.content, [{ type: 'text', text: 'Streamed reply' }]);
    assert.equal(final.usage.output_tokens, 2);
  });
});
