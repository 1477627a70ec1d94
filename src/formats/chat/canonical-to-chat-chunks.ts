// Canonical stream parts → chat.completion.chunk objects (https://platform.openai.com/docs/api-reference/chat/streaming),
// the stream a chat completions caller gets from a translated provider. One ChatChunkStream per
// request: it owns the stream's state (ids, tool-call indexes, whether tools were called).
//
// The first chunk carries the role and an empty content, as OpenAI's does; text deltas follow as
// `content` (those of a refusal block as `refusal`), reasoning deltas as `reasoning_content`; a tool call opens with its index, id, type, name
// and empty arguments, then argument fragments under the same index. The finish chunk carries the
// finish reason. Usage: with `stream_options.include_usage` it comes as OpenAI sends it, a last chunk
// with an empty `choices`; otherwise it rides on the finish chunk, so that metering still sees it and
// clients that read choices[0] of every chunk never meet an empty choices list they did not ask for.
// A tool call right after a signature-only reasoning block (a Gemini thought signature) carries it as
// `extra_content.google.thought_signature`, as canonicalToChatCompletion does. Native parts have no
// chat form and are skipped. An `error` part is thrown: the route ends the
// stream with its error event.
import type { StreamPart } from '../../canonical/model';
import { renderParts, streamCutError, type PartRenderer } from '../shared/part-renderer';
import { chatCompletionId, chatFinishReason, chatUsage } from './chat-reply-fields';
import type { ChatChunkDelta, ChatChunkToolCall, ChatCompletionChunk, ChatFinishReason } from './chat-wire-types';

export interface ChatChunkStreamOptions {
  /** The caller's model id, echoed in every chunk. */
  model: string;
  /** The caller's `stream_options.include_usage`. */
  includeUsage?: boolean;
  now?: () => number;
}

export class ChatChunkStream implements PartRenderer<ChatCompletionChunk> {
  private id = '';
  private created = 0;
  private started = false;
  private finished = false;
  /** Canonical tool-call block id → its chat tool-call index (0, 1, ... in order of appearance). */
  private readonly toolIndexes = new Map<string, number>();
  /** Open reasoning blocks: whether each is only a signature so far (no text, nothing redacted). */
  private readonly reasoning = new Map<string, boolean>();
  /** Open refusal blocks (their deltas go out as `refusal`, not `content`). */
  private readonly refusals = new Set<string>();
  /** The signature of a signature-only reasoning block that just ended, for the tool call that follows. */
  private signature: string | undefined;

  constructor(private readonly options: ChatChunkStreamOptions) {}

  private chunk(delta: ChatChunkDelta, finishReason: ChatFinishReason | null = null): ChatCompletionChunk {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.options.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    };
  }

  private start(id: string, created: number, out: ChatCompletionChunk[]): void {
    if (this.started) return;
    this.started = true;
    this.id = chatCompletionId(id);
    this.created = created > 0 ? created : Math.floor((this.options.now ?? Date.now)() / 1000);
    out.push(this.chunk({ role: 'assistant', content: '' }));
  }

  /** The chunks one part produces (often one, sometimes none). Throws the error of an `error` part. */
  push(part: StreamPart): ChatCompletionChunk[] {
    const out: ChatCompletionChunk[] = [];
    if (part.type === 'start') {
      this.start(part.id, part.created, out);
      return out;
    }
    if (part.type === 'error') throw part.error;
    this.start('', 0, out); // a source that skipped `start` still opens with the role
    const signature = this.signature;
    this.signature = undefined;
    switch (part.type) {
      case 'text-start':
        if (part.refusal === true) this.refusals.add(part.id);
        break;
      case 'text-delta':
        if (part.delta !== '') out.push(this.chunk(this.refusals.has(part.id) ? { refusal: part.delta } : { content: part.delta }));
        break;
      case 'text-end':
        this.refusals.delete(part.id);
        break;
      case 'reasoning-start':
        this.reasoning.set(part.id, part.redactedData === undefined && part.encryptedContent === undefined);
        break;
      case 'reasoning-delta':
        if (part.delta === '') break;
        this.reasoning.set(part.id, false);
        out.push(this.chunk({ reasoning_content: part.delta }));
        break;
      case 'reasoning-end':
        if (this.reasoning.get(part.id) === true && part.signature !== undefined) this.signature = part.signature;
        this.reasoning.delete(part.id);
        break;
      case 'tool-call-start': {
        const index = this.toolIndexes.size;
        this.toolIndexes.set(part.id, index);
        const call: ChatChunkToolCall = { index, id: part.callId, type: 'function', function: { name: part.name, arguments: '' } };
        if (signature !== undefined) call.extra_content = { google: { thought_signature: signature } };
        out.push(this.chunk({ tool_calls: [call] }));
        break;
      }
      case 'tool-call-delta': {
        const index = this.toolIndexes.get(part.id);
        if (index !== undefined && part.delta !== '') out.push(this.chunk({ tool_calls: [{ index, function: { arguments: part.delta } }] }));
        break;
      }
      case 'finish': {
        if (this.finished) break;
        this.finished = true;
        const finishReason = chatFinishReason(part.finishReason, this.toolIndexes.size > 0);
        const usage = chatUsage(part.usage);
        if (this.options.includeUsage === true) {
          out.push(this.chunk({}, finishReason));
          out.push({ ...this.chunk({}), choices: [], usage });
        } else {
          out.push({ ...this.chunk({}, finishReason), usage });
        }
        break;
      }
      case 'tool-call-end':
      case 'native':
      case 'server-tool-result': // the gateway's tool loop serves Responses only; chat has no item for it
        break;
    }
    return out;
  }

  end(): ChatCompletionChunk[] {
    if (!this.finished) throw streamCutError();
    return [];
  }
}

/** The chunks of a part stream: the form the chat route consumes. */
export function canonicalToChatChunks(parts: AsyncIterable<StreamPart>, options: ChatChunkStreamOptions): AsyncIterable<ChatCompletionChunk> {
  return renderParts(new ChatChunkStream(options), parts);
}
