// An OpenAI-format chat stream (SSE `data: {chunk}` events ending with `data: [DONE]`) to canonical
// stream parts. One state object per call (ChatStreamState); only choice 0 is read (the canonical
// reply has one).
// - `start` comes from the first chunk's id, model and created;
// - content deltas fill one text block, refusal deltas another marked `refusal`; `reasoning_content` / `reasoning` deltas fill a reasoning block, closed when the answer
//   begins;
// - tool_calls deltas are grouped by their `index`: a call's block starts once its name is known
//   (id and name come first in practice; deltas before that are held), argument deltas follow;
// - usage may come in a chunk of its own after the finish_reason (stream_options.include_usage), so
//   the one `finish` is sent at `[DONE]`, with every open block closed before it.
// Failures throw a GatewayError rather than end the stream quietly: an `{"error": ...}` event, an event
// that is not JSON, a stream that ends before any finish_reason. A stream that reached a finish_reason
// and then ended cleanly without `[DONE]` is complete (some OpenAI-compatible servers omit it); a
// connection cut mid-stream is already an error of the transport.
import { NO_USAGE, type StreamPart, type Usage } from '../../canonical/model';
import { GatewayError } from '../../http/errors';
import { parseSse } from '../http/sse-parser';
import { withheld } from '../http/upstream-errors';
import { errorMessageOf, newToolCallId, reasoningOf } from './convert-openai-chat-completion';
import { convertOpenAiChatUsage } from './convert-openai-chat-usage';
import { mapOpenAiFinishReason } from './map-openai-finish-reason';
import type { OpenAiChatChunk, OpenAiChatChunkToolCall } from './openai-chat-wire-types';

interface ToolCallState {
  blockId: string;
  callId: string | undefined;
  name: string | undefined;
  started: boolean;
  /** Argument text received before the name was known. */
  held: string;
}

export class ChatStreamState {
  private started = false;
  private blocks = 0;
  private textBlock: string | undefined;
  private refusalBlock: string | undefined;
  private reasoningBlock: string | undefined;
  private readonly toolCalls = new Map<number, ToolCallState>();
  private finishReason: string | null | undefined;
  private usage: Usage | undefined;

  constructor(
    private readonly providerName: string,
    private readonly upstreamModel: string,
  ) {}

  private nextBlockId(): string {
    return `b${this.blocks++}`;
  }

  /** The parts for one parsed stream event. */
  push(chunk: OpenAiChatChunk): StreamPart[] {
    const failure = errorMessageOf(chunk.error);
    if (failure !== undefined) {
      throw new GatewayError('upstream_error', `Upstream provider ${this.providerName} failed mid-stream: ${failure}`, { wireCode: 'stream_error' });
    }
    const out: StreamPart[] = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: chunk.id ?? '', model: chunk.model ?? this.upstreamModel, created: chunk.created ?? Math.floor(Date.now() / 1000) });
    }
    if (chunk.usage) this.usage = convertOpenAiChatUsage(chunk.usage);
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    choices.forEach((choice, position) => {
      if ((choice.index ?? position) !== 0) return;
      const delta = choice.delta ?? {};
      const reasoning = reasoningOf(delta);
      if (reasoning !== '') {
        if (this.reasoningBlock === undefined) {
          this.reasoningBlock = this.nextBlockId();
          out.push({ type: 'reasoning-start', id: this.reasoningBlock });
        }
        out.push({ type: 'reasoning-delta', id: this.reasoningBlock, delta: reasoning });
      }
      const text = typeof delta.content === 'string' ? delta.content : '';
      if (text !== '') {
        this.closeReasoning(out);
        if (this.textBlock === undefined) {
          this.textBlock = this.nextBlockId();
          out.push({ type: 'text-start', id: this.textBlock });
        }
        out.push({ type: 'text-delta', id: this.textBlock, delta: text });
      }
      const refusal = typeof delta.refusal === 'string' ? delta.refusal : '';
      if (refusal !== '') {
        this.closeReasoning(out);
        if (this.refusalBlock === undefined) {
          this.refusalBlock = this.nextBlockId();
          out.push({ type: 'text-start', id: this.refusalBlock, refusal: true });
        }
        out.push({ type: 'text-delta', id: this.refusalBlock, delta: refusal });
      }
      const calls = delta.tool_calls ?? [];
      if (calls.length > 0) this.closeReasoning(out);
      calls.forEach((call, callPosition) => this.pushToolCall(call, callPosition, out));
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    });
    return out;
  }

  private closeReasoning(out: StreamPart[]): void {
    if (this.reasoningBlock === undefined) return;
    out.push({ type: 'reasoning-end', id: this.reasoningBlock });
    this.reasoningBlock = undefined;
  }

  private pushToolCall(call: OpenAiChatChunkToolCall, position: number, out: StreamPart[]): void {
    const index = call.index ?? position;
    let state = this.toolCalls.get(index);
    if (state === undefined) {
      state = { blockId: this.nextBlockId(), callId: undefined, name: undefined, started: false, held: '' };
      this.toolCalls.set(index, state);
    }
    if (typeof call.id === 'string' && call.id !== '') state.callId ??= call.id;
    if (typeof call.function?.name === 'string' && call.function.name !== '') state.name ??= call.function.name;
    const args = call.function?.arguments ?? '';
    if (!state.started) {
      state.held += args;
      if (state.name === undefined) return;
      this.startToolCall(state, out);
      return;
    }
    if (args !== '') out.push({ type: 'tool-call-delta', id: state.blockId, delta: args });
  }

  private startToolCall(state: ToolCallState, out: StreamPart[]): void {
    state.started = true;
    out.push({ type: 'tool-call-start', id: state.blockId, callId: state.callId ?? newToolCallId(), name: state.name ?? '' });
    if (state.held !== '') out.push({ type: 'tool-call-delta', id: state.blockId, delta: state.held });
    state.held = '';
  }

  /**
   * The closing parts once the stream has ended; `sawDone` says whether it ended with `[DONE]`.
   * Throws when it ended before any finish_reason, or with a tool call that never got a name.
   */
  finish(sawDone: boolean): StreamPart[] {
    if (!sawDone && !this.finishReason) {
      throw new GatewayError('upstream_error', `Upstream provider ${this.providerName} ended the stream before it finished.`, { wireCode: 'stream_error' });
    }
    const out: StreamPart[] = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: '', model: this.upstreamModel, created: Math.floor(Date.now() / 1000) });
    }
    this.closeReasoning(out);
    if (this.textBlock !== undefined) out.push({ type: 'text-end', id: this.textBlock });
    if (this.refusalBlock !== undefined) out.push({ type: 'text-end', id: this.refusalBlock });
    for (const state of [...this.toolCalls.entries()].sort(([a], [b]) => a - b).map(([, value]) => value)) {
      if (!state.started) {
        throw new GatewayError('upstream_error', `Upstream provider ${this.providerName} streamed a tool call without a function name.`, {
          wireCode: 'stream_error',
        });
      }
      out.push({ type: 'tool-call-end', id: state.blockId });
    }
    out.push({ type: 'finish', ...mapOpenAiFinishReason(this.finishReason), usage: this.usage ?? { ...NO_USAGE } });
    return out;
  }
}

/** Reads an OpenAI-format chat stream body into canonical stream parts. */
export async function* openAiChatStreamToParts(body: AsyncIterable<Buffer>, providerName: string, upstreamModel: string): AsyncIterable<StreamPart> {
  const state = new ChatStreamState(providerName, upstreamModel);
  let sawDone = false;
  for await (const event of parseSse(body)) {
    if (event.data === '[DONE]') {
      sawDone = true;
      break;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(event.data);
    } catch (err) {
      throw new GatewayError('upstream_error', `Upstream provider ${providerName} sent a stream event that is not JSON.`, {
        cause: withheld(err, 'a stream event did not parse as JSON'),
        wireCode: 'stream_error',
      });
    }
    if (parsed === null || typeof parsed !== 'object') continue;
    yield* state.push(parsed as OpenAiChatChunk);
  }
  yield* state.finish(sawDone);
}
