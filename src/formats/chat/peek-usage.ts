// Reads token usage out of relayed reply bytes without parsing the reply: find the last `"usage"` key
// (Buffer.lastIndexOf is native and the usage object sits near the end of both a completion and the
// final stream chunk) and parse only its object. Works for chat completions and legacy completions.

const KEY = Buffer.from('"usage"');

export interface PeekedUsage {
  promptTokens: number;
  completionTokens: number;
  /** Of promptTokens, those read from a prompt cache (0 when the usage object says nothing of it). */
  cachedPromptTokens: number;
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/**
 * Cached prompt tokens as each wire reports them: chat's prompt_tokens_details.cached_tokens, the
 * Responses API's input_tokens_details.cached_tokens, Anthropic's cache_read_input_tokens.
 */
function cachedOf(usage: Record<string, unknown>): number {
  for (const details of [usage['prompt_tokens_details'], usage['input_tokens_details']]) {
    if (details !== null && typeof details === 'object') {
      const cached = (details as Record<string, unknown>)['cached_tokens'];
      if (typeof cached === 'number') return count(cached);
    }
  }
  return count(usage['cache_read_input_tokens']);
}

function objectEnd(bytes: Buffer, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < bytes.length; i += 1) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c /* \ */) i += 1;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b) depth += 1;
    else if (c === 0x7d) {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/**
 * The token counts of a usage object (chat's prompt/completion, messages' or Responses' input/output),
 * or null. Anthropic's input_tokens leaves out the prompt's cache reads and writes (reported apart): they
 * are added, so the prompt is the whole prompt as the canonical usage counts it.
 */
export function usageCounts(usage: unknown): PeekedUsage | null {
  if (usage === null || typeof usage !== 'object') return null;
  const fields = usage as Record<string, unknown>;
  const { prompt_tokens, completion_tokens, input_tokens, output_tokens } = fields;
  const prompt = prompt_tokens ?? input_tokens;
  const completion = completion_tokens ?? output_tokens;
  if (typeof prompt !== 'number' && typeof completion !== 'number') return null;
  const cacheWrites = prompt_tokens === undefined ? count(fields['cache_creation_input_tokens']) : 0;
  const cacheReads = prompt_tokens === undefined && !('input_tokens_details' in fields) ? count(fields['cache_read_input_tokens']) : 0;
  return {
    promptTokens: (typeof prompt === 'number' ? prompt : 0) + cacheReads + cacheWrites,
    completionTokens: typeof completion === 'number' ? completion : 0,
    cachedPromptTokens: cachedOf(fields),
  };
}

/** The last usage object with token counts in `bytes`, or null. */
export function peekUsage(bytes: Buffer): PeekedUsage | null {
  for (let at = bytes.lastIndexOf(KEY); at >= 0; at = at > 0 ? bytes.lastIndexOf(KEY, at - 1) : -1) {
    let i = at + KEY.length;
    while (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09) i += 1;
    if (bytes[i] !== 0x3a) continue;
    i += 1;
    while (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09) i += 1;
    if (bytes[i] !== 0x7b /* { */) continue; // "usage": null in intermediate stream chunks
    const end = objectEnd(bytes, i);
    if (end < 0) continue;
    try {
      const usage = usageCounts(JSON.parse(bytes.toString('utf8', i, end)));
      if (usage) return usage;
    } catch {
      // not a usage object after all: keep looking further back
    }
  }
  return null;
}

/**
 * Keeps the tail of a relayed stream that may hold the usage object: the chunk where the last
 * `"usage"` key appeared and what followed it (bounded), without copying anything else.
 */
export class UsageTail {
  private chunks: Buffer[] = [];
  private size = 0;
  private previous: Buffer | null = null;
  private beforePrevious: Buffer | null = null;

  push(chunk: Buffer): void {
    if (chunk.indexOf(KEY) >= 0) {
      // The previous chunk too: an object may begin just before a split.
      this.chunks = this.previous ? [this.previous, chunk] : [chunk];
      this.size = this.chunks.reduce((n, c) => n + c.length, 0);
    } else if (this.chunks.length > 0 && this.size < 16_384) {
      this.chunks.push(chunk);
      this.size += chunk.length;
    }
    this.beforePrevious = this.previous;
    this.previous = chunk;
  }

  usage(): PeekedUsage | null {
    if (this.chunks.length === 0) {
      // The key itself may have been split between the last two chunks.
      if (!this.previous) return null;
      return peekUsage(this.beforePrevious ? Buffer.concat([this.beforePrevious, this.previous]) : this.previous);
    }
    return peekUsage(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks));
  }
}
