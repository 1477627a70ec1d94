// The bench upstream's OpenAI Responses replies (POST /v1/responses), in the real wire format: a
// response object, and its SSE stream as OpenAI writes it (`event:` and `data:` lines, `sequence_number`
// in each payload from 0, no `id:` lines, no `[DONE]`). Every reply gets an id of its own, since a
// gateway storing responses keys them by id. Built as bytes once: a reply only splices its id in.

const TEXT = 'The quick brown fox jumps over the lazy dog.';
const DELTA = 'token ';
const MESSAGE_ID = 'msg_bench';

type Json = Record<string, unknown>;

/** Stands for the response id in the prepared text (nothing JSON escapes, nothing a reply contains). */
const ID_MARK = '@@response-id@@';

/** Events in one streamed reply of `chunks` text deltas: four opening, the deltas, four closing. */
export const responsesStreamEventCount = (chunks: number): number => 4 + chunks + 4;

function responseObject(status: 'in_progress' | 'completed', output: Json[], usage: Json | null): Json {
  return {
    id: ID_MARK,
    object: 'response',
    created_at: 1_700_000_000,
    status,
    ...(status === 'completed' ? { completed_at: 1_700_000_001 } : {}),
    background: false,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: 'bench-model',
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage,
    metadata: {},
  };
}

/** A reply's bytes with the response id spliced in where ID_MARK stands (zero or more times). */
class Spliced {
  private readonly parts: Buffer[];

  constructor(text: string) {
    this.parts = text.split(ID_MARK).map((part) => Buffer.from(part));
  }

  with(id: Buffer): Buffer {
    if (this.parts.length === 1) return this.parts[0]!;
    const pieces: Buffer[] = [];
    this.parts.forEach((part, i) => {
      if (i > 0) pieces.push(id);
      pieces.push(part);
    });
    return Buffer.concat(pieces);
  }
}

const usage = (output: number): Json => ({
  input_tokens: 12,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 12 + output,
});

const message = (text: string, status: 'in_progress' | 'completed'): Json => ({
  id: MESSAGE_ID,
  type: 'message',
  status,
  role: 'assistant',
  content: status === 'completed' ? [{ type: 'output_text', text, annotations: [], logprobs: [] }] : [],
});

const sse = (event: Json): string => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`;

/** The replies of one upstream process: ids numbered from 0, `chunks` text deltas per stream. */
export class ResponsesReplies {
  /** The non-streamed reply: a completed response object. */
  private readonly json = new Spliced(JSON.stringify(responseObject('completed', [message(TEXT, 'completed')], usage(10))));
  /** Opening events and the first delta, in one write. */
  private readonly opening: Spliced;
  /** Deltas 1 .. chunks-1, one write each (their numbers differ, their bytes are made once). */
  private readonly deltas: Buffer[] = [];
  /** The done events and response.completed, in one write. */
  private readonly closing: Spliced;
  private counter = 0;
  private readonly prefix = `resp_bench${process.pid.toString(36)}_`;

  constructor(readonly chunks: number) {
    let sequence = 0;
    const next = (payload: Json): string => sse({ ...payload, sequence_number: sequence++ });
    const delta = (): string =>
      next({ type: 'response.output_text.delta', item_id: MESSAGE_ID, output_index: 0, content_index: 0, delta: DELTA, logprobs: [] });
    this.opening = new Spliced(
      next({ type: 'response.created', response: responseObject('in_progress', [], null) }) +
        next({ type: 'response.in_progress', response: responseObject('in_progress', [], null) }) +
        next({ type: 'response.output_item.added', output_index: 0, item: message('', 'in_progress') }) +
        next({
          type: 'response.content_part.added',
          item_id: MESSAGE_ID,
          output_index: 0,
          content_index: 0,
          part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
        }) +
        delta(),
    );
    for (let i = 1; i < chunks; i++) this.deltas.push(Buffer.from(delta()));
    const text = DELTA.repeat(chunks);
    const done = message(text, 'completed');
    this.closing = new Spliced(
      next({ type: 'response.output_text.done', item_id: MESSAGE_ID, output_index: 0, content_index: 0, text, logprobs: [] }) +
        next({
          type: 'response.content_part.done',
          item_id: MESSAGE_ID,
          output_index: 0,
          content_index: 0,
          part: { type: 'output_text', text, annotations: [], logprobs: [] },
        }) +
        next({ type: 'response.output_item.done', output_index: 0, item: done }) +
        next({ type: 'response.completed', response: responseObject('completed', [done], usage(chunks)) }),
    );
  }

  /** A fresh response id (unique in this process). */
  newId(): Buffer {
    return Buffer.from(`${this.prefix}${(this.counter++).toString(36)}`);
  }

  body(id: Buffer): Buffer {
    return this.json.with(id);
  }

  /** Write i of a stream: 0 the opening, 1 .. chunks-1 a delta, chunks the closing. */
  streamWrite(i: number, id: Buffer): Buffer {
    if (i === 0) return this.opening.with(id);
    if (i < this.chunks) return this.deltas[i - 1]!;
    return this.closing.with(id);
  }
}
