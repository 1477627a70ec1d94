// Pieces of a Messages reply shared by the JSON and the stream writers: the id, the stop reason and
// the usage.
import { randomBytes } from 'node:crypto';
import type { FinishReason, Usage } from '../../canonical/model';
import { MESSAGES_STOP_REASONS, type MessagesStopReason, type MessagesUsage } from './messages-wire-types';

const STOP_REASONS: ReadonlySet<string> = new Set(MESSAGES_STOP_REASONS);

/** Messages ids read `msg_…`; a foreign id is kept inside one so it stays traceable. */
export function messageId(id: string): string {
  if (id === '') return `msg_${randomBytes(12).toString('hex')}`;
  return id.startsWith('msg_') ? id : `msg_${id}`;
}

/** Tool arguments are JSON text; Anthropic wants the object. Broken JSON is kept, not dropped. */
export function parseToolInput(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { value: parsed };
  } catch {
    return { _raw_arguments: args };
  }
}

export interface StopInput {
  finishReason: FinishReason;
  rawFinishReason?: string | undefined;
  stopSequence?: string | null | undefined;
  calledTools: boolean;
}

/**
 * The reply's stop_reason: the upstream's own when it was an Anthropic one (pause_turn, refusal,
 * model_context_window_exceeded say more than the canonical reason), otherwise mapped. A reply that
 * called tools stopped for `tool_use`, as Anthropic's do (clients loop on it).
 */
export function messagesStopReason({ finishReason, rawFinishReason, stopSequence, calledTools }: StopInput): MessagesStopReason {
  if (rawFinishReason !== undefined && STOP_REASONS.has(rawFinishReason) && (rawFinishReason !== 'tool_use' || calledTools)) {
    return rawFinishReason as MessagesStopReason;
  }
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    case 'tool_calls':
    case 'stop':
      if (calledTools) return 'tool_use';
      return typeof stopSequence === 'string' ? 'stop_sequence' : 'end_turn';
    case 'error':
    case 'other':
      return 'end_turn';
  }
}

/**
 * Canonical usage → Anthropic usage. Canonical input tokens count cache reads and writes (as OpenAI's
 * prompt_tokens do); Anthropic's input_tokens counts neither, and reports each apart.
 */
export function messagesUsage(usage: Usage): MessagesUsage {
  const cacheRead = usage.cachedInputTokens ?? 0;
  const cacheWrite = usage.cacheCreationInputTokens ?? 0;
  const mapped: MessagesUsage = { input_tokens: Math.max(0, usage.inputTokens - cacheRead - cacheWrite), output_tokens: usage.outputTokens };
  if (cacheRead > 0) mapped.cache_read_input_tokens = cacheRead;
  if (cacheWrite > 0) mapped.cache_creation_input_tokens = cacheWrite;
  return mapped;
}
