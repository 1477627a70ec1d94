// Chat-completions usage to canonical usage: cached prompt tokens and reasoning tokens are parts of
// prompt_tokens and completion_tokens, as the canonical counts are.
import type { Usage } from '../../canonical/model';
import type { OpenAiChatUsage } from './openai-chat-wire-types';

export function convertOpenAiChatUsage(usage: OpenAiChatUsage | null | undefined): Usage {
  const out: Usage = { inputTokens: usage?.prompt_tokens ?? 0, outputTokens: usage?.completion_tokens ?? 0 };
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  if (typeof cached === 'number') out.cachedInputTokens = cached;
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number') out.reasoningTokens = reasoning;
  return out;
}
