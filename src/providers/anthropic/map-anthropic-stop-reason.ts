// Anthropic stop_reason → OpenAI finish_reason (https://docs.anthropic.com/en/api/handling-stop-reasons).
import type { ChatCompletion } from '../types';
import type { AnthropicStopReason } from './anthropic-wire-types';

export type FinishReason = ChatCompletion['choices'][number]['finish_reason'];

export function mapAnthropicStopReason(reason: AnthropicStopReason | null | undefined): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn': // a server tool paused the turn: the reply so far is complete text
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    case null:
    case undefined:
      return null;
    default:
      return 'stop';
  }
}

/** OpenAI finish_reason → Anthropic stop_reason (the /v1/messages client format, other direction). */
export function mapFinishReasonToStopReason(reason: FinishReason | undefined): AnthropicStopReason {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}
