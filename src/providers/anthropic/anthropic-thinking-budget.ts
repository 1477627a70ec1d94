// Canonical reasoning → Anthropic extended thinking
// (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking): `thinking: {type: "enabled",
// budget_tokens}`, where the budget is at least 1024 and below `max_tokens` (max_tokens counts the
// thinking), or `{type: "disabled"}`.
import type { ReasoningConfig, ReasoningEffort } from '../../canonical/model';

/** Anthropic requires max_tokens; the other formats do not. */
export const DEFAULT_MAX_TOKENS = 4096;

/** Anthropic's smallest thinking budget. */
export const MIN_THINKING_BUDGET = 1024;

/**
 * OpenAI-style effort → a thinking budget. Anthropic has no effort scale; these budgets follow its
 * guidance (start at the 1024 minimum, raise it for harder tasks; above 32k batch processing is
 * advised). `none` means no thinking at all, which is Anthropic's default: nothing is sent.
 */
export const EFFORT_THINKING_BUDGET: Readonly<Record<Exclude<ReasoningEffort, 'none'>, number>> = {
  minimal: MIN_THINKING_BUDGET,
  low: 2048,
  medium: 8192,
  high: 24576,
  xhigh: 32768,
};

export type AnthropicThinking = { type: 'enabled'; budget_tokens: number } | { type: 'disabled' };

export interface ThinkingPlan {
  thinking: AnthropicThinking | undefined;
  maxTokens: number;
}

/**
 * The `thinking` field and `max_tokens` for a request. An explicit budget is sent with the caller's own
 * max_tokens as they are (the caller chose both numbers; the upstream judges them, as it would on a
 * pass-through). A budget the gateway chose must fit under max_tokens. With no output limit from the
 * caller, max_tokens becomes the budget plus the default answer room. A caller's limit
 * (`max_output_tokens`, `max_completion_tokens`) counts the reasoning tokens too, as OpenAI defines
 * it, and is never raised: an effort's budget is cut to fit under it, and an effort that cannot fit
 * (Anthropic's smallest budget is 1024) is sent without thinking.
 */
export function planThinking(reasoning: ReasoningConfig | undefined, maxOutputTokens: number | undefined): ThinkingPlan {
  const requested = maxOutputTokens ?? DEFAULT_MAX_TOKENS;
  if (reasoning === undefined) return { thinking: undefined, maxTokens: requested };
  if (reasoning.disabled === true) return { thinking: { type: 'disabled' }, maxTokens: requested };
  if (reasoning.budgetTokens !== undefined) {
    const thinking: AnthropicThinking = { type: 'enabled', budget_tokens: reasoning.budgetTokens };
    if (maxOutputTokens !== undefined) return { thinking, maxTokens: maxOutputTokens };
    return { thinking, maxTokens: requested > reasoning.budgetTokens ? requested : reasoning.budgetTokens + requested };
  }
  if (reasoning.effort === undefined || reasoning.effort === 'none') return { thinking: undefined, maxTokens: requested };
  const budget = EFFORT_THINKING_BUDGET[reasoning.effort];
  if (maxOutputTokens === undefined)
    return { thinking: { type: 'enabled', budget_tokens: budget }, maxTokens: requested > budget ? requested : budget + requested };
  // The caller's limit holds: the budget stays below it (Anthropic wants budget_tokens < max_tokens).
  const fitted = Math.min(budget, maxOutputTokens - 1);
  if (fitted < MIN_THINKING_BUDGET) return { thinking: undefined, maxTokens: maxOutputTokens };
  return { thinking: { type: 'enabled', budget_tokens: fitted }, maxTokens: maxOutputTokens };
}

/**
 * True when the caller asked for reasoning (an effort) that planThinking leaves out: the output limit
 * leaves no room for Anthropic's smallest budget. The call reports it dropped (x-gateway-dropped-params).
 */
export function thinkingLeftOut(reasoning: ReasoningConfig | undefined, maxOutputTokens: number | undefined): boolean {
  if (reasoning?.effort === undefined || reasoning.effort === 'none' || reasoning.disabled === true || reasoning.budgetTokens !== undefined) return false;
  return planThinking(reasoning, maxOutputTokens).thinking === undefined;
}
