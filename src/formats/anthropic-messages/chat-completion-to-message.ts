// Client format POST /v1/messages: a canonical reply (ChatCompletion) → an Anthropic message object.
import { mapFinishReasonToStopReason } from '../../providers/anthropic/map-anthropic-stop-reason';
import type { AnthropicContentBlock, AnthropicMessage, AnthropicUsage } from '../../providers/anthropic/anthropic-wire-types';
import type { ChatCompletion, ChatUsage } from '../../providers/types';

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Anthropic ids read `msg_…`; a foreign id is kept inside one so it stays traceable. */
export function toMessageId(id: string | undefined): string {
  if (!id) return `msg_${Date.now().toString(36)}`;
  return id.startsWith('msg_') ? id : `msg_${id}`;
}

/** Tool arguments arrive as JSON text; Anthropic wants the object. Broken JSON is kept, not dropped. */
export function parseToolInput(args: string | undefined): Record<string, unknown> {
  if (!args || args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return isRecord(parsed) ? parsed : { value: parsed };
  } catch {
    return { _raw_arguments: args };
  }
}

/** OpenAI usage → Anthropic usage (cached prompt tokens are reported apart, as Anthropic does). */
export function chatUsageToAnthropic(usage: ChatUsage | null | undefined): AnthropicUsage & { input_tokens: number; output_tokens: number } {
  const details = usage?.['prompt_tokens_details'];
  const cached = isRecord(details) && typeof details['cached_tokens'] === 'number' ? details['cached_tokens'] : 0;
  const prompt = usage?.prompt_tokens ?? 0;
  const mapped = { input_tokens: Math.max(0, prompt - cached), output_tokens: usage?.completion_tokens ?? 0 } as AnthropicUsage & {
    input_tokens: number;
    output_tokens: number;
  };
  if (cached > 0) mapped.cache_read_input_tokens = cached;
  return mapped;
}

export function chatCompletionToMessage(completion: ChatCompletion, model: string): AnthropicMessage {
  const choice = completion.choices[0];
  const content: AnthropicContentBlock[] = [];
  const reasoning = choice?.message['reasoning_content'];
  if (typeof reasoning === 'string' && reasoning !== '') content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  const text = choice?.message.content;
  if (typeof text === 'string' && text !== '') content.push({ type: 'text', text });
  for (const call of choice?.message.tool_calls ?? []) {
    content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: parseToolInput(call.function.arguments) });
  }
  // Clients commonly read content[0].text: an empty reply is one empty text block, never an empty list.
  if (content.length === 0) content.push({ type: 'text', text: '' });
  const hasToolUse = content.some((b) => b.type === 'tool_use');
  const stopReason = hasToolUse && choice?.finish_reason === 'stop' ? 'tool_use' : mapFinishReasonToStopReason(choice?.finish_reason ?? null);
  return {
    id: toMessageId(completion.id),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: chatUsageToAnthropic(completion.usage),
  };
}
