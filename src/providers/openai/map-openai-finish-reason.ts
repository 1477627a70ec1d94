// A chat-completions finish_reason to the canonical one. `function_call` (the deprecated functions
// API) is a tool call; null and values of OpenAI-compatible servers we do not know are `other`.
import type { FinishReason } from '../../canonical/model';

const KNOWN: Readonly<Record<string, FinishReason>> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
};

export function mapOpenAiFinishReason(reason: string | null | undefined): { finishReason: FinishReason; rawFinishReason?: string } {
  const finishReason = (typeof reason === 'string' ? KNOWN[reason] : undefined) ?? 'other';
  // The upstream's own word is kept where the canonical one says less.
  return typeof reason === 'string' && reason !== finishReason ? { finishReason, rawFinishReason: reason } : { finishReason };
}
