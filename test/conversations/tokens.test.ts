// Token counting for compaction (src/conversations/tokens.ts): OpenAI-family models are counted with
// their real tokenizer (the counts tiktoken publishes), other models with a characters-based estimate
// that converges toward what their upstream reports.
import assert from 'node:assert/strict';
import type { ResolvedModel } from '../../src/providers/types';
import { CHARS_PER_TOKEN, openAiEncoding, rawEstimate, TokenCounting } from '../../src/conversations/tokens';

function resolved(id: string, upstreamModel = id): ResolvedModel {
  return { model: { id, provider: 'p' }, upstreamModel, provider: {} as ResolvedModel['provider'] };
}

describe('conversation token counting', () => {
  it('knows which OpenAI models use which encoding, and that other models have none', () => {
    for (const name of ['gpt-4o', 'gpt-4o-mini-2024-07-18', 'gpt-4.1-nano', 'gpt-5', 'o3-mini', 'o1', 'o4-mini', 'gpt-oss-20b', 'openai/gpt-4o']) {
      assert.equal(openAiEncoding(name), 'o200k_base', name);
    }
    for (const name of ['gpt-4', 'gpt-4-turbo', 'gpt-3.5-turbo-0125']) assert.equal(openAiEncoding(name), 'cl100k_base', name);
    for (const name of ['claude-sonnet-4-5', 'gemini-2.5-pro', 'llama-3.1-8b', 'o3x', 'demo']) assert.equal(openAiEncoding(name), null, name);
  });

  it('counts an OpenAI-family model with its tokenizer: the counts tiktoken publishes', async () => {
    const counting = new TokenCounting();
    const gpt4 = await counting.counter(resolved('gpt-4'));
    assert.equal(gpt4.kind, 'tokenizer');
    // tiktoken's README and OpenAI's cookbook: "tiktoken is great!" is 6 cl100k_base tokens.
    assert.equal(gpt4.count('tiktoken is great!'), 6);
    assert.equal(gpt4.count('hello world'), 2);
    // The cookbook's comparison table: "antidisestablishmentarianism" is 6 tokens in cl100k_base.
    assert.equal(gpt4.count('antidisestablishmentarianism'), 6);
    const gpt4o = await counting.counter(resolved('gateway-alias', 'gpt-4o-mini'));
    assert.equal(gpt4o.kind, 'tokenizer', 'the upstream name decides');
    assert.equal(gpt4o.count('hello world'), 2);
    assert.equal(gpt4o.count(''), 0);
    // Special-token text is text in a message: counted, never an error.
    assert.ok(gpt4o.count('<|endoftext|> and <|im_start|>') > 2);
  });

  it('estimates every other model from characters, before any calibration on the large side', async () => {
    const counting = new TokenCounting();
    assert.equal(counting.kindOf(resolved('claude-sonnet-4-5')), 'estimate');
    const claude = await counting.counter(resolved('claude-sonnet-4-5'));
    assert.equal(claude.kind, 'estimate');
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(40);
    // 4 characters a token is typical English; the uncalibrated estimate assumes fewer, so it is larger.
    assert.ok(claude.count(text) > text.length / 4, `${claude.count(text)} > ${text.length / 4}`);
    assert.equal(claude.count(text), Math.ceil((text.length / CHARS_PER_TOKEN) * 1.1));
  });

  it('calibrates an estimate toward the input tokens its upstream reports', async () => {
    const counting = new TokenCounting();
    const model = resolved('claude-sonnet-4-5');
    // An upstream whose tokenizer makes 4.4 characters a token.
    const truth = (chars: number): number => Math.round(chars / 4.4);
    const text = 'x'.repeat(8_000);
    const errors: number[] = [];
    for (let turn = 0; turn < 12; turn++) {
      const estimate = (await counting.counter(model)).count(text);
      errors.push(Math.abs(estimate - truth(text.length)) / truth(text.length));
      const sentChars = 6_000 + turn * 500;
      counting.calibrate(model.model.id, rawEstimate('y'.repeat(sentChars)), truth(sentChars));
    }
    assert.ok(errors[0]! > 0.4, `uncalibrated, the estimate is off: ${errors[0]}`);
    // Converged: within the estimate's 10% safety margin of the truth (plus rounding).
    assert.ok(errors[errors.length - 1]! < 0.12, `calibrated: ${errors.join(', ')}`);
    assert.ok(Math.abs(counting.ratio(model.model.id) - 3 / 4.4) < 0.01, `ratio ${counting.ratio(model.model.id)}`);
    // One wild report moves the ratio a bounded step, not to the wild value.
    const before = counting.ratio(model.model.id);
    counting.calibrate(model.model.id, 1_000, 1_000_000);
    assert.ok(counting.ratio(model.model.id) < before + 0.25 * 4, 'clamped and averaged');
    // Other models are not affected, and tiny samples teach nothing.
    assert.equal(counting.ratio('gemini-2.5-pro'), 1);
    counting.calibrate('gemini-2.5-pro', 10, 500);
    assert.equal(counting.ratio('gemini-2.5-pro'), 1);
  });

  it('counts alike for every model of one encoding, and reports each tokenizer count (the counting metric)', async () => {
    let counted = 0;
    const counting = new TokenCounting((method) => void (method === 'tokenizer' && (counted += 1)));
    const [a, b] = await Promise.all([counting.counter(resolved('gpt-4o')), counting.counter(resolved('o3-mini'))]);
    assert.equal(a.count('one two three'), b.count('one two three'));
    assert.equal(counted, 2, 'every tokenizer count is reported (the counting metric)');
  });
});
