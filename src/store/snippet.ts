// Snippets for search hits on a backend whose text search does not make them (MongoDB's $text ranks
// but returns no passage): the window(s) of the document's words holding the most query terms, terms
// marked **like this**, as PostgreSQL's ts_headline does for the SQL stores (same marks, same
// delimiter, about the same length).

export interface SnippetOptions {
  /** Words per passage. */
  maxWords: number;
  /** Passages at most (the best ones, shown in text order). */
  fragments: number;
}

const DEFAULTS: SnippetOptions = { maxWords: 30, fragments: 2 };
const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;
const DELIMITER = ' … ';

/** A crude English stem: enough to match "cats" to "cat" and "running" to "run" when marking terms. */
function stem(word: string): string {
  const lower = word.toLowerCase();
  if (lower.length <= 3) return lower;
  const stripped = lower.replace(/(?:ing|ed|es|s|ly)$/u, '');
  const base = stripped.length >= 3 ? stripped : lower;
  // "running" -> "runn" -> "run": a doubled final consonant left by the suffix.
  return /([^aeiou])\1$/u.test(base) ? base.slice(0, -1) : base;
}

/** The terms a query looks for: its words and phrase words, without excluded (`-word`) ones. */
export function queryTerms(query: string): Set<string> {
  const terms = new Set<string>();
  const withoutExcluded = query.replace(/(^|\s)-("[^"]*"|\S+)/gu, ' ');
  for (const match of withoutExcluded.matchAll(WORD)) terms.add(stem(match[0]));
  return terms;
}

interface Word {
  start: number;
  end: number;
  hit: boolean;
}

/** Start index of the window of `size` words holding the most hits, or -1 when none holds any. */
function bestWindow(words: readonly Word[], size: number, taken: (i: number) => boolean): number {
  let best = -1;
  let bestHits = 0;
  let hits = 0;
  for (let i = 0; i < words.length; i++) {
    if (words[i]!.hit && !taken(i)) hits++;
    const leaving = i - size;
    if (leaving >= 0 && words[leaving]!.hit && !taken(leaving)) hits--;
    const start = Math.max(0, i - size + 1);
    if (hits > bestHits) {
      bestHits = hits;
      best = start;
    }
  }
  return best;
}

function render(text: string, words: readonly Word[], from: number, to: number): string {
  let out = '';
  for (let i = from; i < to; i++) {
    const word = words[i]!;
    // The text between two words as written (punctuation kept), whitespace runs as one space.
    if (i > from)
      out += text
        .slice(words[i - 1]!.end, word.start)
        .slice(0, 16)
        .replace(/\s+/gu, ' ');
    const piece = text.slice(word.start, word.end);
    out += word.hit ? `**${piece}**` : piece;
  }
  return out;
}

/** The passages of `text` that best show why it matched `query`. */
export function makeSnippet(text: string, query: string, options: Partial<SnippetOptions> = {}): string {
  const { maxWords, fragments } = { ...DEFAULTS, ...options };
  const terms = queryTerms(query);
  const words: Word[] = [];
  for (const match of text.matchAll(WORD)) {
    words.push({ start: match.index, end: match.index + match[0].length, hit: terms.has(stem(match[0])) });
  }
  if (words.length === 0) return '';
  const chosen: Array<[number, number]> = [];
  const taken = (i: number): boolean => chosen.some(([from, to]) => i >= from && i < to);
  for (let n = 0; n < fragments; n++) {
    const start = bestWindow(words, maxWords, taken);
    if (start < 0) break;
    // Trimmed so a second passage never repeats words of the first.
    let end = Math.min(words.length, start + maxWords);
    let from = start;
    while (from < end && taken(from)) from++;
    for (let i = from; i < end; i++) {
      if (taken(i)) {
        end = i;
        break;
      }
    }
    if (from >= end) break;
    chosen.push([from, end]);
  }
  if (chosen.length === 0) chosen.push([0, Math.min(words.length, maxWords)]);
  chosen.sort((a, b) => a[0] - b[0]);
  return chosen.map(([from, to]) => render(text, words, from, to)).join(DELIMITER);
}
