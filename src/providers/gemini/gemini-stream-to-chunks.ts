// Gemini's streamGenerateContent events (each a partial GenerateContentResponse) to chat-completion
// chunks. One state object per request: the first chunk of each choice carries the role, text parts
// become content deltas, every functionCall part becomes a complete tool-call delta (Gemini sends a
// call whole, in one part) with its own index, so no call is dropped or merged. Finish reasons and
// the last (cumulative) usage are held until the upstream stream ends, then flushed: one finish chunk
// per choice, usage on the last one. A stream that ends with no finish reason, or carries an error
// object, fails loudly instead of looking like a complete answer.
import { GatewayError } from '../../http/errors';
import type { ChatCompletionChunk, ChatUsage } from '../types';
import { newCompletionId, toChatToolCall } from './convert-gemini-response';
import { convertGeminiUsage } from './convert-gemini-usage';
import type { GeminiResponse } from './gemini-wire-types';
import { mapGeminiFinishReason } from './map-gemini-finish-reason';

type Delta = ChatCompletionChunk['choices'][number]['delta'];
type ToolCallDelta = NonNullable<Delta['tool_calls']>[number];

interface ChoiceState {
  roleSent: boolean;
  toolCalls: number;
  finishReason: string | undefined;
}

export class GeminiStreamState {
  private id: string | undefined;
  private readonly choices = new Map<number, ChoiceState>();
  private usage: ChatUsage | undefined;
  private blockReason: string | undefined;

  constructor(
    private readonly model: string,
    private readonly created = Math.floor(Date.now() / 1000),
  ) {}

  private chunk(index: number, delta: Delta, finishReason: ChatCompletionChunk['choices'][number]['finish_reason']): ChatCompletionChunk {
    return {
      id: this.id ?? (this.id = newCompletionId(undefined)),
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index, delta, finish_reason: finishReason }],
    };
  }

  private choice(index: number): ChoiceState {
    let state = this.choices.get(index);
    if (!state) {
      state = { roleSent: false, toolCalls: 0, finishReason: undefined };
      this.choices.set(index, state);
    }
    return state;
  }

  /** Chunks for one upstream event. */
  push(event: GeminiResponse): ChatCompletionChunk[] {
    if (event.error) {
      throw new GatewayError('upstream_error', event.error.message ?? 'The Gemini stream reported an error.', { wireCode: 'stream_error' });
    }
    if (this.id === undefined && event.responseId) this.id = newCompletionId(event.responseId);
    const usage = convertGeminiUsage(event.usageMetadata);
    if (usage) this.usage = usage;
    if (event.promptFeedback?.blockReason) this.blockReason = event.promptFeedback.blockReason;
    const out: ChatCompletionChunk[] = [];
    (event.candidates ?? []).forEach((candidate, position) => {
      const index = candidate.index ?? position;
      const state = this.choice(index);
      let text = '';
      const toolCalls: ToolCallDelta[] = [];
      for (const part of candidate.content?.parts ?? []) {
        if (part.thought === true) continue;
        if (typeof part.text === 'string') text += part.text;
        if (part.functionCall) {
          const call = toChatToolCall(part.functionCall, part.thoughtSignature);
          toolCalls.push({ index: state.toolCalls++, ...call });
        }
      }
      if (candidate.finishReason) state.finishReason = candidate.finishReason;
      if (text.length === 0 && toolCalls.length === 0 && state.roleSent) return;
      const delta: Delta = {};
      if (!state.roleSent) {
        delta.role = 'assistant';
        state.roleSent = true;
      }
      if (text.length > 0 || toolCalls.length === 0) delta.content = text;
      if (toolCalls.length > 0) delta.tool_calls = toolCalls;
      out.push(this.chunk(index, delta, null));
    });
    return out;
  }

  /** The closing chunks once the upstream stream has ended. */
  finish(): ChatCompletionChunk[] {
    if (this.choices.size === 0 && this.blockReason) {
      // The prompt was blocked: no candidate, but a well-formed (filtered) answer.
      const first = this.chunk(0, { role: 'assistant', content: '' }, null);
      const last = this.chunk(0, {}, 'content_filter');
      last.usage = this.usage ?? null;
      return [first, last];
    }
    const indexes = [...this.choices.keys()].sort((a, b) => a - b);
    if (indexes.length === 0 || indexes.some((index) => this.choices.get(index)?.finishReason === undefined)) {
      throw new GatewayError('upstream_error', 'The Gemini stream ended before the answer was complete.', { wireCode: 'stream_error' });
    }
    const out = indexes.map((index) => {
      const state = this.choices.get(index)!;
      return this.chunk(index, {}, mapGeminiFinishReason(state.finishReason, state.toolCalls > 0));
    });
    const last = out[out.length - 1];
    if (last) last.usage = this.usage ?? null;
    return out;
  }
}

/** Translates a stream of parsed Gemini events into chat-completion chunks. */
export async function* geminiStreamToChunks(events: AsyncIterable<GeminiResponse>, model: string): AsyncIterable<ChatCompletionChunk> {
  const state = new GeminiStreamState(model);
  for await (const event of events) {
    for (const chunk of state.push(event)) yield chunk;
  }
  for (const chunk of state.finish()) yield chunk;
}
