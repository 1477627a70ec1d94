// What a model call cost, from the model's configured prices (models[].pricing, USD per million tokens):
// prompt tokens read from a prompt cache at the cached-input price (the input price when none is set),
// the rest of the prompt at the input price, completion tokens at the output price.
import type { ModelPricing } from '../config/types';

/** Costs are kept to the nano-dollar: sums of many calls do not drift with binary fractions. */
const NANO = 1e9;

/**
 * The cost in USD of a call's tokens, or null when the model has no pricing. `cachedPromptTokens` is a
 * part of `promptTokens` (as providers report it); a larger value (a confused upstream) counts as all
 * of the prompt.
 */
export function costOf(pricing: ModelPricing | undefined, promptTokens: number, cachedPromptTokens: number, completionTokens: number): number | null {
  if (!pricing) return null;
  const cached = Math.min(Math.max(0, cachedPromptTokens), promptTokens);
  const micro = (promptTokens - cached) * pricing.input + cached * (pricing.cachedInput ?? pricing.input) + completionTokens * pricing.output;
  return Math.round((micro / 1e6) * NANO) / NANO;
}
