// Anthropic's streamed events → chat-completion chunks. One translator per request: it is stateful
// (block index → tool-call index, usage, stop reason) and flushes the finish and usage chunks at the end.
//
// Event order (https://docs.anthropic.com/en/docs/build-with-claude/streaming): message_start, then per
// content block content_block_start / content_block_delta* / content_block_stop, then message_delta
// (stop_reason, cumulative usage), message_stop; `ping` anywhere; `error` ends the stream.
// Tool calls are never lost: a tool_use block whose input arrived whole in content_block_start (no
// input_json_delta) still gets its arguments, emitted when the block stops.
import { GatewayError } from '../../http/errors';
import type { ChatCompletionChunk } from '../types';
import { jsonToolInputToContent, type JsonToolPlan } from './anthropic-json-mode';
import type { AnthropicContentBlock, AnthropicStreamEvent, AnthropicUsage } from './anthropic-wire-types';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason';
import { mapAnthropicUsage, mergeAnthropicUsage } from './map-anthropic-usage';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

interface OpenBlock {
  kind: 'text' | 'tool' | 'json' | 'thinking' | 'other';
  /** Tool-call index in the chat-completion stream (tool blocks). */
  toolIndex: number;
  /** What the block carried in content_block_start (tool input when no delta follows). */
  start: AnthropicContentBlock;
  /** Argument text emitted so far (tool blocks) or buffered (wrapped JSON blocks). */
  text: string;
}

export interface StreamContext {
  model: string;
  jsonTool: JsonToolPlan | null;
  /** `stream_options.include_usage`: usage comes as a last chunk with no choices, as OpenAI sends it.
   *  Otherwise it rides on the finish chunk (metering still sees it; clients reading choices[0] of
   *  every chunk never meet an empty choices list they did not ask for). */
  includeUsage?: boolean;
  now?: () => number;
}

export class AnthropicStreamToChunks {
  private id = '';
  private readonly created: number;
  private readonly blocks = new Map<number, OpenBlock>();
  private nextToolIndex = 0;
  private usage: AnthropicUsage = {};
  private stopReason: string | null = null;
  private sawToolCall = false;
  private sawJson = false;
  private started = false;
  private finished = false;

  constructor(private readonly context: StreamContext) {
    this.created = Math.floor((context.now ?? Date.now)() / 1000);
  }

  private chunk(delta: Delta, finishReason: ChatCompletionChunk['choices'][number]['finish_reason'] = null): ChatCompletionChunk {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.context.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    };
  }

  /** Translates one event; returns the chunks it produces (often none). Throws on an `error` event. */
  push(event: AnthropicStreamEvent): ChatCompletionChunk[] {
    switch (event.type) {
      case 'message_start':
        return this.onMessageStart(event.message.id, event.message.usage);
      case 'content_block_start':
        return this.onBlockStart(event.index, event.content_block);
      case 'content_block_delta':
        return this.onBlockDelta(event.index, event.delta);
      case 'content_block_stop':
        return this.onBlockStop(event.index);
      case 'message_delta':
        if (event.delta?.stop_reason) this.stopReason = event.delta.stop_reason;
        mergeAnthropicUsage(this.usage, event.usage);
        return [];
      case 'message_stop':
        return this.finish();
      case 'error': {
        const error = event.error ?? { type: 'api_error', message: 'unknown error' };
        throw new GatewayError('upstream_error', `The upstream stream failed (${error.type}): ${error.message}`, {
          type: error.type === 'overloaded_error' ? 'server_error' : 'upstream_error',
        });
      }
      default:
        return []; // ping and event types added later
    }
  }

  private onMessageStart(id: string | undefined, usage: AnthropicUsage | undefined): ChatCompletionChunk[] {
    if (this.started) return [];
    this.started = true;
    this.id = id ?? `chatcmpl-${this.created}`;
    mergeAnthropicUsage(this.usage, usage);
    return [this.chunk({ role: 'assistant', content: '' })];
  }

  /** A stream that skipped message_start (never seen, but cheap to survive) still starts with the role. */
  private ensureStarted(out: ChatCompletionChunk[]): void {
    if (!this.started) out.push(...this.onMessageStart(undefined, undefined));
  }

  private onBlockStart(index: number, block: AnthropicContentBlock): ChatCompletionChunk[] {
    const out: ChatCompletionChunk[] = [];
    this.ensureStarted(out);
    const json = this.context.jsonTool;
    if (block.type === 'tool_use' && json && block['name'] === json.name) {
      this.sawJson = true;
      this.blocks.set(index, { kind: 'json', toolIndex: -1, start: block, text: '' });
      return out;
    }
    if (block.type === 'tool_use') {
      const toolIndex = this.nextToolIndex++;
      this.sawToolCall = true;
      this.blocks.set(index, { kind: 'tool', toolIndex, start: block, text: '' });
      out.push(
        this.chunk({
          tool_calls: [{ index: toolIndex, id: String(block['id']), type: 'function', function: { name: String(block['name']), arguments: '' } }],
        }),
      );
      return out;
    }
    if (block.type === 'text') {
      this.blocks.set(index, { kind: 'text', toolIndex: -1, start: block, text: '' });
      const text = block['text'];
      if (typeof text === 'string' && text !== '' && !this.suppressText()) out.push(this.chunk({ content: text }));
      return out;
    }
    if (block.type === 'thinking') {
      this.blocks.set(index, { kind: 'thinking', toolIndex: -1, start: block, text: '' });
      return out;
    }
    this.blocks.set(index, { kind: 'other', toolIndex: -1, start: block, text: '' });
    return out;
  }

  /** Forced JSON mode: the content is the tool input alone. */
  private suppressText(): boolean {
    return this.context.jsonTool?.forced === true;
  }

  private onBlockDelta(index: number, delta: { type: string; [key: string]: unknown }): ChatCompletionChunk[] {
    const out: ChatCompletionChunk[] = [];
    this.ensureStarted(out);
    const block = this.blocks.get(index);
    if (delta.type === 'text_delta' && typeof delta['text'] === 'string') {
      if (!this.suppressText() && delta['text'] !== '') out.push(this.chunk({ content: delta['text'] }));
    } else if (delta.type === 'input_json_delta' && typeof delta['partial_json'] === 'string' && block) {
      const fragment = delta['partial_json'];
      if (fragment === '') return out;
      if (block.kind === 'tool') {
        block.text += fragment;
        out.push(this.chunk({ tool_calls: [{ index: block.toolIndex, function: { arguments: fragment } }] }));
      } else if (block.kind === 'json') {
        block.text += fragment;
        // Unwrapping a non-object schema needs the whole input: buffered until the block stops.
        if (this.context.jsonTool?.wrappedKey === null) out.push(this.chunk({ content: fragment }));
      }
    } else if (delta.type === 'thinking_delta' && typeof delta['thinking'] === 'string') {
      out.push(this.chunk({ reasoning_content: delta['thinking'] }));
    }
    return out;
  }

  private onBlockStop(index: number): ChatCompletionChunk[] {
    const block = this.blocks.get(index);
    this.blocks.delete(index);
    if (!block) return [];
    const startInput = (block.start as { input?: unknown }).input;
    if (block.kind === 'tool' && block.text === '') {
      // The whole input came in content_block_start (or it is empty): emit it now.
      return [this.chunk({ tool_calls: [{ index: block.toolIndex, function: { arguments: JSON.stringify(startInput ?? {}) } }] })];
    }
    if (block.kind === 'json' && this.context.jsonTool) {
      const plan = this.context.jsonTool;
      if (plan.wrappedKey !== null || block.text === '') {
        const input = block.text === '' ? startInput : parseOr(block.text, startInput);
        return [this.chunk({ content: jsonToolInputToContent(input, plan) })];
      }
    }
    return [];
  }

  /** The finish and usage chunks; call when the upstream stream ends. Idempotent. Throws when the upstream
   *  stream ended before the message was complete (no stop reason): a cut stream is an error, not a reply. */
  finish(): ChatCompletionChunk[] {
    if (this.finished) return [];
    if (this.stopReason === null) {
      throw new GatewayError('upstream_error', 'The upstream stream ended before the message was complete.');
    }
    this.finished = true;
    const out: ChatCompletionChunk[] = [];
    // Blocks never stopped (a stream cut right after message_delta) still flush their pending input.
    for (const index of [...this.blocks.keys()]) out.push(...this.onBlockStop(index));
    let finish = mapAnthropicStopReason(this.stopReason);
    if (this.sawJson && !this.sawToolCall && finish === 'tool_calls') finish = 'stop';
    const usage = mapAnthropicUsage(this.usage);
    if (this.context.includeUsage === true) {
      out.push(this.chunk({}, finish));
      out.push({ ...this.chunk({}), choices: [], usage });
    } else {
      out.push({ ...this.chunk({}, finish), usage });
    }
    return out;
  }

  /** Usage so far (for recording when a stream is aborted). */
  currentUsage(): ReturnType<typeof mapAnthropicUsage> {
    return mapAnthropicUsage(this.usage);
  }
}

function parseOr(text: string, fallback: unknown): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return fallback;
  }
}

/** Drives a translator over an event stream: the async form the providers use. */
export async function* anthropicStreamToChunks(events: AsyncIterable<AnthropicStreamEvent>, context: StreamContext): AsyncIterable<ChatCompletionChunk> {
  const translator = new AnthropicStreamToChunks(context);
  for await (const event of events) {
    yield* translator.push(event);
    if (event.type === 'message_stop') return;
  }
  yield* translator.finish();
}
