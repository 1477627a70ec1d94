// The snippet MongoDB search hits carry (the SQL stores' come from ts_headline): the passage holding
// the most query terms, terms marked, bounded in length, excluded words never marked.
import assert from 'node:assert/strict';
import { makeSnippet, queryTerms } from '../../src/store/snippet';

describe('search snippets made in code', () => {
  const filler = 'Lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor. ';

  it('shows the window with the most terms, marks them (stems matched), and keeps punctuation', () => {
    const text = `${filler.repeat(5)}A cat sat here. ${filler.repeat(5)}Cats purr; the cat naps when cats are fed. ${filler.repeat(5)}`;
    const snippet = makeSnippet(text, 'cat', { fragments: 1, maxWords: 12 });
    assert.match(snippet, /\*\*Cats\*\* purr; the \*\*cat\*\* naps when \*\*cats\*\*/);
    assert.ok(snippet.split(/\s+/).length <= 12);
  });

  it('joins two passages in text order with the ts_headline delimiter, without repeating words', () => {
    const text = `Refunds are paid monthly. ${filler.repeat(10)}Shipping costs are refunded too.`;
    const snippet = makeSnippet(text, 'refunds shipping', { maxWords: 8 });
    const parts = snippet.split(' … ');
    assert.equal(parts.length, 2);
    assert.match(parts[0]!, /^\*\*Refunds\*\* are paid/);
    assert.match(parts[1]!, /\*\*Shipping\*\* costs/);
  });

  it('starts at the beginning when no word matches (a title-only match), and is empty for empty text', () => {
    assert.equal(makeSnippet('One two three four five.', 'zebra', { maxWords: 3 }), 'One two three');
    assert.equal(makeSnippet('', 'zebra'), '');
  });

  it('takes phrase words and leaves out excluded words', () => {
    assert.deepEqual([...queryTerms('"annual leave" -sick policy')].sort(), ['annual', 'leave', 'policy']);
    const snippet = makeSnippet('Sick days and annual leave.', 'leave -sick', { fragments: 1 });
    assert.equal(snippet, 'Sick days and annual **leave**');
  });
});
