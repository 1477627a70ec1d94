// The OpenAI Agents SDK (the real `@openai/agents` package) against POST /v1/responses: an `Agent` with
// a function tool, run with `run()` and with `run(…, { stream: true })`, on a native Responses upstream
// and on the Anthropic provider (translated through the canonical model), on the embedded store with
// the inline queue and on PostgreSQL with BullMQ. Each run makes a tool round trip (the model calls the
// tool, the SDK runs it and sends its output back, the model answers); a second run chains on the first
// with `previousResponseId` (`result.lastResponseId`), so the SDK sends only the new turn and the
// gateway loads the history: asserted on what the SDK sent the gateway and on what the fake upstream
// received. The SDK is pointed at the gateway with an `OpenAIProvider` (baseURL, apiKey, Responses),
// tracing is off, and every request the process makes meanwhile is recorded: none leaves for anywhere
// but the gateway (api.openai.com's trace ingestion included).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Agent, OpenAIProvider, run, setTracingDisabled, tool, type AgentInputItem, type Model, type RunStreamEvent } from '@openai/agents';
import { z } from 'zod';
import { messageStart, textThenToolEvents } from '../../fixtures/upstreams/anthropic-events';
import { responsesBody, responsesStreamEvents } from '../../fixtures/upstreams/responses-wire';
import {
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

type Json = Record<string, unknown>;

/** Where the tool is asked about: the streamed Anthropic fixture (textThenToolEvents) asks for San Francisco. */
const LOCATION = { json: 'Brest, France', stream: 'San Francisco, CA' } as const;
const CALL_ID = { native: 'call_weather1', anthropic: { json: 'toolu_01Brest', stream: 'toolu_01Weather' } } as const;

/**
 * Queues a reply calling get_weather (after a little text) on `upstream`'s fake, streamed or not. A
 * stored translated response is always generated as a stream (its event log is kept for replay), so
 * the Anthropic fake always answers with events: the recorded fixture (text, then a tool call whose
 * input arrives split mid-token) when streamed, the same shape with the Brest call otherwise.
 */
function scriptToolCall(env: ClientEnvironment, upstream: UpstreamKind, stream: boolean): { location: string; callId: string } {
  const location = stream ? LOCATION.stream : LOCATION.json;
  if (upstream === 'native') {
    const options = {
      id: `resp_uptool${randomBytes(6).toString('hex')}`,
      functionCall: { name: 'get_weather', arguments: JSON.stringify({ location }), callId: CALL_ID.native },
    };
    const model = UPSTREAM_MODEL_OF.native;
    env.openai.script(
      stream
        ? { kind: 'sse', chunks: responsesStreamEvents(model, ['Let me ', 'check.'], options) }
        : { kind: 'json', body: responsesBody(model, 'Let me check.', options) },
    );
    return { location, callId: CALL_ID.native };
  }
  if (stream) {
    env.anthropic.script({ kind: 'sse', events: textThenToolEvents() });
    return { location, callId: CALL_ID.anthropic.stream };
  }
  const input = JSON.stringify({ location });
  env.anthropic.script({
    kind: 'sse',
    events: [
      messageStart({ id: 'msg_01Brest' }),
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me check.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: CALL_ID.anthropic.json, name: 'get_weather', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: input.slice(0, 9) } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: input.slice(9) } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 30 } },
      { type: 'message_stop' },
    ],
  });
  return { location, callId: CALL_ID.anthropic.json };
}

/** Queues a text reply; on Anthropic always as events (see scriptToolCall). */
const scriptAnswer = (env: ClientEnvironment, upstream: UpstreamKind, stream: boolean, pieces: string[]): void =>
  void scriptText(env, upstream, stream || upstream === 'anthropic', pieces);

/** A request the process sent while a test ran (every fetch, whatever its destination). */
interface Sent {
  url: string;
  method: string;
  body: Json | null;
}

/** A message's text (string content, or its text parts joined). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return (content as Json[])
    .map((part) => (typeof part['text'] === 'string' ? part['text'] : typeof part['content'] === 'string' ? part['content'] : ''))
    .join('');
}

/** What a native upstream was sent, item by item: `role:text`, `function_call:name(args)`, `function_call_output:output`. */
function nativeTranscript(body: Json): string[] {
  const input = body['input'];
  if (typeof input === 'string') return [`user:${input}`];
  return (input as Json[]).map((item) => {
    if (item['type'] === 'function_call') return `function_call:${String(item['call_id'])}:${String(item['name'])}(${String(item['arguments'])})`;
    if (item['type'] === 'function_call_output') return `function_call_output:${String(item['call_id'])}:${textOf(item['output'])}`;
    return `${String(item['role'])}:${textOf(item['content'])}`;
  });
}

/** What Anthropic was sent, block by block: `role:text`, `role:tool_use:id:name(input)`, `role:tool_result:id:content`. */
function anthropicTranscript(body: Json): string[] {
  return (body['messages'] as Json[]).flatMap((message) => {
    const role = String(message['role']);
    const content = message['content'];
    if (typeof content === 'string') return [`${role}:${content}`];
    return (content as Json[]).map((block) => {
      if (block['type'] === 'tool_use') return `${role}:tool_use:${String(block['id'])}:${String(block['name'])}(${JSON.stringify(block['input'])})`;
      if (block['type'] === 'tool_result') return `${role}:tool_result:${String(block['tool_use_id'])}:${textOf(block['content'])}`;
      return `${role}:${String(block['text'])}`;
    });
  });
}

const weatherOf = (location: string): string => `Sunny, 21 C in ${location}`;

for (const deployment of DEPLOYMENTS) {
  describe(`@openai/agents against /v1/responses (${deployment})`, function () {
    this.timeout(60_000);
    let env: ClientEnvironment;
    let provider: OpenAIProvider;
    const sent: Sent[] = [];
    const realFetch = globalThis.fetch;
    /** The locations the tool was run with, in order. */
    const toolRuns: string[] = [];
    const getWeather = tool({
      name: 'get_weather',
      description: 'Current weather for a location',
      parameters: z.object({ location: z.string().describe('City and country') }),
      execute: ({ location }) => {
        toolRuns.push(location);
        return Promise.resolve(weatherOf(location));
      },
    });

    before(async function () {
      this.timeout(180_000); // the embedded store's first start is slow on a busy machine
      env = await startClientEnvironment(deployment);
      // Traces would go to api.openai.com: off. Every request this process makes is recorded from now on
      // (the SDK's OpenAI client takes the global fetch when the provider creates it, below).
      setTracingDisabled(true);
      globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
        const url = input instanceof Request ? input.url : String(input);
        const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
        const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as Json) : null;
        sent.push({ url, method, body });
        return realFetch(input, init);
      };
      provider = new OpenAIProvider({ baseURL: env.baseURL, apiKey: API_KEY, useResponses: true });
    });
    after(async () => {
      globalThis.fetch = realFetch;
      await provider?.close();
      await env?.close();
    });
    beforeEach(() => {
      env.openai.requests.length = 0;
      env.anthropic.requests.length = 0;
      sent.length = 0;
      toolRuns.length = 0;
    });
    afterEach(() => {
      // Nothing but the gateway was contacted (no traces, no api.openai.com), whatever the test did.
      const elsewhere = sent.filter((request) => !request.url.startsWith(`${env.baseURL}/`));
      assert.deepEqual(
        elsewhere.map((request) => request.url),
        [],
        'no request left for anywhere but the gateway',
      );
    });

    /** The agent on `upstream`'s model: its responses stored, so a later run can chain on them. */
    const agentOn = async (upstream: UpstreamKind): Promise<Agent> => {
      const model: Model = await provider.getModel(MODEL_OF[upstream]);
      return new Agent({
        name: 'Weather agent',
        instructions: 'Answer weather questions with the get_weather tool.',
        model,
        tools: [getWeather],
        modelSettings: { store: true },
      });
    };
    /** The bodies the SDK POSTed to /v1/responses. */
    const sentToGateway = (): Json[] => sent.filter((r) => r.method === 'POST' && r.url === `${env.baseURL}/responses`).map((r) => r.body ?? {});
    const upstreamBodies = (upstream: UpstreamKind): Json[] =>
      upstream === 'native' ? env.openai.requests.map((r) => r.json()) : env.anthropic.requests.map((r) => r.body);
    const transcript = (upstream: UpstreamKind, body: Json): string[] => (upstream === 'native' ? nativeTranscript(body) : anthropicTranscript(body));

    /** The history a provider gets after the tool round trip (question, the call, its output, the answer). */
    const roundTrip = (upstream: UpstreamKind, question: string, call: { location: string; callId: string }, lead: string, answer: string): string[] => {
      const args = JSON.stringify({ location: call.location });
      return upstream === 'native'
        ? [
            `user:${question}`,
            `assistant:${lead}`,
            `function_call:${call.callId}:get_weather(${args})`,
            `function_call_output:${call.callId}:${weatherOf(call.location)}`,
            `assistant:${answer}`,
          ]
        : [
            `user:${question}`,
            `assistant:${lead}`,
            `assistant:tool_use:${call.callId}:get_weather(${args})`,
            `user:tool_result:${call.callId}:${weatherOf(call.location)}`,
            `assistant:${answer}`,
          ];
    };

    for (const upstream of UPSTREAMS) {
      describe(`${upstream === 'native' ? 'native Responses upstream' : 'Anthropic (translated)'}`, () => {
        it('run(): the model calls the function tool, the SDK runs it and sends its output back, the model answers; a previousResponseId run sends only the new turn and the upstream gets the whole history', async () => {
          const agent = await agentOn(upstream);
          const question = 'What is the weather in Brest?';
          const call = scriptToolCall(env, upstream, false);
          scriptAnswer(env, upstream, false, ['It is sunny', ' in Brest.']);
          const first = await run(agent, question);

          assert.equal(first.finalOutput, 'It is sunny in Brest.');
          assert.deepEqual(toolRuns, [call.location], 'the SDK ran the tool once, with the arguments the model gave');
          const toolOutputs = first.newItems.filter((item) => item.type === 'tool_call_output_item');
          assert.equal(toolOutputs.length, 1);
          // Two model calls through the gateway: the question, then the question, the call and its output.
          const [ask, follow] = sentToGateway();
          assert.ok(ask && follow && sentToGateway().length === 2, `two POST /v1/responses: ${sentToGateway().length}`);
          assert.equal(ask['model'], MODEL_OF[upstream]);
          assert.equal(ask['store'], true);
          assert.deepEqual(
            (ask['tools'] as Json[]).map((t) => [t['type'], t['name']]),
            [['function', 'get_weather']],
          );
          const followInput = follow['input'] as Json[];
          const output = followInput.at(-1);
          assert.ok(output, 'the follow-up has input');
          assert.deepEqual([output['type'], output['call_id'], output['output']], ['function_call_output', call.callId, weatherOf(call.location)]);
          // The upstream got the tool's output, in its own wire format, and answered.
          const [firstUp, secondUp] = upstreamBodies(upstream);
          assert.ok(firstUp && secondUp, 'the upstream was called twice');
          assert.equal(firstUp['model'], UPSTREAM_MODEL_OF[upstream]);
          assert.deepEqual(transcript(upstream, secondUp), roundTrip(upstream, question, call, 'Let me check.', 'It is sunny in Brest.').slice(0, -1));
          if (upstream === 'native')
            assert.deepEqual(
              (secondUp['tools'] as Json[]).map((t) => t['name']),
              ['get_weather'],
            );
          else
            assert.deepEqual(
              (secondUp['tools'] as Json[]).map((t) => t['name']),
              ['get_weather'],
            );

          // The chained run: the SDK sends the new turn only; the gateway loads the history.
          assert.match(first.lastResponseId ?? '', /^resp_/);
          sent.length = 0;
          env.openai.requests.length = 0;
          env.anthropic.requests.length = 0;
          scriptAnswer(env, upstream, false, ['Rain tomorrow.']);
          const second = await run(agent, 'And tomorrow?', { previousResponseId: first.lastResponseId! });
          assert.equal(second.finalOutput, 'Rain tomorrow.');
          const [chained] = sentToGateway();
          assert.ok(chained && sentToGateway().length === 1);
          assert.equal(chained['previous_response_id'], first.lastResponseId);
          assert.deepEqual(
            (chained['input'] as Json[]).map((item) => [item['role'], textOf(item['content'])]),
            [['user', 'And tomorrow?']],
            'the SDK sent only the new turn',
          );
          const [up] = upstreamBodies(upstream);
          assert.ok(up);
          assert.deepEqual(transcript(upstream, up), [...roundTrip(upstream, question, call, 'Let me check.', 'It is sunny in Brest.'), 'user:And tomorrow?']);
          assert.equal(up['previous_response_id'], undefined, 'the upstream is never sent our continuation');
          assert.notEqual(second.lastResponseId, first.lastResponseId);
          assert.deepEqual(toolRuns, [call.location], 'no tool ran in the chained run');
        });

        it('run(…, { stream: true }): the tool round trip streamed, consumed to completion; a streamed previousResponseId run continues it', async () => {
          const agent = await agentOn(upstream);
          const question = 'Weather in San Francisco?';
          const call = scriptToolCall(env, upstream, true);
          scriptAnswer(env, upstream, true, ['Foggy', ' in', ' San Francisco.']);
          const streamed = await run(agent, question, { stream: true });
          const events: RunStreamEvent[] = [];
          for await (const event of streamed) events.push(event);
          await streamed.completed;

          assert.equal(streamed.error, null);
          assert.equal(streamed.finalOutput, 'Foggy in San Francisco.');
          assert.deepEqual(toolRuns, [call.location]);
          const itemEvents = events.flatMap((e) => (e.type === 'run_item_stream_event' ? [e.name] : []));
          assert.deepEqual(
            itemEvents.filter((name) => name === 'tool_called' || name === 'tool_output'),
            ['tool_called', 'tool_output'],
          );
          const deltas = events.flatMap((e) => (e.type === 'raw_model_stream_event' && e.data.type === 'output_text_delta' ? [e.data.delta] : []));
          assert.equal(
            deltas.join(''),
            `${upstream === 'native' ? 'Let me check.' : 'Okay, let me check.'}Foggy in San Francisco.`,
            'every text delta arrived',
          );
          const posted = sentToGateway();
          assert.equal(posted.length, 2);
          for (const body of posted) assert.equal(body['stream'], true);
          for (const body of upstreamBodies(upstream)) assert.equal(body['stream'], true);

          sent.length = 0;
          env.openai.requests.length = 0;
          env.anthropic.requests.length = 0;
          scriptAnswer(env, upstream, true, ['Clear', ' skies.']);
          const next = await run(agent, 'And tonight?', { stream: true, previousResponseId: streamed.lastResponseId! });
          const text: string[] = [];
          for await (const chunk of next.toTextStream()) text.push(chunk);
          await next.completed;
          assert.equal(text.join(''), 'Clear skies.');
          assert.equal(next.finalOutput, 'Clear skies.');
          const [chained] = sentToGateway();
          assert.ok(chained);
          assert.equal(chained['previous_response_id'], streamed.lastResponseId);
          assert.equal((chained['input'] as AgentInputItem[]).length, 1, 'the SDK sent only the new turn');
          const [up] = upstreamBodies(upstream);
          assert.ok(up);
          const lead = upstream === 'native' ? 'Let me check.' : 'Okay, let me check.';
          assert.deepEqual(transcript(upstream, up), [...roundTrip(upstream, question, call, lead, 'Foggy in San Francisco.'), 'user:And tonight?']);
        });

        it('a tool round trip inside a chained run: the call and its output join the stored conversation, and the next run sees them', async () => {
          const agent = await agentOn(upstream);
          scriptAnswer(env, upstream, false, ['Hello, I can tell the weather.']);
          const opening = await run(agent, 'Hi');
          assert.equal(opening.finalOutput, 'Hello, I can tell the weather.');

          const question = 'And in Brest?';
          const call = scriptToolCall(env, upstream, false);
          scriptAnswer(env, upstream, false, ['Sunny in Brest.']);
          const withTool = await run(agent, question, { previousResponseId: opening.lastResponseId! });
          assert.equal(withTool.finalOutput, 'Sunny in Brest.');
          // Within a chained run the SDK chains each model call on the last: the follow-up carries only the tool's output.
          const [ask, follow] = sentToGateway().slice(-2);
          assert.ok(ask && follow);
          assert.equal(ask['previous_response_id'], opening.lastResponseId);
          assert.equal(typeof follow['previous_response_id'], 'string');
          assert.notEqual(follow['previous_response_id'], opening.lastResponseId);
          assert.deepEqual(
            (follow['input'] as Json[]).map((item) => item['type']),
            ['function_call_output'],
          );

          env.openai.requests.length = 0;
          env.anthropic.requests.length = 0;
          scriptAnswer(env, upstream, false, ['Bye.']);
          const last = await run(agent, 'Thanks', { previousResponseId: withTool.lastResponseId! });
          assert.equal(last.finalOutput, 'Bye.');
          const [up] = upstreamBodies(upstream);
          assert.ok(up);
          assert.deepEqual(transcript(upstream, up), [
            'user:Hi',
            'assistant:Hello, I can tell the weather.',
            ...roundTrip(upstream, question, call, 'Let me check.', 'Sunny in Brest.'),
            'user:Thanks',
          ]);
        });
      });
    }
  });
}
