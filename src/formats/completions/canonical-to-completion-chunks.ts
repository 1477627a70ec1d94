// Canonical stream parts → legacy completion chunks (text_completion objects, as OpenAI streams them):
// one chunk per text delta, then a chunk with empty text and the finish reason. Usage follows the chat
// stream's rule (see ../chat/canonical-to-chat-chunks.ts): a last chunk with empty `choices` when
// `stream_options.include_usage` was asked, otherwise on the finish chunk. Reasoning, tool calls and
// native parts have no place in a legacy completion. An `error` part is thrown.
import type { StreamPart } from '../../canonical/model';
import { GatewayError } from '../../http/errors';
import { chatUsage } from '../chat/chat-reply-fields';
import { completionFinishReason, completionId } from './completion-reply-fields';
import type { CompletionFinishReason, TextCompletion } from './completions-wire-types';

export interface CompletionChunkStreamOptions {
  /** The caller's model id, echoed in every chunk. */
  model: string;
  /** The caller's `stream_options.include_usage`. */
  includeUsage?: boolean;
  now?: () => number;
}

export class CompletionChunkStream {
  private id = '';
  private created = 0;
  private started = false;
  private finished = false;

  constructor(private readonly options: CompletionChunkStreamOptions) {}

  private chunk(text: string, finishReason: CompletionFinishReason | null = null): TextCompletion {
    return {
      id: this.id,
      object: 'text_completion',
      created: this.created,
      model: this.options.model,
      choices: [{ text, index: 0, logprobs: null, finish_reason: finishReason }],
    };
  }

  private start(id: string, created: number): void {
    if (this.started) return;
    this.started = true;
    this.id = completionId(id);
    this.created = created > 0 ? created : Math.floor((this.options.now ?? Date.now)() / 1000);
  }

  /** The chunks one part produces. Throws the error of an `error` part. */
  push(part: StreamPart): TextCompletion[] {
    if (part.type === 'error') throw part.error;
    this.start(part.type === 'start' ? part.id : '', part.type === 'start' ? part.created : 0);
    if (part.type === 'text-delta' && part.delta !== '') return [this.chunk(part.delta)];
    if (part.type !== 'finish' || this.finished) return [];
    this.finished = true;
    const finishReason = completionFinishReason(part.finishReason);
    const usage = chatUsage(part.usage);
    if (this.options.includeUsage === true) return [this.chunk('', finishReason), { ...this.chunk(''), choices: [], usage }];
    return [{ ...this.chunk('', finishReason), usage }];
  }

  /** Call when the parts run out: a stream that never finished was cut, which is an error, not a reply. */
  end(): TextCompletion[] {
    if (!this.finished) throw new GatewayError('upstream_error', 'The upstream stream ended before the reply was complete.');
    return [];
  }
}

/** Drives a CompletionChunkStream over a part stream: the form the completions route consumes. */
export async function* canonicalToCompletionChunks(parts: AsyncIterable<StreamPart>, options: CompletionChunkStreamOptions): AsyncIterable<TextCompletion> {
  const stream = new CompletionChunkStream(options);
  for await (const part of parts) yield* stream.push(part);
  yield* stream.end();
}
