// Gemini usageMetadata to chat-completions usage. Thinking tokens are billed as output, as OpenAI
// counts reasoning tokens inside completion_tokens; tool-use prompt tokens are input.
import type { ChatUsage } from '../types';
import type { GeminiUsageMetadata } from './gemini-wire-types';

export function convertGeminiUsage(usage: GeminiUsageMetadata | undefined): ChatUsage | undefined {
  if (!usage) return undefined;
  const prompt = (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0);
  const completion = (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0);
  const result: ChatUsage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage.totalTokenCount ?? prompt + completion,
  };
  if (usage.cachedContentTokenCount !== undefined) result['prompt_tokens_details'] = { cached_tokens: usage.cachedContentTokenCount };
  if (usage.thoughtsTokenCount !== undefined) result['completion_tokens_details'] = { reasoning_tokens: usage.thoughtsTokenCount };
  return result;
}
