// The step judge of the operator contract ("Step evaluation"): a chat completion with structured
// output `step_verdict`, whose reply is parsed into pass | fail | unknown and an explanation.
import { responseText } from '../canonical/assemble';
import type { ModelRequest, ModelResponse } from '../canonical/model';
import type { StepResult } from '../store/types';

export const STEP_VERDICT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['verdict', 'explanation'],
  properties: {
    verdict: { type: 'string', enum: ['pass', 'fail', 'unknown'] },
    explanation: { type: 'string' },
  },
} as const;

const JUDGE_INSTRUCTIONS =
  'You evaluate one step of an automated agent run. Decide whether what the step produced satisfies the objective. ' +
  'Answer "pass" when it does, "fail" when it does not, and "unknown" when you cannot tell. Explain briefly.';

export function judgeRequest(model: string, objective: string, prompt: string, produced: string): ModelRequest {
  return {
    model,
    messages: [
      { role: 'system', content: [{ type: 'text', text: JUDGE_INSTRUCTIONS }] },
      { role: 'user', content: [{ type: 'text', text: `Objective:\n${objective}\n\nStep prompt:\n${prompt}\n\nStep output:\n${produced}` }] },
    ],
    tools: [],
    options: { responseFormat: { type: 'json_schema', name: 'step_verdict', strict: true, schema: STEP_VERDICT_SCHEMA } },
  };
}

export interface Verdict {
  result: Extract<StepResult, 'pass' | 'fail' | 'unknown'>;
  explanation: string;
}

/** A reply that does not parse into the step_verdict shape gives `unknown`. */
export function parseVerdict(completion: Pick<ModelResponse, 'content'>): Verdict {
  const content = responseText(completion);
  if (content !== '') {
    try {
      const parsed: unknown = JSON.parse(content);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
        const verdict = (parsed as Record<string, unknown>)['verdict'];
        const explanation = (parsed as Record<string, unknown>)['explanation'];
        if ((verdict === 'pass' || verdict === 'fail' || verdict === 'unknown') && typeof explanation === 'string') {
          return { result: verdict, explanation };
        }
      }
    } catch {
      // falls through to unknown
    }
  }
  return { result: 'unknown', explanation: 'The judge reply could not be parsed as a step verdict.' };
}
