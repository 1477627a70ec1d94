// Gemini's Candidate.finishReason to the chat-completions finish_reason. Gemini answers STOP when the
// model called a function, so a candidate with function calls is `tool_calls` whatever it says.
import type { ChatCompletion } from '../types';

export type ChatFinishReason = ChatCompletion['choices'][number]['finish_reason'];

/** Reasons for which Gemini withheld or cut content on policy grounds. */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);

export function mapGeminiFinishReason(reason: string | undefined, hasToolCalls: boolean): ChatFinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason !== undefined && FILTERED.has(reason)) return 'content_filter';
  if (hasToolCalls) return 'tool_calls';
  // STOP, and the rest (OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, unknown
  // future values) have no closer chat-completions equivalent than a plain stop.
  return 'stop';
}
