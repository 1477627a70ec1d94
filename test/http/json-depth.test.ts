// The JSON nesting bound: counts only the brackets of structure, never those inside strings.
import assert from 'node:assert/strict';
import { MAX_JSON_DEPTH, nestsDeeperThan, parseBoundedJson } from '../../src/http/json-depth';

describe('http/json-depth', () => {
  const nested = (levels: number): string => `${'['.repeat(levels)}${']'.repeat(levels)}`;

  it('tells a value nested past the bound from one at it, in text and in bytes', () => {
    for (const text of [nested(MAX_JSON_DEPTH), `{"a":${nested(MAX_JSON_DEPTH - 1)}}`]) {
      assert.equal(nestsDeeperThan(text), false);
      assert.equal(nestsDeeperThan(Buffer.from(text)), false);
    }
    for (const text of [nested(MAX_JSON_DEPTH + 1), `{"a":${nested(MAX_JSON_DEPTH)}}`]) {
      assert.equal(nestsDeeperThan(text), true);
      assert.equal(nestsDeeperThan(Buffer.from(text)), true);
    }
  });

  it('skips brackets inside strings, escaped quotes included', () => {
    const brackets = '['.repeat(MAX_JSON_DEPTH * 2);
    for (const text of [`{"a":"${brackets}"}`, `["\\"${brackets}", "\\\\", ${nested(3)}]`, `{"${brackets}":1}`]) {
      assert.equal(nestsDeeperThan(text), false, text.slice(0, 40));
      assert.equal(nestsDeeperThan(Buffer.from(text)), false);
    }
    assert.equal(nestsDeeperThan(`["\\\\",${nested(MAX_JSON_DEPTH)}]`), true, 'an escaped backslash ends before the quote');
  });

  it('parseBoundedJson refuses too deep JSON with a SyntaxError, like any JSON it cannot take', () => {
    assert.deepEqual(parseBoundedJson('{"a":[1]}'), { a: [1] });
    assert.throws(() => parseBoundedJson(nested(MAX_JSON_DEPTH + 1)), SyntaxError);
  });
});
