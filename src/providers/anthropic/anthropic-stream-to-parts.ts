// Anthropic's streamed events → canonical stream parts. One translator per request: it is stateful
// (open blocks by index, usage, stop reason) and sends the single `finish` at message_stop.
//
// Event order (https://docs.anthropic.com/en/docs/build-with-claude/streaming): message_start, then per
// content block content_block_start / content_block_delta* / content_block_stop, then message_delta
// (stop_reason, cumulative usage), message_stop; `ping` anywhere; `error` ends the stream.
// Tool calls are never lost: a tool_use block whose input came whole in content_block_start (no
// input_json_delta) gets it as one delta when the block stops. A stream that ends before message_stop
// is an error, never a reply cut short without a word.
import type { JsonObject, StreamPart } from '../../canonical/model';
import { GatewayError } from '../../http/errors';
import { jsonToolInputToText, type JsonToolPlan } from './anthropic-json-tool';
import { mapAnthropicFinishReason, mapAnthropicUsage, mergeAnthropicUsage, refusalOf } from './anthropic-to-canonical';
import type { AnthropicContentBlock, AnthropicContentDelta, AnthropicStreamEvent, AnthropicUsage } from './anthropic-wire-types';

interface OpenBlock {
  /** text / reasoning (thinking, redacted_thinking) / a tool call / the JSON tool / any other block type. */
  kind: 'text' | 'reasoning' | 'tool' | 'json' | 'native';
  /** The canonical block id. */
  id: string;
  /** What content_block_start carried (tool input when no delta follows; a native block's fields). */
  start: AnthropicContentBlock;
  /** input_json_delta fragments received so far (tool, json and native blocks). */
  input: string;
  /** A thinking block's signature (signature_delta, or content_block_start). */
  signature?: string;
  /** A text block dropped whole: forced JSON mode keeps the reply pure JSON. */
  suppressed?: boolean;
  /** The JSON tool's text block has been opened (text-start sent). */
  textOpen?: boolean;
}

export interface StreamPartsContext {
  jsonTool: JsonToolPlan | null;
  /** The model named in `start` when the upstream never sends message_start (never seen; cheap to survive). */
  model: string;
  now?: () => number;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

function parseOr(json: string, fallback: unknown): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return fallback;
  }
}

export class AnthropicStreamToParts {
  private readonly created: number;
  private readonly blocks = new Map<number, OpenBlock>();
  private readonly usage: AnthropicUsage = {};
  private stopReason: string | null = null;
  /** message_delta's `stop_details` (why a refusal refused). */
  private stopDetails: unknown;
  private stopSequence: string | null | undefined;
  private sawToolCall = false;
  private sawJson = false;
  private started = false;
  /** message_stop was seen and the finish part sent. */
  done = false;

  constructor(private readonly context: StreamPartsContext) {
    this.created = Math.floor((context.now ?? Date.now)() / 1000);
  }

  /** Translates one event; returns the parts it produces (often none). Throws on an `error` event. */
  push(event: AnthropicStreamEvent): StreamPart[] {
    if (this.done) return [];
    switch (event.type) {
      case 'message_start':
        return this.onMessageStart(event.message.id, event.message.model, event.message.usage);
      case 'content_block_start':
        return this.onBlockStart(event.index, event.content_block);
      case 'content_block_delta':
        return this.onBlockDelta(event.index, event.delta);
      case 'content_block_stop': {
        const block = this.blocks.get(event.index);
        this.blocks.delete(event.index);
        return block ? this.close(block) : [];
      }
      case 'message_delta':
        if (event.delta?.stop_reason) this.stopReason = event.delta.stop_reason;
        if (event.delta?.stop_details !== undefined) this.stopDetails = event.delta.stop_details;
        if (event.delta && 'stop_sequence' in event.delta) this.stopSequence = event.delta.stop_sequence ?? null;
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
      case 'ping':
        return [];
      default:
        return []; // event types added later
    }
  }

  /** The upstream's events ended. Throws unless message_stop was seen: a cut stream is an error, not a reply. */
  end(): void {
    if (!this.done) throw new GatewayError('upstream_error', 'The upstream stream ended before the message was complete.');
  }

  private onMessageStart(id: string | undefined, model: string | undefined, usage: AnthropicUsage | undefined): StreamPart[] {
    if (this.started) return [];
    this.started = true;
    mergeAnthropicUsage(this.usage, usage);
    return [{ type: 'start', id: id ?? `msg_${this.created}`, model: model ?? this.context.model, created: this.created }];
  }

  private onBlockStart(index: number, block: AnthropicContentBlock): StreamPart[] {
    const out = this.started ? [] : this.onMessageStart(undefined, undefined, undefined);
    const id = `b${index}`;
    const open: OpenBlock = { kind: 'native', id, start: block, input: '' };
    const json = this.context.jsonTool;
    switch (block.type) {
      case 'tool_use':
        if (json && block['name'] === json.name) {
          this.sawJson = true;
          open.kind = 'json';
          // An object schema streams as it comes; a wrapped one is unwrapped from the whole input at the end.
          if (json.wrappedKey === null) {
            open.textOpen = true;
            out.push({ type: 'text-start', id });
          }
        } else {
          this.sawToolCall = true;
          open.kind = 'tool';
          out.push({ type: 'tool-call-start', id, callId: text(block['id']), name: text(block['name']) });
        }
        break;
      case 'text': {
        open.kind = 'text';
        if (json?.forced === true) {
          open.suppressed = true;
          break;
        }
        out.push({ type: 'text-start', id });
        const initial = text(block['text']);
        if (initial !== '') out.push({ type: 'text-delta', id, delta: initial });
        break;
      }
      case 'thinking': {
        open.kind = 'reasoning';
        const signature = text(block['signature']);
        if (signature !== '') open.signature = signature;
        out.push({ type: 'reasoning-start', id });
        const initial = text(block['thinking']);
        if (initial !== '') out.push({ type: 'reasoning-delta', id, delta: initial });
        break;
      }
      case 'redacted_thinking':
        open.kind = 'reasoning';
        out.push({ type: 'reasoning-start', id, redactedData: text(block['data']) });
        break;
      default:
        // server_tool_use, web_search_tool_result, mcp_tool_use...: one native part when the block stops.
        break;
    }
    this.blocks.set(index, open);
    return out;
  }

  private onBlockDelta(index: number, delta: AnthropicContentDelta): StreamPart[] {
    const block = this.blocks.get(index);
    if (!block) return [];
    switch (delta.type) {
      case 'text_delta': {
        const fragment = text(delta['text']);
        return block.kind === 'text' && !block.suppressed && fragment !== '' ? [{ type: 'text-delta', id: block.id, delta: fragment }] : [];
      }
      case 'thinking_delta': {
        const fragment = text(delta['thinking']);
        return block.kind === 'reasoning' && fragment !== '' ? [{ type: 'reasoning-delta', id: block.id, delta: fragment }] : [];
      }
      case 'signature_delta':
        if (block.kind === 'reasoning') block.signature = text(delta['signature']);
        return [];
      case 'input_json_delta': {
        const fragment = text(delta['partial_json']);
        if (fragment === '') return [];
        block.input += fragment;
        if (block.kind === 'tool') return [{ type: 'tool-call-delta', id: block.id, delta: fragment }];
        if (block.kind === 'json' && block.textOpen === true) return [{ type: 'text-delta', id: block.id, delta: fragment }];
        return [];
      }
      default:
        // citations_delta and delta types added later: the canonical text part has no place for them.
        return [];
    }
  }

  private close(block: OpenBlock): StreamPart[] {
    const id = block.id;
    switch (block.kind) {
      case 'text':
        return block.suppressed === true ? [] : [{ type: 'text-end', id }];
      case 'reasoning':
        return [block.signature !== undefined ? { type: 'reasoning-end', id, signature: block.signature } : { type: 'reasoning-end', id }];
      case 'tool': {
        const out: StreamPart[] = [];
        // The whole input came in content_block_start (or it is empty): one delta with all of it.
        if (block.input === '') out.push({ type: 'tool-call-delta', id, delta: JSON.stringify(block.start['input'] ?? {}) });
        out.push({ type: 'tool-call-end', id });
        return out;
      }
      case 'json': {
        const plan = this.context.jsonTool;
        const out: StreamPart[] = [];
        if (plan && (plan.wrappedKey !== null || block.input === '')) {
          const input = block.input === '' ? block.start['input'] : parseOr(block.input, block.start['input']);
          if (block.textOpen !== true) out.push({ type: 'text-start', id });
          out.push({ type: 'text-delta', id, delta: jsonToolInputToText(input, plan) });
        }
        out.push({ type: 'text-end', id });
        return out;
      }
      case 'native': {
        const value: JsonObject = { ...block.start };
        if (block.input !== '') value['input'] = parseOr(block.input, block.start['input']);
        return [{ type: 'native', format: 'messages', value }];
      }
    }
  }

  private finish(): StreamPart[] {
    const out = this.started ? [] : this.onMessageStart(undefined, undefined, undefined);
    // Blocks never stopped still close (and a tool call still gets its input) before the finish.
    for (const index of [...this.blocks.keys()].sort((a, b) => a - b)) {
      const block = this.blocks.get(index);
      this.blocks.delete(index);
      if (block) out.push(...this.close(block));
    }
    if (this.stopReason === 'refusal') {
      // Known only now: the refusal is a block of its own after whatever text came before it.
      out.push({ type: 'text-start', id: 'refusal', refusal: true });
      out.push({ type: 'text-delta', id: 'refusal', delta: refusalOf(this.stopDetails) });
      out.push({ type: 'text-end', id: 'refusal' });
    }
    let finishReason = mapAnthropicFinishReason(this.stopReason);
    let rawFinishReason = this.stopReason ?? undefined;
    if (this.sawJson && !this.sawToolCall && finishReason === 'tool_calls') {
      // The JSON tool is ours: to the caller the model simply finished its answer.
      finishReason = 'stop';
      rawFinishReason = 'end_turn';
    }
    const finish: StreamPart = { type: 'finish', finishReason, usage: mapAnthropicUsage(this.usage) };
    if (rawFinishReason !== undefined) finish.rawFinishReason = rawFinishReason;
    if (this.stopSequence !== undefined) finish.stopSequence = this.stopSequence;
    out.push(finish);
    this.done = true;
    return out;
  }
}

/** Drives a translator over an event stream: the async form the provider uses. */
export async function* anthropicStreamToParts(events: AsyncIterable<AnthropicStreamEvent>, context: StreamPartsContext): AsyncIterable<StreamPart> {
  const translator = new AnthropicStreamToParts(context);
  for await (const event of events) {
    yield* translator.push(event);
    // Stop reading at message_stop: leaving the loop releases the upstream body.
    if (translator.done) return;
  }
  translator.end();
}
