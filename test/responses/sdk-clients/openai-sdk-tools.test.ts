// The OpenAI SDK's function tools through a translated provider (Anthropic): every tool_choice form
// reaches Anthropic mapped, a tool call comes back as a function_call item (whole or streamed as
// argument deltas), and the follow-up turn built the SDK way (the previous output plus a
// function_call_output) reaches Anthropic as tool_use and tool_result. And `x-gateway-dropped-params`:
// present, naming the fields, when the provider cannot honour them; absent when everything is honoured
// or the upstream speaks Responses (which gets every field). Both deployments.
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { FunctionTool, ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { textMessage, textThenToolEvents } from '../../fixtures/upstreams/anthropic-events';
import { API_KEY, DEPLOYMENTS, MODEL_OF, scriptText, startClientEnvironment, type ClientEnvironment } from './environment';
import { assertNumberedFromZero, assertValidEvent, assertValidResponse } from './wire-checks';

const CLAUDE = MODEL_OF.anthropic;

const WEATHER_PARAMETERS = {
  type: 'object',
  properties: { location: { type: 'string', description: 'City and country' } },
  required: ['location'],
  additionalProperties: false,
};
const TIME_PARAMETERS = { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'], additionalProperties: false };

const TOOLS: FunctionTool[] = [
  { type: 'function', name: 'get_weather', description: 'Current weather for a location', parameters: WEATHER_PARAMETERS, strict: true },
  { type: 'function', name: 'get_time', description: 'Local time in a time zone', parameters: TIME_PARAMETERS, strict: false },
];

/** The tools as Anthropic defines them. */
const ANTHROPIC_TOOLS = {
  get_weather: { name: 'get_weather', description: 'Current weather for a location', input_schema: WEATHER_PARAMETERS },
  get_time: { name: 'get_time', description: 'Local time in a time zone', input_schema: TIME_PARAMETERS },
};

type ToolChoiceParam = OpenAI.Responses.ResponseCreateParams['tool_choice'];

interface ToolChoiceCase {
  label: string;
  toolChoice: ToolChoiceParam | undefined;
  parallelToolCalls?: boolean;
  /** Anthropic's tool_choice (undefined: none sent). */
  anthropicChoice: Record<string, unknown> | undefined;
  anthropicTools: (keyof typeof ANTHROPIC_TOOLS)[];
}

const TOOL_CHOICE_CASES: ToolChoiceCase[] = [
  { label: 'absent (the provider default)', toolChoice: undefined, anthropicChoice: undefined, anthropicTools: ['get_weather', 'get_time'] },
  { label: 'auto', toolChoice: 'auto', anthropicChoice: { type: 'auto' }, anthropicTools: ['get_weather', 'get_time'] },
  { label: 'none', toolChoice: 'none', anthropicChoice: { type: 'none' }, anthropicTools: ['get_weather', 'get_time'] },
  { label: 'required', toolChoice: 'required', anthropicChoice: { type: 'any' }, anthropicTools: ['get_weather', 'get_time'] },
  {
    label: '{type: function, name}',
    toolChoice: { type: 'function', name: 'get_time' },
    anthropicChoice: { type: 'tool', name: 'get_time' },
    anthropicTools: ['get_weather', 'get_time'],
  },
  {
    label: '{type: allowed_tools, mode: auto}',
    toolChoice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'get_weather' }] },
    anthropicChoice: { type: 'auto' },
    anthropicTools: ['get_weather'],
  },
  {
    label: '{type: allowed_tools, mode: required}',
    toolChoice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'get_time' }] },
    anthropicChoice: { type: 'any' },
    anthropicTools: ['get_time'],
  },
  {
    label: 'auto with parallel_tool_calls: false',
    toolChoice: 'auto',
    parallelToolCalls: false,
    anthropicChoice: { type: 'auto', disable_parallel_tool_use: true },
    anthropicTools: ['get_weather', 'get_time'],
  },
];

const toolUseReply = (text: string, call: { id: string; name: string; input: Record<string, unknown> }): Record<string, unknown> =>
  textMessage(text, {
    content: [
      { type: 'text', text },
      { type: 'tool_use', ...call },
    ],
    stop_reason: 'tool_use',
  });

function droppedParams(response: Response): string[] | null {
  const header = response.headers.get('x-gateway-dropped-params');
  return header === null ? null : header.split(',').map((name) => name.trim());
}

for (const deployment of DEPLOYMENTS) {
  describe(`OpenAI SDK: function tools through Anthropic, dropped parameters (${deployment})`, function () {
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

    const sentToAnthropic = (): Record<string, unknown> => {
      const last = env.anthropic.requests.at(-1);
      assert.ok(last, 'Anthropic was called');
      return last.body;
    };

    describe('tool_choice forms reach Anthropic mapped', () => {
      for (const c of TOOL_CHOICE_CASES) {
        it(c.label, async () => {
          env.anthropic.script({ kind: 'json', body: textMessage('No tool needed.') });
          const response = await client.responses.create({
            model: CLAUDE,
            input: 'What time is it in Paris, and the weather in Brest?',
            tools: TOOLS,
            ...(c.toolChoice !== undefined ? { tool_choice: c.toolChoice } : {}),
            ...(c.parallelToolCalls !== undefined ? { parallel_tool_calls: c.parallelToolCalls } : {}),
          });
          const sent = sentToAnthropic();
          assert.deepEqual(
            sent['tools'],
            c.anthropicTools.map((name) => ANTHROPIC_TOOLS[name]),
          );
          assert.deepEqual(sent['tool_choice'], c.anthropicChoice);
          // The response echoes the caller's tools and choice (what the SDK types say it holds).
          assertValidResponse(response);
          assert.deepEqual(
            response.tools.map((t) => (t.type === 'function' ? t.name : t.type)),
            ['get_weather', 'get_time'],
          );
          assert.deepEqual(response.tool_choice, c.toolChoice ?? 'auto');
          assert.equal(response.parallel_tool_calls, c.parallelToolCalls ?? true);
          assert.equal(response.output_text, 'No tool needed.');
        });
      }
    });

    it('a function call comes back as a function_call item; the follow-up turn with function_call_output reaches Anthropic as tool_use + tool_result', async () => {
      env.anthropic.script({
        kind: 'json',
        body: toolUseReply('Let me check.', { id: 'toolu_01Brest', name: 'get_weather', input: { location: 'Brest, France' } }),
      });
      const question: ResponseInputItem = { role: 'user', content: 'What is the weather in Brest?' };
      const first = await client.responses.create({ model: CLAUDE, input: [question], tools: TOOLS, tool_choice: 'auto' });
      assertValidResponse(first);
      assert.equal(first.status, 'completed');
      assert.equal(first.output_text, 'Let me check.');
      const calls = first.output.filter((item) => item.type === 'function_call');
      assert.equal(calls.length, 1);
      const call = calls[0]!;
      assert.equal(call.call_id, 'toolu_01Brest');
      assert.equal(call.name, 'get_weather');
      assert.deepEqual(JSON.parse(call.arguments), { location: 'Brest, France' });
      assert.equal(call.status, 'completed');
      assert.match(call.id ?? '', /^fc_/);

      env.anthropic.script({ kind: 'json', body: textMessage('It is sunny in Brest, 21 °C.') });
      const result: ResponseInputItem = { type: 'function_call_output', call_id: call.call_id, output: JSON.stringify({ sky: 'sunny', celsius: 21 }) };
      // The SDK way: the previous output items fed back as input, then the tool's result.
      const second = await client.responses.create({
        model: CLAUDE,
        input: [question, ...(first.output as ResponseInputItem[]), result],
        tools: TOOLS,
      });
      assert.equal(second.output_text, 'It is sunny in Brest, 21 °C.');
      assert.deepEqual(sentToAnthropic()['messages'], [
        { role: 'user', content: 'What is the weather in Brest?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'toolu_01Brest', name: 'get_weather', input: { location: 'Brest, France' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Brest', content: '{"sky":"sunny","celsius":21}' }] },
      ]);
    });

    it('a streamed function call: argument deltas in order, then .done with the whole arguments; the .stream() helper accumulates them', async () => {
      env.anthropic.script({ kind: 'sse', events: textThenToolEvents() });
      const stream = await client.responses.create({ model: CLAUDE, input: 'Weather in San Francisco?', tools: TOOLS, stream: true });
      const events: ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      assert.deepEqual(
        events.map((e) => e.type),
        [
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
          'response.function_call_arguments.delta',
          'response.function_call_arguments.delta',
          'response.function_call_arguments.done',
          'response.output_item.done',
          'response.completed',
        ],
      );
      assertNumberedFromZero(events);
      for (const event of events) assertValidEvent(event);
      const added = events[9];
      assert.ok(added?.type === 'response.output_item.added' && added.item.type === 'function_call');
      assert.equal(added.output_index, 1);
      assert.equal(added.item.call_id, 'toolu_01Weather');
      assert.equal(added.item.name, 'get_weather');
      assert.equal(added.item.arguments, '');
      const argumentDeltas = events.filter((e) => e.type === 'response.function_call_arguments.delta');
      assert.ok(argumentDeltas.every((e) => e.item_id === added.item.id && e.output_index === 1));
      const done = events[13];
      assert.ok(done?.type === 'response.function_call_arguments.done');
      assert.equal(done.arguments, argumentDeltas.map((e) => e.delta).join(''));
      assert.deepEqual(JSON.parse(done.arguments), { location: 'San Francisco, CA' });

      env.anthropic.script({ kind: 'sse', events: textThenToolEvents() });
      const helper = client.responses.stream({ model: CLAUDE, input: 'Weather in San Francisco?', tools: TOOLS });
      const snapshots: string[] = [];
      helper.on('response.function_call_arguments.delta', (event) => snapshots.push(event.snapshot));
      const final = await helper.finalResponse();
      assert.equal(snapshots.at(-1), '{"location": "San Francisco, CA"}');
      const finalCall = final.output.find((item) => item.type === 'function_call');
      assert.equal(finalCall?.arguments, '{"location": "San Francisco, CA"}');
      assert.equal(finalCall?.call_id, 'toolu_01Weather');
    });

    describe('x-gateway-dropped-params', () => {
      it('names the fields Anthropic cannot honour (top_logprobs, n, presence_penalty, truncation), which are not sent', async () => {
        env.anthropic.script({ kind: 'json', body: textMessage('Fine.') });
        const params = { model: CLAUDE, input: 'hi', top_logprobs: 3, presence_penalty: 0.5, truncation: 'auto', temperature: 0.2, n: 2 } as const;
        const { data, response } = await client.responses.create(params).withResponse();
        assert.equal(data.output_text, 'Fine.');
        assert.deepEqual(droppedParams(response)?.sort(), ['n', 'presence_penalty', 'top_logprobs', 'truncation']);
        const sent = sentToAnthropic();
        assert.equal(sent['temperature'], 0.2, 'an honoured field is sent');
        for (const field of ['top_logprobs', 'n', 'presence_penalty', 'truncation', 'logprobs']) assert.ok(!(field in sent), `${field} is not sent`);
      });

      it('is on a streamed reply too (a header of the event stream)', async () => {
        env.anthropic.script({ kind: 'sse', events: textThenToolEvents() });
        const { data: stream, response } = await client.responses.create({ model: CLAUDE, input: 'hi', stream: true, top_logprobs: 2 }).withResponse();
        assert.deepEqual(droppedParams(response), ['top_logprobs']);
        assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
        const types: string[] = [];
        for await (const event of stream) types.push(event.type);
        assert.equal(types.at(-1), 'response.completed');
      });

      it('is absent when Anthropic honours every field sent', async () => {
        env.anthropic.script({ kind: 'json', body: textMessage('Fine.') });
        const lenient = TOOLS.map((tool) => ({ ...tool, strict: false }));
        const { response } = await client.responses
          .create({ model: CLAUDE, input: 'hi', temperature: 0.3, top_p: 0.9, max_output_tokens: 64, tools: lenient, tool_choice: 'required' })
          .withResponse();
        assert.equal(droppedParams(response), null);
        assert.equal(sentToAnthropic()['max_tokens'], 64);
      });

      it('names a function tool’s strict: true, which Anthropic does not enforce (the tool is sent without it)', async () => {
        env.anthropic.script({ kind: 'json', body: textMessage('Fine.') });
        const { response } = await client.responses.create({ model: CLAUDE, input: 'hi', tools: TOOLS }).withResponse();
        assert.deepEqual(droppedParams(response), ['tools[0].strict']);
        const tools = sentToAnthropic()['tools'] as Record<string, unknown>[];
        assert.equal(tools.length, 2);
        for (const tool of tools) assert.equal('strict' in tool, false);
      });

      it('is absent on a native Responses upstream, which gets every field as sent', async () => {
        scriptText(env, 'native', false);
        const params = { model: MODEL_OF.native, input: 'hi', top_logprobs: 3, presence_penalty: 0.5, truncation: 'auto', n: 2 } as const;
        const { response } = await client.responses.create(params).withResponse();
        assert.equal(droppedParams(response), null);
        const sent = env.openai.requests.at(-1)?.json() ?? {};
        assert.equal(sent['top_logprobs'], 3);
        assert.equal(sent['n'], 2);
        assert.equal(sent['truncation'], 'auto');
        assert.equal(sent['presence_penalty'], 0.5);
      });
    });
  });
}
