// POST /v1/chat/completions body → the canonical request, for every provider that does not speak chat
// completions itself (a chat-speaking provider gets the caller's bytes). Pure: the caller's body is
// read, never changed. Fields with no canonical meaning go to `extra` (format 'chat'): an OpenAI-format
// upstream receives them, any other provider drops them and the call reports them.
import type { JsonObject, ModelRequest, ReasoningEffort, ResponseFormat, ToolChoice, ToolDefinition } from '../../canonical/model';
import { GatewayError } from '../../http/errors';
import { OptionsBuilder, type CanonicalRequest } from '../shared/canonical-request';
import { badRequest, isRecord, readBoolean, readInteger, readString, unknownFields } from '../shared/read-fields';
import { readSharedOptions } from '../shared/shared-option-fields';
import { readThinking } from '../shared/thinking-config';
import { chatMessagesToCanonical } from './chat-messages-to-canonical';

/** Fields this converter reads (the rest are `extra`). `stream` and `stream_options` are the route's. */
const MAPPED_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'tools',
  'tool_choice',
  'max_completion_tokens',
  'max_tokens',
  'temperature',
  'top_p',
  'top_k',
  'stop',
  'seed',
  'presence_penalty',
  'frequency_penalty',
  'n',
  'logprobs',
  'top_logprobs',
  'response_format',
  'reasoning_effort',
  'thinking',
  'parallel_tool_calls',
  'user',
  'verbosity',
  'service_tier',
  'prompt_cache_key',
]);

const REASONING_EFFORTS: ReadonlySet<string> = new Set<ReasoningEffort>(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

function functionTool(tool: JsonObject, param: string): ToolDefinition {
  const fn = tool['function'];
  if (!isRecord(fn) || typeof fn['name'] !== 'string' || fn['name'] === '') throw badRequest('Function tools need function.name.', `${param}.function.name`);
  const definition: ToolDefinition = { kind: 'function', name: fn['name'] };
  const description = readString(fn, 'description', `${param}.function.description`);
  if (description !== undefined) definition.description = description;
  if (fn['parameters'] !== undefined && fn['parameters'] !== null) {
    if (!isRecord(fn['parameters'])) throw badRequest('function.parameters must be a JSON Schema object.', `${param}.function.parameters`);
    definition.parameters = fn['parameters'];
  }
  const strict = readBoolean(fn, 'strict', `${param}.function.strict`);
  if (strict !== undefined) definition.strict = strict;
  if (isRecord(tool['cache_control'])) definition.cacheControl = tool['cache_control'];
  return definition;
}

/** `tools`: function tools mapped; every other type (custom, web_search...) kept for an OpenAI-format upstream. */
export function chatToolsToCanonical(tools: unknown): ToolDefinition[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw badRequest('tools must be an array.', 'tools');
  return tools.map((tool: unknown, i) => {
    const param = `tools[${i}]`;
    if (!isRecord(tool) || typeof tool['type'] !== 'string') throw badRequest('Each tool needs a type.', `${param}.type`);
    if (tool['type'] === 'function') return functionTool(tool, param);
    return { kind: 'native', format: 'chat', type: tool['type'], definition: tool };
  });
}

/** The tool a named choice points at: `{type: function, function: {name}}` or `{type: custom, custom: {name}}`. */
function namedTool(choice: JsonObject, param: string): string {
  const type = choice['type'];
  const holder = type === 'function' ? choice['function'] : type === 'custom' ? choice['custom'] : undefined;
  if (!isRecord(holder) || typeof holder['name'] !== 'string') {
    throw badRequest('A named tool choice is {"type": "function", "function": {"name": ...}}.', param);
  }
  return holder['name'];
}

/** `tool_choice`: auto, none, required, a named tool, or `{type: allowed_tools, allowed_tools: {mode, tools}}`. */
export function chatToolChoiceToCanonical(choice: unknown): ToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return { kind: choice };
  if (isRecord(choice) && choice['type'] === 'allowed_tools') {
    const allowed = choice['allowed_tools'];
    if (!isRecord(allowed)) throw badRequest('allowed_tools must be an object with mode and tools.', 'tool_choice.allowed_tools');
    const mode = allowed['mode'];
    if (mode !== 'auto' && mode !== 'required') throw badRequest('allowed_tools.mode must be "auto" or "required".', 'tool_choice.allowed_tools.mode');
    const tools = allowed['tools'];
    if (!Array.isArray(tools)) throw badRequest('allowed_tools.tools must be an array.', 'tool_choice.allowed_tools.tools');
    const names = tools.map((tool: unknown, j) => {
      const param = `tool_choice.allowed_tools.tools[${j}]`;
      if (!isRecord(tool)) throw badRequest('Allowed tools are {"type": "function", "function": {"name": ...}}.', param);
      return namedTool(tool, param);
    });
    return { kind: 'allowed', mode, names };
  }
  if (isRecord(choice) && (choice['type'] === 'function' || choice['type'] === 'custom')) return { kind: 'tool', name: namedTool(choice, 'tool_choice') };
  throw badRequest(
    'tool_choice must be "auto", "none", "required", {"type": "function", "function": {"name": ...}} or {"type": "allowed_tools", ...}.',
    'tool_choice',
  );
}

/** `response_format` (text, json_object, json_schema). */
export function chatResponseFormatToCanonical(value: unknown): ResponseFormat | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw badRequest('response_format must be an object.', 'response_format');
  switch (value['type']) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const spec = value['json_schema'];
      if (!isRecord(spec) || typeof spec['name'] !== 'string') throw badRequest('json_schema needs a name.', 'response_format.json_schema.name');
      if (spec['schema'] !== undefined && spec['schema'] !== null && !isRecord(spec['schema'])) {
        throw badRequest('json_schema.schema must be a JSON Schema object.', 'response_format.json_schema.schema');
      }
      const format: ResponseFormat = { type: 'json_schema', name: spec['name'], schema: isRecord(spec['schema']) ? spec['schema'] : {} };
      const description = readString(spec, 'description', 'response_format.json_schema.description');
      if (description !== undefined) format.description = description;
      const strict = readBoolean(spec, 'strict', 'response_format.json_schema.strict');
      if (strict !== undefined) format.strict = strict;
      return format;
    }
    default:
      throw badRequest('response_format.type must be text, json_object or json_schema.', 'response_format.type');
  }
}

function readOptions(body: JsonObject, extra: JsonObject): OptionsBuilder {
  const out = new OptionsBuilder();
  // max_tokens is the deprecated name of max_completion_tokens; the newer one wins when both are set.
  const maxCompletion = readInteger(body, 'max_completion_tokens');
  if (maxCompletion !== undefined) out.set('maxOutputTokens', maxCompletion, 'max_completion_tokens');
  else out.set('maxOutputTokens', readInteger(body, 'max_tokens'), 'max_tokens');
  // top_k is not OpenAI's, but vLLM's and Anthropic-backed gateways'.
  readSharedOptions(body, out, ['temperature', 'top_p', 'top_k', 'stop', 'seed', 'presence_penalty', 'frequency_penalty', 'n']);
  out.set('logprobs', readBoolean(body, 'logprobs'), 'logprobs');
  out.set('topLogprobs', readInteger(body, 'top_logprobs'), 'top_logprobs');
  out.set('responseFormat', chatResponseFormatToCanonical(body['response_format']), 'response_format');
  out.set('parallelToolCalls', readBoolean(body, 'parallel_tool_calls'), 'parallel_tool_calls');
  out.set('user', readString(body, 'user'), 'user');
  out.set('verbosity', readString(body, 'verbosity'), 'verbosity');
  out.set('serviceTier', readString(body, 'service_tier'), 'service_tier');
  out.set('promptCacheKey', readString(body, 'prompt_cache_key'), 'prompt_cache_key');

  const effort = readString(body, 'reasoning_effort');
  if (effort !== undefined && !REASONING_EFFORTS.has(effort)) {
    throw badRequest('reasoning_effort must be none, minimal, low, medium, high or xhigh.', 'reasoning_effort');
  }
  const thinkingValue = body['thinking'];
  const thinking = thinkingValue === undefined || thinkingValue === null ? undefined : readThinking(thinkingValue, 'thinking');
  if (effort !== undefined && thinking !== undefined) {
    throw new GatewayError('mutually_exclusive_parameters', 'Send reasoning_effort or thinking, not both.', { param: 'thinking' });
  }
  if (effort !== undefined) out.set('reasoning', { effort: effort as ReasoningEffort }, 'reasoning_effort');
  else if (thinking) out.set('reasoning', thinking, 'thinking');
  else if (thinking === null) extra['thinking'] = thinkingValue; // a thinking type the canonical model does not describe
  return out;
}

/** A chat completions body (already validated as an object by the route) → the canonical request. */
export function chatRequestToCanonical(body: JsonObject): CanonicalRequest {
  const model = body['model'];
  if (typeof model !== 'string' || model === '') throw badRequest('model is required.', 'model');
  const extra = unknownFields(body, MAPPED_FIELDS) ?? {};
  const { options, fieldNames } = readOptions(body, extra);
  const request: ModelRequest = { model, messages: chatMessagesToCanonical(body['messages']), tools: chatToolsToCanonical(body['tools']), options };
  const toolChoice = chatToolChoiceToCanonical(body['tool_choice']);
  if (toolChoice) request.toolChoice = toolChoice;
  if (Object.keys(extra).length > 0) request.extra = { format: 'chat', fields: extra };
  return { request, fieldNames };
}
