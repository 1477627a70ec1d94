// A bound on how deep JSON nests. JSON.parse takes any depth, but what walks a parsed value
// recursively (JSON.stringify, structuredClone, the DLP walks, the format conversions) runs out of stack
// a few thousand levels down, and a request nested that deep would be answered with a 500. The bound is
// far above what real requests nest (JSON Schemas, tool arguments) and far below where the stack ends.
export const MAX_JSON_DEPTH = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** The index after the JSON string whose opening quote is at `at` in `text` (the text's length if unterminated). */
export function jsonStringEnd(text: string | Buffer, at: number): number {
  let from = at + 1;
  for (;;) {
    const quote = typeof text === 'string' ? text.indexOf('"', from) : text.indexOf(QUOTE, from);
    if (quote < 0) return text.length;
    // A quote preceded by an odd number of backslashes is escaped.
    let slashes = 0;
    while (codeAt(text, quote - 1 - slashes) === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

const codeAt = (text: string | Buffer, at: number): number | undefined => (typeof text === 'string' ? text.charCodeAt(at) : text[at]);

/**
 * Whether the JSON in `text` (a string or its UTF-8 bytes) nests arrays and objects more than `max`
 * levels deep. One pass, strings skipped whole; meant for text JSON.parse accepted.
 */
export function nestsDeeperThan(text: string | Buffer, max: number = MAX_JSON_DEPTH): boolean {
  if (text.length <= max) return false; // every level takes at least one character
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = codeAt(text, i);
    if (code === QUOTE) {
      i = jsonStringEnd(text, i) - 1;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth += 1;
      if (depth > max) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return false;
}

/** JSON.parse for JSON carried inside a request's text (tool-call arguments): too deep is a SyntaxError. */
export function parseBoundedJson(text: string): unknown {
  if (nestsDeeperThan(text)) throw new SyntaxError(`JSON nested more than ${MAX_JSON_DEPTH} levels deep`);
  return JSON.parse(text) as unknown;
}
