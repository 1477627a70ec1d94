// Anthropic's `thinking` request field (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking):
// the Messages format's own, and accepted on chat completions too, where clients of Anthropic-backed
// OpenAI-format gateways send it.
import type { JsonObject, ReasoningConfig } from '../../canonical/model';
import { badRequest, isRecord, readInteger } from './read-fields';

/**
 * `{type: enabled, budget_tokens}` → a thinking budget; `{type: disabled}` → thinking off; null for a
 * type the canonical model does not describe (adaptive, between_tools...), which the caller keeps as
 * an unmodelled field for an upstream that speaks Messages. `display` (summarized/omitted) is a
 * presentation hint the canonical model does not carry.
 */
export function readThinking(value: unknown, param: string): ReasoningConfig | null {
  if (!isRecord(value)) throw badRequest(`${param} must be an object with a type.`, param);
  const thinking: JsonObject = value;
  if (thinking['type'] === 'disabled') return { disabled: true };
  if (thinking['type'] !== 'enabled') return null;
  const budget = readInteger(thinking, 'budget_tokens', `${param}.budget_tokens`);
  if (budget === undefined) throw badRequest(`${param}.budget_tokens is required when thinking is enabled.`, `${param}.budget_tokens`);
  return { budgetTokens: budget };
}
