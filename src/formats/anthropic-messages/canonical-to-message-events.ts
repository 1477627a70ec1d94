// Canonical stream parts → Anthropic's event sequence (https://docs.anthropic.com/en/docs/build-with-claude/streaming),
// the stream a /v1/messages caller gets from a translated provider: message_start, per content block
// content_block_start / content_block_delta* / content_block_stop, message_delta (stop_reason, usage),
// message_stop. One MessageEventStream per request: it owns the stream's state (block indexes).
//
// Each canonical block becomes one Anthropic block, numbered in the order blocks open. Blocks may
// interleave (parallel tool calls whose argument fragments alternate): their deltas carry their own
// index, which is how Anthropic's SDKs assemble them. A reasoning block closes with its signature as a
// signature_delta, as Anthropic sends it; a native Messages block (server_tool_use, a tool result...)
// comes whole in its content_block_start, then stops. Usage is known only at the end: message_start
// reports zero and message_delta the totals. An `error` part is thrown: the route ends the stream with
// Anthropic's `error` event.
import type { StreamPart } from '../../canonical/model';
import { messageId, messagesStopReason, messagesUsage } from './messages-reply-fields';
import type { MessageEvent } from './messages-wire-types';
import { renderParts, streamCutError, type PartRenderer } from '../shared/part-renderer';

export class MessageEventStream implements PartRenderer<MessageEvent> {
  private started = false;
  private finished = false;
  private nextIndex = 0;
  /** Open canonical block id → its Anthropic block index. */
  private readonly open = new Map<string, number>();
  private calledTools = false;
  /**
   * Refusal blocks (TextPart.refusal), held until the finish: a stop_reason `refusal` says it, as in
   * canonicalToMessage (dropped); otherwise they are text, sent as blocks before the message ends.
   */
  private readonly refusals = new Map<string, string>();

  /** `model` is the caller's model id, echoed in message_start. */
  constructor(private readonly model: string) {}

  private start(id: string, out: MessageEvent[]): void {
    if (this.started) return;
    this.started = true;
    out.push({
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id: messageId(id),
          type: 'message',
          role: 'assistant',
          model: this.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, output_tokens: 0 },
        },
      },
    });
  }

  private openBlock(id: string | null, contentBlock: Record<string, unknown>, out: MessageEvent[]): number {
    const index = this.nextIndex++;
    if (id !== null) this.open.set(id, index);
    out.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: contentBlock } });
    return index;
  }

  private delta(id: string, delta: Record<string, unknown>, out: MessageEvent[]): void {
    const index = this.open.get(id);
    if (index !== undefined) out.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta } });
  }

  private stop(id: string, out: MessageEvent[]): void {
    const index = this.open.get(id);
    if (index === undefined) return;
    this.open.delete(id);
    out.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  }

  /** The events one part produces. Throws the error of an `error` part. */
  push(part: StreamPart): MessageEvent[] {
    const out: MessageEvent[] = [];
    if (part.type === 'error') throw part.error;
    if (this.finished) return out;
    this.start(part.type === 'start' ? part.id : '', out);
    switch (part.type) {
      case 'start':
        break;
      case 'text-start':
        if (part.refusal === true) this.refusals.set(part.id, '');
        else this.openBlock(part.id, { type: 'text', text: '' }, out);
        break;
      case 'text-delta': {
        const held = this.refusals.get(part.id);
        if (held !== undefined) this.refusals.set(part.id, held + part.delta);
        else if (part.delta !== '') this.delta(part.id, { type: 'text_delta', text: part.delta }, out);
        break;
      }
      case 'reasoning-start':
        this.openBlock(
          part.id,
          part.redactedData !== undefined ? { type: 'redacted_thinking', data: part.redactedData } : { type: 'thinking', thinking: '', signature: '' },
          out,
        );
        break;
      case 'reasoning-delta':
        if (part.delta !== '') this.delta(part.id, { type: 'thinking_delta', thinking: part.delta }, out);
        break;
      case 'reasoning-end':
        if (part.signature !== undefined) this.delta(part.id, { type: 'signature_delta', signature: part.signature }, out);
        this.stop(part.id, out);
        break;
      case 'tool-call-start':
        this.calledTools = true;
        this.openBlock(part.id, { type: 'tool_use', id: part.callId, name: part.name, input: {} }, out);
        break;
      case 'tool-call-delta':
        if (part.delta !== '') this.delta(part.id, { type: 'input_json_delta', partial_json: part.delta }, out);
        break;
      case 'text-end':
      case 'tool-call-end':
        this.stop(part.id, out);
        break;
      case 'server-tool-result': // the gateway's tool loop serves Responses only
        break;
      case 'native':
        if (part.format === 'messages') {
          const index = this.openBlock(null, part.value, out);
          out.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
        }
        break;
      case 'finish': {
        this.finished = true;
        // Blocks the source never closed are closed before the message ends.
        for (const id of [...this.open.keys()]) this.stop(id, out);
        const stopReason = messagesStopReason({ ...part, calledTools: this.calledTools });
        if (stopReason !== 'refusal') {
          for (const [id, text] of this.refusals) {
            this.openBlock(id, { type: 'text', text: '' }, out);
            if (text !== '') this.delta(id, { type: 'text_delta', text }, out);
            this.stop(id, out);
          }
        }
        out.push({
          event: 'message_delta',
          data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: part.stopSequence ?? null }, usage: messagesUsage(part.usage) },
        });
        out.push({ event: 'message_stop', data: { type: 'message_stop' } });
        break;
      }
    }
    return out;
  }

  end(): MessageEvent[] {
    if (!this.finished) throw streamCutError();
    return [];
  }
}

/** The events of a part stream: the form the messages route consumes. */
export function canonicalToMessageEvents(parts: AsyncIterable<StreamPart>, model: string): AsyncIterable<MessageEvent> {
  return renderParts(new MessageEventStream(model), parts);
}
