// The demo provider on the canonical model: the deterministic replies (judge verdicts, JSON modes,
// the last user text), word-by-word streaming that assembles to the same reply, usage, and what it
// declares about options and extras.
import assert from 'node:assert/strict';
import { assembleResponse } from '../../src/canonical/assemble';
import type { Message, ModelRequest, StreamPart } from '../../src/canonical/model';
import { DemoProvider } from '../../src/providers/demo/demo-provider';
import type { Provider } from '../../src/providers/types';
import { collect } from '../helpers/async-iterables';
import { user } from '../helpers/canonical';

function request(messages: Message[], options: ModelRequest['options'] = {}): ModelRequest {
  return { model: 'demo', messages, tools: [], options };
}

const textOf = (content: { type: string; text?: string }[]): string => content.map((part) => part.text ?? '').join('');

describe('demo provider: canonical generate()/stream()', () => {
  const demo = new DemoProvider('demo', { type: 'demo' });
  const stepVerdict = { type: 'json_schema' as const, name: 'step_verdict', schema: { type: 'object' } };

  it('answers a step_verdict judge request with a parsable verdict (pass with output, fail without)', async () => {
    const pass = await demo.generate(request([user('Objective: say hi. Output: hi')], { responseFormat: stepVerdict }), 'demo', {});
    const verdict = JSON.parse(textOf(pass.content)) as { verdict: string; explanation: string };
    assert.equal(verdict.verdict, 'pass');
    assert.equal(typeof verdict.explanation, 'string');
    const fail = await demo.generate(request([{ role: 'system', content: [{ type: 'text', text: 'Judge.' }] }], { responseFormat: stepVerdict }), 'demo', {});
    assert.equal((JSON.parse(textOf(fail.content)) as { verdict: string }).verdict, 'fail');
  });

  it('replies to the last user text (parts joined, whitespace collapsed, long prompts cut at 200 characters)', async () => {
    const reply = await demo.generate(
      request([
        user('first question'),
        { role: 'assistant', content: [{ type: 'text', text: 'first answer' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'second\n\n  question' },
            { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } },
            { type: 'text', text: 'please' },
          ],
        },
      ]),
      'demo-upstream',
      {},
    );
    assert.deepEqual(reply.content, [{ type: 'text', text: 'Demo reply to: second question please' }]);
    assert.equal(reply.model, 'demo-upstream');
    assert.equal(reply.finishReason, 'stop');
    const long = await demo.generate(request([user('x'.repeat(300))]), 'demo', {});
    assert.equal(textOf(long.content), `Demo reply to: ${'x'.repeat(200)}…`);
    const none = await demo.generate(request([]), 'demo', {});
    assert.equal(textOf(none.content), 'Demo reply to: (no user text)');
  });

  it('answers JSON for json_object and any other json_schema', async () => {
    for (const responseFormat of [{ type: 'json_object' as const }, { type: 'json_schema' as const, name: 'answer', schema: { type: 'object' } }]) {
      const reply = await demo.generate(request([user('ping')], { responseFormat }), 'demo', {});
      assert.deepEqual(JSON.parse(textOf(reply.content)), { reply: 'Demo reply to: ping' });
    }
    const text = await demo.generate(request([user('ping')], { responseFormat: { type: 'text' } }), 'demo', {});
    assert.equal(textOf(text.content), 'Demo reply to: ping');
  });

  it('is deterministic: the same request gets the same id and usage, another request another id', async () => {
    const req = request([{ role: 'system', content: [{ type: 'text', text: 'Be brief.' }] }, user('hello there')]);
    const first = await demo.generate(req, 'demo', {});
    const second = await demo.generate(structuredClone(req), 'demo', {});
    assert.deepEqual(second, first);
    assert.match(first.id, /^demo-[0-9a-f]{24}$/);
    assert.equal(first.created, 1_700_000_000);
    // Prompt: "Be brief. hello there" (21 characters), reply: "Demo reply to: hello there" (26).
    assert.deepEqual(first.usage, { inputTokens: 6, outputTokens: 7 });
    assert.notEqual((await demo.generate(request([user('hello again')]), 'demo', {})).id, first.id);
  });

  it('counts tool results in the prompt it bills', async () => {
    const withResult = await demo.generate(
      request([
        user('hi'),
        { role: 'assistant', content: [{ type: 'tool-call', id: 'c', name: 'f', arguments: '{}' }] },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', callId: 'c', output: 'x'.repeat(40) },
            { type: 'tool-result', callId: 'd', output: [{ type: 'text', text: 'y'.repeat(40) }] },
          ],
        },
      ]),
      'demo',
      {},
    );
    // "hi", "" (the call has no text) and the two results, joined by spaces: 85 characters.
    assert.equal(withResult.usage.inputTokens, 22);
  });

  it('streams the reply word by word, assembling to what generate() answers, with one finish carrying the usage', async () => {
    const req = request([user('hello there')]);
    const full = await demo.generate(req, 'demo', {});
    const parts = await collect(demo.stream(req, 'demo', {}));
    assert.deepEqual(
      parts.filter((part) => part.type === 'text-delta').map((part) => (part.type === 'text-delta' ? part.delta : '')),
      ['Demo ', 'reply ', 'to: ', 'hello ', 'there'],
    );
    assert.equal(parts[0]?.type, 'start');
    assert.deepEqual(parts.at(-1), { type: 'finish', finishReason: 'stop', usage: full.usage });
    assert.ok(full.usage.outputTokens > 0);
    assert.deepEqual(await assembleResponse(demo.stream(req, 'demo', {})), full);
    assert.equal(
      parts.some((part) => part.type.startsWith('tool-call')),
      false,
      'the demo never calls tools',
    );
  });

  it('ends a stream whose caller aborted with the abort, not a finish', async () => {
    const controller = new AbortController();
    const seen: StreamPart[] = [];
    await assert.rejects(
      (async () => {
        for await (const part of demo.stream(request([user('one two three four')]), 'demo', { signal: controller.signal })) {
          seen.push(part);
          if (part.type === 'text-delta') controller.abort();
        }
      })(),
      (err: unknown) => err instanceof Error && err.name === 'AbortError',
    );
    assert.equal(seen.filter((part) => part.type === 'text-delta').length, 1);
    assert.equal(
      seen.some((part) => part.type === 'finish'),
      false,
    );
  });

  it('lists every option as honoured (it ignores them harmlessly) and takes no caller extras', async () => {
    for (const name of ['maxOutputTokens', 'temperature', 'topK', 'n', 'logprobs', 'reasoning', 'user', 'promptCacheKey', 'serviceTier'] as const) {
      assert.ok(demo.honours.has(name), name);
    }
    assert.equal(demo.honours.size, 18);
    assert.equal((demo as Provider).extrasOf, undefined);
    const plain = await demo.generate(request([user('ping')]), 'demo', {});
    const tuned = await demo.generate(request([user('ping')], { temperature: 1.5, maxOutputTokens: 1, n: 3, reasoning: { effort: 'high' } }), 'demo', {});
    assert.deepEqual(tuned, plain);
  });
});
