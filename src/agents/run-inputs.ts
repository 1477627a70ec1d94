// The `inputs` of a run trigger (POST /v1/agents/runs, webhooks): an array of {name, value} strings.
// The generated validator checks it on the API route; this re-check keeps the run service's contract
// whatever calls it. Matching against the agent's labels (drop unknown, 422 on missing) is the run
// service's job.
import { GatewayError } from '../http/errors';
import type { RunInput } from '../store/types';

export function readRunInputs(value: unknown): RunInput[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new GatewayError('validation_failed', "Invalid request: 'inputs' must be an array.", { param: 'inputs' });
  return value.map((entry: unknown, i) => {
    const item = entry as { name?: unknown; value?: unknown } | null;
    if (item === null || typeof item !== 'object' || typeof item.name !== 'string' || typeof item.value !== 'string') {
      throw new GatewayError('validation_failed', `Invalid request: 'inputs[${i}]' must be an object with string 'name' and 'value'.`, {
        param: `inputs[${i}]`,
      });
    }
    return { name: item.name, value: item.value };
  });
}
