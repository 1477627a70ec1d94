// Run inputs: which posted inputs an agent accepts, and how they fill a step's prompt.
import { GatewayError } from '../http/errors';
import type { AgentInputConfig } from '../config/types';
import type { RunInput } from '../store/types';

/**
 * Keeps the inputs whose name is one of the agent's labels (case-sensitive; the first of duplicates
 * wins), dropping the others silently. Throws missing_inputs (422) naming every required label absent.
 */
export function acceptInputs(labels: readonly AgentInputConfig[], posted: readonly RunInput[]): RunInput[] {
  const known = new Set(labels.map((l) => l.label));
  const kept: RunInput[] = [];
  const seen = new Set<string>();
  for (const input of posted) {
    if (!known.has(input.name) || seen.has(input.name)) continue;
    seen.add(input.name);
    kept.push({ name: input.name, value: input.value });
  }
  const missing = labels.filter((l) => l.required && !seen.has(l.label)).map((l) => l.label);
  if (missing.length > 0) {
    const noun = missing.length === 1 ? 'input' : 'inputs';
    throw new GatewayError('missing_inputs', `Missing required ${noun}: ${missing.map((m) => `'${m}'`).join(', ')}.`, { param: 'inputs' });
  }
  return kept;
}

const PLACEHOLDER = /\{\{\s*([^{}]+?)\s*\}\}/g;

/**
 * Replaces `{{Label}}` with the input's value. A placeholder naming an input that was not given
 * (an optional label) becomes the empty string; text that names no label at all is left as written.
 */
export function renderPrompt(template: string, inputs: readonly RunInput[], labels: readonly AgentInputConfig[]): string {
  const values = new Map(inputs.map((i) => [i.name, i.value]));
  const known = new Set(labels.map((l) => l.label));
  return template.replace(PLACEHOLDER, (whole, name: string) => values.get(name) ?? (known.has(name) ? '' : whole));
}
