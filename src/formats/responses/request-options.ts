// The generation options of a Responses body → canonical GenerationOptions, with the caller's name of
// each option set (`fieldNames`: maxOutputTokens → 'max_output_tokens', responseFormat →
// 'text.format'), so the handler can list the ones a provider drops in `x-gateway-dropped-params`
// under the names the caller used. Null is "not set" (the Open Responses schema allows null for each).
import type { GenerationOptions, JsonObject, ReasoningConfig, ReasoningEffort, ResponseFormat } from '../../canonical/model';
import { OptionsBuilder, type FieldNames } from '../shared/canonical-request';
import { isRecord, optionalString, requiredString, unreadable } from './request-errors';

const EFFORTS: ReadonlySet<string> = new Set<ReasoningEffort>(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

/** The fields this module maps (everything else but the handler's fields goes to `extra`). */
export const OPTION_FIELDS: ReadonlySet<string> = new Set([
  'max_output_tokens',
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'n',
  'stop',
  'parallel_tool_calls',
  'reasoning',
  'text',
  'service_tier',
  'prompt_cache_key',
  'user',
  'safety_identifier',
  'top_logprobs',
]);

function numberField(body: JsonObject, key: string): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw unreadable(key, 'must be a number.');
  return value;
}

function countField(body: JsonObject, key: string): number | undefined {
  const value = numberField(body, key);
  if (value !== undefined && (!Number.isInteger(value) || value < 0)) throw unreadable(key, 'must be a non-negative integer.');
  return value;
}

function stopField(body: JsonObject): string[] | undefined {
  const stop = body['stop'];
  if (stop === undefined || stop === null) return undefined;
  if (typeof stop === 'string') return [stop];
  if (Array.isArray(stop) && stop.every((entry) => typeof entry === 'string')) return stop;
  throw unreadable('stop', 'must be a string or an array of strings.');
}

function reasoningField(body: JsonObject): ReasoningConfig | undefined {
  const reasoning = body['reasoning'];
  if (reasoning === undefined || reasoning === null) return undefined;
  if (!isRecord(reasoning)) throw unreadable('reasoning', 'must be an object ({effort, summary}).');
  const config: ReasoningConfig = {};
  const effort = optionalString(reasoning, 'effort', 'reasoning');
  if (effort !== undefined) {
    if (!EFFORTS.has(effort)) throw unreadable('reasoning.effort', 'must be none, minimal, low, medium, high or xhigh.');
    config.effort = effort as ReasoningEffort;
  }
  // `generate_summary` is the older name of `summary`.
  const summary = optionalString(reasoning, 'summary', 'reasoning') ?? optionalString(reasoning, 'generate_summary', 'reasoning');
  if (summary !== undefined) config.summary = summary;
  return Object.keys(config).length > 0 ? config : undefined;
}

/** `text.format`: text, json_object or json_schema {name, schema, strict, description}. */
function responseFormat(format: unknown): ResponseFormat | undefined {
  if (format === undefined || format === null) return undefined;
  if (!isRecord(format)) throw unreadable('text.format', 'must be an object ({type: text | json_object | json_schema}).');
  const type = format['type'];
  if (type === 'text' || type === 'json_object') return { type };
  if (type !== 'json_schema') throw unreadable('text.format.type', 'must be text, json_object or json_schema.');
  const schema = format['schema'];
  if (!isRecord(schema)) throw unreadable('text.format.schema', 'must be a JSON Schema object.');
  const result: ResponseFormat = { type: 'json_schema', name: requiredString(format, 'name', 'text.format'), schema };
  const description = optionalString(format, 'description', 'text.format');
  if (description !== undefined) result.description = description;
  const strict = format['strict'];
  if (typeof strict === 'boolean') result.strict = strict;
  else if (strict !== undefined && strict !== null) throw unreadable('text.format.strict', 'must be a boolean.');
  return result;
}

/** The options of `body`, their caller field names, and the mapped fields the options could not hold. */
export function optionsOf(body: JsonObject): { options: GenerationOptions; fieldNames: FieldNames; unmapped: JsonObject } {
  const out = new OptionsBuilder();
  const unmapped: JsonObject = {};
  out.set('maxOutputTokens', countField(body, 'max_output_tokens'), 'max_output_tokens');
  out.set('temperature', numberField(body, 'temperature'), 'temperature');
  out.set('topP', numberField(body, 'top_p'), 'top_p');
  out.set('presencePenalty', numberField(body, 'presence_penalty'), 'presence_penalty');
  out.set('frequencyPenalty', numberField(body, 'frequency_penalty'), 'frequency_penalty');
  out.set('n', countField(body, 'n'), 'n');
  out.set('stop', stopField(body), 'stop');
  const parallel = body['parallel_tool_calls'];
  if (typeof parallel === 'boolean') out.set('parallelToolCalls', parallel, 'parallel_tool_calls');
  else if (parallel !== undefined && parallel !== null) throw unreadable('parallel_tool_calls', 'must be a boolean.');
  out.set('reasoning', reasoningField(body), 'reasoning');
  const text = body['text'];
  if (isRecord(text)) {
    out.set('responseFormat', responseFormat(text['format']), 'text.format');
    out.set('verbosity', optionalString(text, 'verbosity', 'text'), 'text.verbosity');
  } else if (text !== undefined && text !== null) throw unreadable('text', 'must be an object ({format, verbosity}).');
  out.set('serviceTier', optionalString(body, 'service_tier', ''), 'service_tier');
  out.set('promptCacheKey', optionalString(body, 'prompt_cache_key', ''), 'prompt_cache_key');
  // `safety_identifier` replaces `user` as the end-user id; with both, `user` stays a wire field.
  const safetyIdentifier = optionalString(body, 'safety_identifier', '');
  const user = optionalString(body, 'user', '');
  if (safetyIdentifier !== undefined) {
    out.set('user', safetyIdentifier, 'safety_identifier');
    if (user !== undefined) unmapped['user'] = user;
  } else out.set('user', user, 'user');
  out.set('topLogprobs', countField(body, 'top_logprobs'), 'top_logprobs');
  return { options: out.options, fieldNames: out.fieldNames, unmapped };
}
