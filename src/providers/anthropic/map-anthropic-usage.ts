// Anthropic usage → OpenAI usage. Anthropic's input_tokens excludes cache reads and writes; OpenAI's
// prompt_tokens includes cached tokens (reported again under prompt_tokens_details.cached_tokens).
import type { ChatUsage } from '../types';
import type { AnthropicUsage } from './anthropic-wire-types';

const n = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

export function mapAnthropicUsage(usage: AnthropicUsage | undefined): ChatUsage {
  const cacheRead = n(usage?.cache_read_input_tokens);
  const prompt = n(usage?.input_tokens) + n(usage?.cache_creation_input_tokens) + cacheRead;
  const completion = n(usage?.output_tokens);
  const mapped: ChatUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (cacheRead > 0) mapped['prompt_tokens_details'] = { cached_tokens: cacheRead };
  return mapped;
}

/** Streams report usage in message_start (input) and message_delta (cumulative): keep the latest non-null values. */
export function mergeAnthropicUsage(into: AnthropicUsage, update: AnthropicUsage | undefined): void {
  if (!update) return;
  for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
    const value = update[key];
    if (typeof value === 'number') into[key] = value;
  }
}
