// POST /v1/completions (legacy) body → the canonical request, for providers without legacy completions
// (a provider that has them gets the caller's bytes). The prompt becomes one user message. Pure: the
// caller's body is read, never changed. Fields with no canonical meaning (suffix, echo, best_of,
// logit_bias, ...) go to `extra` (format 'completions'), which only a completions-speaking upstream
// could take: every other provider drops them and the call reports them.
import type { JsonObject, ModelRequest } from '../../canonical/model';
import { GatewayError } from '../../http/errors';
import { OptionsBuilder, type CanonicalRequest } from '../shared/canonical-request';
import { badRequest, readInteger, readString, unknownFields } from '../shared/read-fields';
import { readSharedOptions } from '../shared/shared-option-fields';

const MAPPED_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'prompt',
  'stream',
  'stream_options',
  'max_tokens',
  'temperature',
  'top_p',
  'stop',
  'n',
  'seed',
  'presence_penalty',
  'frequency_penalty',
  'logprobs',
  'user',
]);

/**
 * The one text prompt. Several prompts ask for one completion each (choices indexed across prompts)
 * and token-id prompts are in the upstream tokenizer's ids, meaningless to another model: a translated
 * provider answers one chat turn, so both are refused by name rather than half served.
 */
function promptText(prompt: unknown): string {
  if (typeof prompt === 'string') return prompt;
  if (Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === 'string') return prompt[0];
  if (prompt === undefined || prompt === null) throw badRequest('prompt is required.', 'prompt');
  if (Array.isArray(prompt) && prompt.length === 0) throw badRequest('prompt must not be empty.', 'prompt');
  const several = Array.isArray(prompt) && prompt.length > 1 && prompt.every((entry) => typeof entry === 'string');
  throw new GatewayError(
    'unsupported_parameter',
    several
      ? 'This model takes one text prompt per request: send each prompt in its own request.'
      : 'This model takes the prompt as text: token-id prompts only mean something to the model whose tokenizer made them.',
    { param: 'prompt' },
  );
}

/** A legacy completions body (already validated as an object by the route) → the canonical request. */
export function completionRequestToCanonical(body: JsonObject): CanonicalRequest {
  const model = body['model'];
  if (typeof model !== 'string' || model === '') throw badRequest('model is required.', 'model');
  const text = promptText(body['prompt']);
  const out = new OptionsBuilder();
  readSharedOptions(body, out, ['max_tokens', 'temperature', 'top_p', 'stop', 'n', 'seed', 'presence_penalty', 'frequency_penalty']);
  // Legacy `logprobs` is an integer: how many alternatives to report beside each sampled token.
  const logprobs = readInteger(body, 'logprobs');
  if (logprobs !== undefined) {
    out.set('logprobs', true, 'logprobs');
    out.set('topLogprobs', logprobs, 'logprobs');
  }
  out.set('user', readString(body, 'user'), 'user');
  const request: ModelRequest = {
    model,
    messages: [{ role: 'user', content: text === '' ? [] : [{ type: 'text', text }] }],
    tools: [],
    options: out.options,
  };
  const extra = unknownFields(body, MAPPED_FIELDS);
  if (extra) request.extra = { format: 'completions', fields: extra };
  return { request, fieldNames: out.fieldNames };
}
