// The legacy completions format ⇄ canonical converters on their own: the prompt as one user message,
// the refused prompt forms, options and extra fields, the text_completion reply and its stream chunks.
import assert from 'node:assert/strict';
import { responseToParts } from '../../src/canonical/assemble';
import type { ModelResponse, StreamPart } from '../../src/canonical/model';
import { CompletionChunkStream, canonicalToCompletion, canonicalToCompletionChunks, completionRequestToCanonical } from '../../src/formats/completions';
import type { TextCompletion } from '../../src/formats/completions';
import { collect, streamOf } from '../helpers/async-iterables';
import { renderAll } from '../helpers/canonical';
import { throwsNaming } from '../helpers/rejection';

function reply(overrides: Partial<ModelResponse> = {}): ModelResponse {
  return {
    id: 'msg_7',
    model: 'up',
    created: 1_700_000_000,
    content: [
      { type: 'reasoning', text: 'not shown' },
      { type: 'text', text: 'Hello ' },
      { type: 'text', text: 'world' },
    ],
    finishReason: 'length',
    usage: { inputTokens: 4, outputTokens: 2 },
    ...overrides,
  };
}

describe('formats/completions ⇄ canonical', () => {
  describe('completionRequestToCanonical', () => {
    it('the prompt (a string, or an array of one string) is one user message; options mapped, the rest extra', () => {
      const body = {
        model: 'claude-x',
        prompt: 'Say ok',
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: 3,
        temperature: 0.5,
        top_p: 0.8,
        stop: '\n',
        n: 1,
        seed: 3,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        logprobs: 2,
        user: 'u',
        suffix: '!',
        echo: true,
        best_of: 2,
        logit_bias: { '50256': -100 },
      };
      const frozen = structuredClone(body);
      const { request, fieldNames } = completionRequestToCanonical(body);
      assert.deepEqual(body, frozen, 'the caller body is not mutated');
      assert.deepEqual(request, {
        model: 'claude-x',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Say ok' }] }],
        tools: [],
        options: {
          maxOutputTokens: 3,
          temperature: 0.5,
          topP: 0.8,
          stop: ['\n'],
          n: 1,
          seed: 3,
          presencePenalty: 0.1,
          frequencyPenalty: 0.2,
          logprobs: true,
          topLogprobs: 2,
          user: 'u',
        },
        extra: { format: 'completions', fields: { suffix: '!', echo: true, best_of: 2, logit_bias: { '50256': -100 } } },
      });
      assert.deepEqual(fieldNames, {
        maxOutputTokens: 'max_tokens',
        temperature: 'temperature',
        topP: 'top_p',
        stop: 'stop',
        n: 'n',
        seed: 'seed',
        presencePenalty: 'presence_penalty',
        frequencyPenalty: 'frequency_penalty',
        logprobs: 'logprobs',
        topLogprobs: 'logprobs',
        user: 'user',
      });
      const single = completionRequestToCanonical({ model: 'm', prompt: ['only one'] });
      assert.deepEqual(single.request.messages, [{ role: 'user', content: [{ type: 'text', text: 'only one' }] }]);
      assert.equal(single.request.extra, undefined);
      assert.deepEqual(completionRequestToCanonical({ model: 'm', prompt: '', logprobs: 0 }).request, {
        model: 'm',
        messages: [{ role: 'user', content: [] }],
        tools: [],
        options: { logprobs: true, topLogprobs: 0 },
      });
    });

    it('several prompts and token-id prompts are a 400 naming prompt (a translated call answers one text turn)', () => {
      const prompt = (value: unknown) => () => completionRequestToCanonical({ model: 'm', prompt: value });
      throwsNaming(prompt(['a', 'b']), 'prompt', { code: 'unsupported_parameter', message: /one text prompt per request/ });
      throwsNaming(prompt([1, 2, 3]), 'prompt', { code: 'unsupported_parameter', message: /token-id prompts/ });
      throwsNaming(prompt([[1, 2], [3]]), 'prompt', { code: 'unsupported_parameter', message: /token-id prompts/ });
      throwsNaming(prompt([]), 'prompt', { code: 'bad_request', message: /must not be empty/ });
      throwsNaming(prompt(undefined), 'prompt', { code: 'bad_request' });
      throwsNaming(() => completionRequestToCanonical({ prompt: 'x' }), 'model', { code: 'bad_request' });
      throwsNaming(() => completionRequestToCanonical({ model: 'm', prompt: 'x', logprobs: true }), 'logprobs', { code: 'bad_request' });
      throwsNaming(() => completionRequestToCanonical({ model: 'm', prompt: 'x', max_tokens: '3' }), 'max_tokens', { code: 'bad_request' });
    });
  });

  describe('canonicalToCompletion', () => {
    it('answers the text parts joined, the finish reason and usage, under the caller’s model', () => {
      assert.deepEqual(canonicalToCompletion(reply(), 'claude-x'), {
        id: 'cmpl-msg_7',
        object: 'text_completion',
        created: 1_700_000_000,
        model: 'claude-x',
        choices: [{ text: 'Hello world', index: 0, logprobs: null, finish_reason: 'length' }],
        usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 },
      });
      const finish = (finishReason: ModelResponse['finishReason']) => canonicalToCompletion(reply({ finishReason }), 'm').choices[0]?.finish_reason;
      assert.deepEqual((['stop', 'length', 'content_filter', 'tool_calls', 'error', 'other'] as const).map(finish), [
        'stop',
        'length',
        'content_filter',
        'stop',
        'stop',
        'stop',
      ]);
      const minted = canonicalToCompletion(reply({ id: '', created: 0 }), 'm', () => 9_000);
      assert.match(minted.id, /^cmpl-[0-9a-f]{24}$/);
      assert.equal(minted.created, 9);
      assert.equal(canonicalToCompletion(reply({ id: 'cmpl-x' }), 'm').id, 'cmpl-x');
    });
  });

  describe('CompletionChunkStream', () => {
    function run(parts: Iterable<StreamPart>, includeUsage?: boolean): TextCompletion[] {
      return renderAll(new CompletionChunkStream(includeUsage === undefined ? { model: 'claude-x' } : { model: 'claude-x', includeUsage }), parts);
    }

    it('one chunk per text delta, then the finish chunk with usage; reasoning and tool calls have no place', () => {
      const chunks = run(
        responseToParts(reply({ content: [...reply().content, { type: 'tool-call', id: 'c', name: 'f', arguments: '{}' }] }), (t) => t.split(/(?<= )/)),
      );
      assert.deepEqual(chunks, [
        {
          id: 'cmpl-msg_7',
          object: 'text_completion',
          created: 1_700_000_000,
          model: 'claude-x',
          choices: [{ text: 'Hello ', index: 0, logprobs: null, finish_reason: null }],
        },
        {
          id: 'cmpl-msg_7',
          object: 'text_completion',
          created: 1_700_000_000,
          model: 'claude-x',
          choices: [{ text: 'world', index: 0, logprobs: null, finish_reason: null }],
        },
        {
          id: 'cmpl-msg_7',
          object: 'text_completion',
          created: 1_700_000_000,
          model: 'claude-x',
          choices: [{ text: '', index: 0, logprobs: null, finish_reason: 'length' }],
          usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 },
        },
      ]);
    });

    it('with include_usage the usage comes last with empty choices', () => {
      const chunks = run(responseToParts(reply()), true);
      assert.deepEqual(chunks.at(-2)?.choices, [{ text: '', index: 0, logprobs: null, finish_reason: 'length' }]);
      assert.equal(chunks.at(-2)?.usage, undefined);
      assert.deepEqual(chunks.at(-1)?.choices, []);
      assert.deepEqual(chunks.at(-1)?.usage, { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
    });

    it('round trip: the streamed text and finish equal the JSON reply; errors propagate; a cut stream is an error', async () => {
      const chunks = await collect(canonicalToCompletionChunks(streamOf(responseToParts(reply(), (t) => t.split(''))), { model: 'claude-x' }));
      const json = canonicalToCompletion(reply(), 'claude-x');
      assert.equal(chunks.map((c) => c.choices[0]?.text ?? '').join(''), json.choices[0]?.text);
      assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, json.choices[0]?.finish_reason);
      assert.deepEqual(chunks.at(-1)?.usage, json.usage);
      const seen: string[] = [];
      await assert.rejects(async () => {
        for await (const chunk of canonicalToCompletionChunks(
          streamOf<StreamPart>([
            { type: 'start', id: 'x', model: 'm', created: 1 },
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'par' },
            { type: 'error', error: new Error('upstream broke') },
          ]),
          { model: 'm' },
        )) {
          seen.push(chunk.choices[0]?.text ?? '');
        }
      }, /upstream broke/);
      assert.deepEqual(seen, ['par']);
      await assert.rejects(
        collect(canonicalToCompletionChunks(streamOf<StreamPart>([{ type: 'start', id: 'x', model: 'm', created: 1 }]), { model: 'm' })),
        (err: unknown) => (err as { status: number }).status === 502,
      );
    });
  });
});
