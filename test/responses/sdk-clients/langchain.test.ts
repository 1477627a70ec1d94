// LangChain's ChatOpenAI (the real `@langchain/openai`) with `useResponsesApi: true` against the
// gateway: invoke() and stream() on a native Responses upstream and on Anthropic, and a tool round trip
// through Anthropic (bindTools, the tool call parsed, the ToolMessage sent back as a tool_result), on
// both deployments.
import assert from 'node:assert/strict';
import { AIMessageChunk, HumanMessage, ToolMessage, type UsageMetadata } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { textMessage } from '../../fixtures/upstreams/anthropic-events';
import { API_KEY, DEPLOYMENTS, MODEL_OF, scriptText, startClientEnvironment, UPSTREAMS, type ClientEnvironment } from './environment';

// The declared type of `usage_metadata` is inferred as never under this project's CommonJS resolution;
// at run time it is LangChain's UsageMetadata.
const usageOf = (message: AIMessageChunk | undefined): UsageMetadata | undefined => message?.usage_metadata as UsageMetadata | undefined;

for (const deployment of DEPLOYMENTS) {
  describe(`LangChain ChatOpenAI (useResponsesApi) against /v1/responses (${deployment})`, function () {
    this.timeout(60_000);
    let env: ClientEnvironment;

    before(async function () {
      this.timeout(180_000);
      env = await startClientEnvironment(deployment);
    });
    after(async () => {
      await env?.close();
    });
    beforeEach(() => {
      env.openai.requests.length = 0;
      env.anthropic.requests.length = 0;
    });

    const chat = (model: string): ChatOpenAI =>
      new ChatOpenAI({ model, useResponsesApi: true, configuration: { baseURL: env.baseURL }, apiKey: API_KEY, maxRetries: 0 });

    for (const upstream of UPSTREAMS) {
      const model = MODEL_OF[upstream];

      describe(upstream === 'native' ? 'native Responses upstream' : 'Anthropic (translated)', () => {
        it('invoke(): the text, the token usage, the response id', async () => {
          const reply = scriptText(env, upstream, false, ['Hello', ' from LangChain.']);
          const message = await chat(model).invoke([new HumanMessage('Say hello')]);
          assert.equal(message.text, 'Hello from LangChain.');
          const usage = usageOf(message);
          assert.deepEqual(
            { input: usage?.input_tokens, output: usage?.output_tokens, total: usage?.total_tokens },
            { input: reply.usage.input_tokens, output: reply.usage.output_tokens, total: reply.usage.input_tokens + reply.usage.output_tokens },
          );
          assert.match(String(message.response_metadata['id']), /^resp_/);
          if (upstream === 'native') assert.equal(message.response_metadata['id'], reply.id);
          assert.equal(message.response_metadata['status'], 'completed');
        });

        it('stream(): the text chunks in order, the usage on the stream, the chunks concatenating to the reply', async () => {
          const reply = scriptText(env, upstream, true, ['Chunk', ' by', ' chunk.']);
          const stream = await chat(model).stream('Stream please');
          const texts: string[] = [];
          let whole: AIMessageChunk | undefined;
          for await (const chunk of stream) {
            if (chunk.text !== '') texts.push(chunk.text);
            whole = whole === undefined ? chunk : whole.concat(chunk);
          }
          assert.deepEqual(texts, ['Chunk', ' by', ' chunk.']);
          assert.equal(whole?.text, 'Chunk by chunk.');
          assert.equal(usageOf(whole)?.input_tokens, reply.usage.input_tokens);
          assert.equal(usageOf(whole)?.output_tokens, reply.usage.output_tokens);
        });
      });
    }

    it('bindTools through Anthropic: the tool call parsed, the ToolMessage sent back as tool_result', async () => {
      const weather = {
        type: 'function' as const,
        function: {
          name: 'get_weather',
          description: 'Current weather for a location',
          parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
        },
      };
      const model = chat(MODEL_OF.anthropic).bindTools([weather]);
      env.anthropic.script({
        kind: 'json',
        body: textMessage('', {
          content: [{ type: 'tool_use', id: 'toolu_01Lc', name: 'get_weather', input: { location: 'Nantes' } }],
          stop_reason: 'tool_use',
        }),
      });
      const question = new HumanMessage('Weather in Nantes?');
      const first = await model.invoke([question]);
      assert.equal(first.tool_calls?.length, 1);
      assert.deepEqual(
        { id: first.tool_calls?.[0]?.id, name: first.tool_calls?.[0]?.name, args: first.tool_calls?.[0]?.args },
        { id: 'toolu_01Lc', name: 'get_weather', args: { location: 'Nantes' } },
      );
      assert.deepEqual(env.anthropic.requests[0]?.body['tools'], [
        { name: 'get_weather', description: 'Current weather for a location', input_schema: weather.function.parameters },
      ]);

      env.anthropic.script({ kind: 'json', body: textMessage('Rainy in Nantes.') });
      const answer = await model.invoke([question, first, new ToolMessage({ tool_call_id: 'toolu_01Lc', content: 'rain, 14 °C' })]);
      assert.equal(answer.text, 'Rainy in Nantes.');
      assert.deepEqual(env.anthropic.requests[1]?.body['messages'], [
        { role: 'user', content: 'Weather in Nantes?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01Lc', name: 'get_weather', input: { location: 'Nantes' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Lc', content: 'rain, 14 °C' }] },
      ]);
    });
  });
}
