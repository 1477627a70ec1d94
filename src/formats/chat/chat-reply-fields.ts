// Pieces of a chat completions reply shared by the JSON and the stream writers (and by legacy
// completions, whose usage object is the same): the id, the finish reason and the usage.
import { randomBytes } from 'node:crypto';
import type { FinishReason, ReasoningPart, Usage } from '../../canonical/model';
import type { ChatFinishReason, ChatUsage } from './chat-wire-types';

/** Chat completion ids read `chatcmpl-…`; an upstream's own id is kept inside one so it stays traceable. */
export function chatCompletionId(id: string): string {
  if (id === '') return `chatcmpl-${randomBytes(12).toString('hex')}`;
  return id.startsWith('chatcmpl-') ? id : `chatcmpl-${id}`;
}

/**
 * Canonical finish reason → chat's. A reply that called tools ends with `tool_calls` whatever the
 * upstream said, as OpenAI's does (clients loop on it). `error` and `other` have no chat value: the
 * reply stopped, and `stop` is what clients handle.
 */
export function chatFinishReason(reason: FinishReason, calledTools: boolean): ChatFinishReason {
  if (calledTools && (reason === 'stop' || reason === 'tool_calls')) return 'tool_calls';
  switch (reason) {
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    case 'tool_calls':
    case 'stop':
    case 'error':
    case 'other':
      return 'stop';
  }
}

/**
 * Canonical usage → OpenAI usage. The details objects appear only when they say something (a cache
 * hit, reasoning tokens), as OpenAI-compatible upstreams that lack them answer.
 */
export function chatUsage(usage: Usage): ChatUsage {
  const mapped: ChatUsage = { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens };
  if (usage.cachedInputTokens !== undefined && usage.cachedInputTokens > 0) mapped.prompt_tokens_details = { cached_tokens: usage.cachedInputTokens };
  if (usage.reasoningTokens !== undefined && usage.reasoningTokens > 0) mapped.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens };
  return mapped;
}

/** A reasoning part that is only a signature (no text, nothing redacted): how Gemini's thought signatures arrive. */
export function signatureOnly(part: ReasoningPart): part is ReasoningPart & { signature: string } {
  return part.signature !== undefined && part.text === '' && part.redactedData === undefined && part.encryptedContent === undefined;
}
