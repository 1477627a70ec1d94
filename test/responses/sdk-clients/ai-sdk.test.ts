// The Vercel AI SDK (the real `ai` and `@ai-sdk/openai` packages) against the gateway: `createOpenAI`
// with the gateway's URL, then the default `openai(model)`, which speaks the Responses API, with
// generateText and streamText, and a tool round trip (the model's function call, the tool run by the
// SDK, its result sent back, the model's answer), on a native Responses upstream and on Anthropic, on
// both deployments. Both packages are ES modules only: they are loaded with import().
import assert from 'node:assert/strict';
import { textMessage, textThenToolEvents } from '../../fixtures/upstreams/anthropic-events';
import { responsesBody, responsesStreamEvents } from '../../fixtures/upstreams/responses-wire';
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
} from './environment';

type Ai = typeof import('ai', { with: { 'resolution-mode': 'import' } });
type OpenAiProvider = ReturnType<(typeof import('@ai-sdk/openai', { with: { 'resolution-mode': 'import' } }))['createOpenAI']>;

interface Weather {
  location: string;
}

for (const deployment of DEPLOYMENTS) {
  describe(`Vercel AI SDK openai(model) against /v1/responses (${deployment})`, function () {
    this.timeout(60_000);
    let env: ClientEnvironment;
    let ai: Ai;
    let openai: OpenAiProvider;
    /** Every call of the weather tool the SDK ran. */
    let toolCalls: Weather[];
    /** The Responses request bodies the SDK sent the gateway. */
    let sentByTheSdk: Record<string, unknown>[];

    before(async function () {
      this.timeout(180_000);
      env = await startClientEnvironment(deployment);
      ai = await import('ai');
      const { createOpenAI } = await import('@ai-sdk/openai');
      // The SDK's own fetch, recording the bodies it sends (the requests go to the gateway as they are).
      const recording: typeof fetch = async (input, init) => {
        if (typeof init?.body === 'string') sentByTheSdk.push(JSON.parse(init.body) as Record<string, unknown>);
        return fetch(input, init);
      };
      openai = createOpenAI({ baseURL: env.baseURL, apiKey: API_KEY, fetch: recording });
    });
    after(async () => {
      await env?.close();
    });
    beforeEach(() => {
      env.openai.requests.length = 0;
      env.anthropic.requests.length = 0;
      toolCalls = [];
      sentByTheSdk = [];
    });

    const tools = () => ({
      get_weather: ai.tool({
        description: 'Current weather for a location',
        inputSchema: ai.jsonSchema<Weather>({
          type: 'object',
          properties: { location: { type: 'string' } },
          required: ['location'],
          additionalProperties: false,
        }),
        execute: async ({ location }: Weather) => {
          toolCalls.push({ location });
          return { location, sky: 'sunny', celsius: 21 };
        },
      }),
    });

    for (const upstream of UPSTREAMS) {
      const model = MODEL_OF[upstream];

      describe(upstream === 'native' ? 'native Responses upstream' : 'Anthropic (translated)', () => {
        it('generateText: the text, the usage, the finish reason and the response id', async () => {
          const reply = scriptText(env, upstream, false, ['Bonjour', ' from the gateway.']);
          const result = await ai.generateText({ model: openai(model), prompt: 'Say hello' });
          assert.equal(result.text, 'Bonjour from the gateway.');
          assert.equal(result.finishReason, 'stop');
          assert.equal(result.usage.inputTokens, reply.usage.input_tokens);
          assert.equal(result.usage.outputTokens, reply.usage.output_tokens);
          assert.equal(result.usage.totalTokens, reply.usage.input_tokens + reply.usage.output_tokens);
          assert.match(result.response.id, /^resp_/);
          if (upstream === 'native') assert.equal(result.response.id, reply.id);
          assert.deepEqual(result.warnings, []);
        });

        it('streamText: the text deltas in order, then the usage and the finish reason', async () => {
          const reply = scriptText(env, upstream, true, ['Streaming', ' through', ' the gateway.']);
          const result = ai.streamText({ model: openai(model), prompt: 'Stream a sentence' });
          const deltas: string[] = [];
          for await (const delta of result.textStream) deltas.push(delta);
          assert.deepEqual(deltas, ['Streaming', ' through', ' the gateway.']);
          assert.equal(await result.finishReason, 'stop');
          const usage = await result.usage;
          assert.equal(usage.inputTokens, reply.usage.input_tokens);
          assert.equal(usage.outputTokens, reply.usage.output_tokens);
          assert.equal((await result.response).id.startsWith('resp_'), true);
        });
      });
    }

    describe('a tool round trip', () => {
      it('native upstream, generateText: the function call, the tool run, its result sent back, the answer', async () => {
        const model = UPSTREAM_MODEL_OF.native;
        const call = { name: 'get_weather', arguments: '{"location":"Brest"}', callId: 'call_brest1' };
        env.openai.script(
          { kind: 'json', body: responsesBody(model, 'Checking the weather.', { id: 'resp_tool_1', functionCall: call }) },
          { kind: 'json', body: responsesBody(model, 'Sunny in Brest, 21 °C.', { id: 'resp_tool_2' }) },
        );
        const result = await ai.generateText({ model: openai(MODEL_OF.native), prompt: 'Weather in Brest?', tools: tools(), stopWhen: ai.stepCountIs(3) });
        assert.deepEqual(toolCalls, [{ location: 'Brest' }]);
        assert.equal(result.steps.length, 2);
        assert.equal(result.text, 'Sunny in Brest, 21 °C.');
        assert.equal(result.steps[0]?.finishReason, 'tool-calls');
        const [first, second] = env.openai.requests.map((r) => r.json());
        assert.deepEqual(
          (first?.['tools'] as Record<string, unknown>[]).map((t) => t['name']),
          ['get_weather'],
        );
        const followUp = second?.['input'] as Record<string, unknown>[];
        assert.deepEqual(
          followUp.filter((item) => item['type'] === 'function_call' || item['type'] === 'function_call_output'),
          [
            { type: 'function_call', call_id: 'call_brest1', name: 'get_weather', arguments: '{"location":"Brest"}' },
            { type: 'function_call_output', call_id: 'call_brest1', output: JSON.stringify({ location: 'Brest', sky: 'sunny', celsius: 21 }) },
          ],
        );
      });

      it('native upstream, streamText: the streamed function call, the tool run, the streamed answer', async () => {
        const model = UPSTREAM_MODEL_OF.native;
        const call = { name: 'get_weather', arguments: '{"location":"Brest"}', callId: 'call_brest2' };
        env.openai.script(
          { kind: 'sse', chunks: responsesStreamEvents(model, ['Checking.'], { id: 'resp_tool_3', functionCall: call }) },
          { kind: 'sse', chunks: responsesStreamEvents(model, ['Sunny', ' in Brest.'], { id: 'resp_tool_4' }) },
        );
        const result = ai.streamText({ model: openai(MODEL_OF.native), prompt: 'Weather in Brest?', tools: tools(), stopWhen: ai.stepCountIs(3) });
        const parts: string[] = [];
        for await (const part of result.fullStream) parts.push(part.type);
        assert.deepEqual(toolCalls, [{ location: 'Brest' }]);
        assert.equal(await result.text, 'Sunny in Brest.');
        assert.ok(parts.includes('tool-call') && parts.includes('tool-result'), parts.join(' '));
        assert.ok(!parts.includes('error') && !parts.includes('tool-error'), parts.join(' '));
        const followUp = env.openai.requests[1]?.json()['input'] as Record<string, unknown>[];
        assert.ok(followUp.some((item) => item['type'] === 'function_call_output' && item['call_id'] === 'call_brest2'));
      });

      it('Anthropic, generateText: a direct tool call, its result sent back as tool_result, the answer', async () => {
        env.anthropic.script(
          {
            kind: 'json',
            body: textMessage('', {
              content: [{ type: 'tool_use', id: 'toolu_01Brest', name: 'get_weather', input: { location: 'Brest' } }],
              stop_reason: 'tool_use',
            }),
          },
          { kind: 'json', body: textMessage('Sunny in Brest, 21 °C.') },
        );
        const result = await ai.generateText({ model: openai(MODEL_OF.anthropic), prompt: 'Weather in Brest?', tools: tools(), stopWhen: ai.stepCountIs(3) });
        assert.deepEqual(toolCalls, [{ location: 'Brest' }]);
        assert.equal(result.text, 'Sunny in Brest, 21 °C.');
        assert.equal(result.steps.length, 2);
        const [first, second] = env.anthropic.requests.map((r) => r.body);
        assert.deepEqual(first?.['tools'], [
          {
            name: 'get_weather',
            description: 'Current weather for a location',
            input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false },
          },
        ]);
        assert.deepEqual(second?.['messages'], [
          { role: 'user', content: 'Weather in Brest?' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01Brest', name: 'get_weather', input: { location: 'Brest' } }] },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'toolu_01Brest', content: JSON.stringify({ location: 'Brest', sky: 'sunny', celsius: 21 }) }],
          },
        ]);
      });

      it("Anthropic, the SDK's default history (item_reference to its earlier text, nothing stored): resolved from the gateway's recent output items", async () => {
        // The AI SDK assumes OpenAI's default `store: true` and refers to its earlier output items by
        // id; the gateway keeps a stateless response's output items briefly for exactly this.
        env.anthropic.script(
          {
            kind: 'json',
            body: textMessage('Let me check.', {
              content: [
                { type: 'text', text: 'Let me check.' },
                { type: 'tool_use', id: 'toolu_01Ref', name: 'get_weather', input: { location: 'Brest' } },
              ],
              stop_reason: 'tool_use',
            }),
          },
          { kind: 'json', body: textMessage('Sunny in Brest.') },
        );
        const result = await ai.generateText({ model: openai(MODEL_OF.anthropic), prompt: 'Weather in Brest?', tools: tools(), stopWhen: ai.stepCountIs(3) });
        assert.equal(result.text, 'Sunny in Brest.');
        assert.deepEqual(toolCalls, [{ location: 'Brest' }]);
        const references = JSON.stringify(sentByTheSdk[1]?.['input']).match(/item_reference/g) ?? [];
        assert.ok(references.length > 0, 'the SDK sent item_reference');
        assert.deepEqual(env.anthropic.requests[1]?.body['messages'], [
          { role: 'user', content: 'Weather in Brest?' },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Let me check.' },
              { type: 'tool_use', id: 'toolu_01Ref', name: 'get_weather', input: { location: 'Brest' } },
            ],
          },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'toolu_01Ref', content: JSON.stringify({ location: 'Brest', sky: 'sunny', celsius: 21 }) }],
          },
        ]);
      });

      it('an item_reference the gateway does not hold is a 400 naming it, nothing sent', async () => {
        const res = await fetch(`${env.baseURL}/responses`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
          body: JSON.stringify({
            model: MODEL_OF.anthropic,
            input: [
              { role: 'user', content: 'hi' },
              { type: 'item_reference', id: 'msg_not_held' },
            ],
          }),
        });
        assert.equal(res.status, 400);
        assert.match(await res.text(), /item_reference/);
        assert.equal(env.anthropic.requests.length, 0);
      });

      it("Anthropic, streamText with the SDK's default history: the streamed text is referenced by id and resolved", async () => {
        env.anthropic.script({ kind: 'sse', events: textThenToolEvents() }, { kind: 'sse', events: anthropicTextEvents(['Sunny.']) });
        const result = ai.streamText({ model: openai(MODEL_OF.anthropic), prompt: 'Weather in San Francisco?', tools: tools(), stopWhen: ai.stepCountIs(3) });
        const parts: string[] = [];
        for await (const part of result.fullStream) parts.push(part.type);
        assert.ok(!parts.includes('error') && !parts.includes('tool-error'), parts.join(' '));
        assert.equal(await result.text, 'Sunny.');
        assert.match(JSON.stringify(sentByTheSdk[1]?.['input']), /item_reference/, 'the SDK referred to its earlier output');
        const assistant = (env.anthropic.requests[1]?.body['messages'] as Record<string, unknown>[])[1];
        assert.deepEqual(assistant?.['content'], [
          { type: 'text', text: 'Okay, let me check.' },
          { type: 'tool_use', id: 'toolu_01Weather', name: 'get_weather', input: { location: 'San Francisco, CA' } },
        ]);
      });

      it('Anthropic, streamText: text then a streamed tool call, the tool run, the streamed answer (store: false, the SDK sends the whole history)', async () => {
        env.anthropic.script({ kind: 'sse', events: textThenToolEvents() }, { kind: 'sse', events: anthropicTextEvents(['Sunny', ' in San Francisco.']) });
        const result = ai.streamText({
          model: openai(MODEL_OF.anthropic),
          prompt: 'Weather in San Francisco?',
          tools: tools(),
          stopWhen: ai.stepCountIs(3),
          providerOptions: { openai: { store: false } },
        });
        const parts: string[] = [];
        for await (const part of result.fullStream) parts.push(part.type);
        assert.ok(!parts.includes('error') && !parts.includes('tool-error'), parts.join(' '));
        assert.deepEqual(toolCalls, [{ location: 'San Francisco, CA' }]);
        assert.equal(await result.text, 'Sunny in San Francisco.');
        const second = env.anthropic.requests[1]?.body;
        assert.deepEqual(second?.['messages'], [
          { role: 'user', content: 'Weather in San Francisco?' },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Okay, let me check.' },
              { type: 'tool_use', id: 'toolu_01Weather', name: 'get_weather', input: { location: 'San Francisco, CA' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_01Weather', content: JSON.stringify({ location: 'San Francisco, CA', sky: 'sunny', celsius: 21 }) },
            ],
          },
        ]);
      });
    });
  });
}
