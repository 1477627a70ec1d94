// Client format POST /v1/messages with stream: chat-completion chunks → Anthropic's event sequence
// (https://docs.anthropic.com/en/docs/build-with-claude/streaming): message_start, per block
// content_block_start / content_block_delta* / content_block_stop (text, thinking, tool_use with
// input_json_delta), message_delta (stop_reason, usage), message_stop.
//
// The handler frames each {event, data} as SSE and adds pings on silence. An error thrown by the chunk
// source is not caught here: it propagates so the handler can end the stream with an `error` event.
import type { ChatCompletionChunk, ChatUsage } from '../../providers/types';
import { mapFinishReasonToStopReason, type FinishReason } from '../../providers/anthropic/map-anthropic-stop-reason';
import { chatUsageToAnthropic, toMessageId } from './chat-completion-to-message';
import type { MessageEvent } from './messages-wire-types';

export type { MessageEvent };

type OpenBlock = { kind: 'text' } | { kind: 'thinking' } | { kind: 'tool'; toolIndex: number };

/** Stateful per stream: which Anthropic block is open, which index each tool call got. */
class MessageEventWriter {
  private started = false;
  private nextIndex = 0;
  /** The open text/thinking block, if any (at most one). */
  private current: { index: number; block: OpenBlock } | null = null;
  /** Tool-call index of the chat stream → its Anthropic block index (tool blocks stay open until the end
   *  or until text starts, so interleaved argument fragments of parallel calls all land). */
  private readonly tools = new Map<number, number>();
  private finishReason: FinishReason = null;
  private usage: ChatUsage | null = null;

  constructor(private readonly model: string) {}

  start(id: string | undefined): MessageEvent[] {
    if (this.started) return [];
    this.started = true;
    return [
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: {
            id: toMessageId(id),
            type: 'message',
            role: 'assistant',
            model: this.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            // Chat streams report usage at the end only: the totals go in message_delta.
            usage: { input_tokens: 0, output_tokens: 0 },
          },
        },
      },
    ];
  }

  private stop(index: number): MessageEvent {
    return { event: 'content_block_stop', data: { type: 'content_block_stop', index } };
  }

  private closeCurrent(out: MessageEvent[]): void {
    if (this.current) out.push(this.stop(this.current.index));
    this.current = null;
  }

  private closeTools(out: MessageEvent[]): void {
    for (const index of this.tools.values()) out.push(this.stop(index));
    this.tools.clear();
  }

  private openStreamingBlock(kind: 'text' | 'thinking', out: MessageEvent[]): number {
    if (this.current?.block.kind === kind) return this.current.index;
    this.closeCurrent(out);
    this.closeTools(out);
    const index = this.nextIndex++;
    this.current = { index, block: { kind } };
    const contentBlock = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
    out.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: contentBlock } });
    return index;
  }

  chunk(chunk: ChatCompletionChunk): MessageEvent[] {
    const out = this.start(chunk.id);
    if (chunk.usage) this.usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      if (choice.index !== 0) continue; // /v1/messages has one reply; n > 1 is not representable
      const delta = choice.delta ?? {};
      const reasoning = delta['reasoning_content'];
      if (typeof reasoning === 'string' && reasoning !== '') {
        const index = this.openStreamingBlock('thinking', out);
        out.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: reasoning } } });
      }
      if (typeof delta.content === 'string' && delta.content !== '') {
        const index = this.openStreamingBlock('text', out);
        out.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: delta.content } } });
      }
      for (const call of delta.tool_calls ?? []) {
        let index = this.tools.get(call.index);
        if (index === undefined) {
          this.closeCurrent(out);
          index = this.nextIndex++;
          this.tools.set(call.index, index);
          out.push({
            event: 'content_block_start',
            data: {
              type: 'content_block_start',
              index,
              content_block: {
                type: 'tool_use',
                id: call.id ?? `toolu_${toMessageId(chunk.id).slice(4)}_${call.index}`,
                name: call.function?.name ?? '',
                input: {},
              },
            },
          });
        }
        const fragment = call.function?.arguments;
        if (typeof fragment === 'string' && fragment !== '') {
          out.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: fragment } } });
        }
      }
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    return out;
  }

  end(): MessageEvent[] {
    const out = this.start(undefined);
    this.closeCurrent(out);
    const sawTools = this.tools.size > 0;
    this.closeTools(out);
    const stopReason = sawTools && this.finishReason === 'stop' ? 'tool_use' : mapFinishReasonToStopReason(this.finishReason);
    out.push({
      event: 'message_delta',
      data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: chatUsageToAnthropic(this.usage) },
    });
    out.push({ event: 'message_stop', data: { type: 'message_stop' } });
    return out;
  }
}

export async function* chatChunksToMessageEvents(chunks: AsyncIterable<ChatCompletionChunk>, model: string): AsyncIterable<MessageEvent> {
  const writer = new MessageEventWriter(model);
  for await (const chunk of chunks) yield* writer.chunk(chunk);
  yield* writer.end();
}
