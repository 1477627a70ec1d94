// Canonical stream parts → legacy completion chunks (text_completion objects, as OpenAI streams them):
// one chunk per text delta, then a chunk with empty text and the finish reason. Usage follows the chat
// stream's rule (see ../chat/canonical-to-chat-chunks.ts): a last chunk with empty `choices` when
// `stream_options.include_usage` was asked, otherwise on the finish chunk. Reasoning, tool calls and
// native parts have no place in a legacy completion. An `error` part is thrown.
import type { StreamPart } from '../../canonical/model';
import type { ChatChunkStreamOptions } from '../chat/canonical-to-chat-chunks';
import { chatUsage } from '../chat/chat-reply-fields';
import { completionFinishReason, completionId } from './completion-reply-fields';
import type { CompletionFinishReason, TextCompletion } from './completions-wire-types';
import { renderParts, streamCutError, type PartRenderer } from '../shared/part-renderer';

/** The chat stream's options: the caller's model id and `stream_options.include_usage`. */
export type CompletionChunkStreamOptions = ChatChunkStreamOptions;

export class CompletionChunkStream implements PartRenderer<TextCompletion> {
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

  end(): TextCompletion[] {
    if (!this.finished) throw streamCutError();
    return [];
  }
}

/** The chunks of a part stream: the form the completions route consumes. */
export function canonicalToCompletionChunks(parts: AsyncIterable<StreamPart>, options: CompletionChunkStreamOptions): AsyncIterable<TextCompletion> {
  return renderParts(new CompletionChunkStream(options), parts);
}
