// A chat-completions request to a Gemini generateContent body. The caller's request is only read,
// never modified (so a retry, or another provider, sees it unchanged).
// Fields mapped: messages (convert-to-gemini-contents), tools, tool_choice, temperature, top_p,
// top_k, max_tokens / max_completion_tokens, stop, n, seed, presence_penalty, frequency_penalty,
// logprobs / top_logprobs, reasoning_effort (thinking budget), response_format (json_object / json_schema -> Gemini's JSON mode, rule 4
// of the chat completions spec). Fields with no Gemini meaning (user, metadata, stream_options,
// parallel_tool_calls, ...) are not sent: Gemini rejects unknown fields.
import { GatewayError } from '../../http/errors';
import type { ChatCompletionRequest, JsonObject } from '../types';
import { convertJsonSchemaForGemini, isEmptyObjectSchema } from './convert-json-schema-for-gemini';
import { convertToGeminiContents } from './convert-to-gemini-contents';
import type { GeminiFunctionDeclaration, GeminiGenerationConfig, GeminiRequest, GeminiToolConfig } from './gemini-wire-types';

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

function numberField(request: ChatCompletionRequest, key: string): number | undefined {
  const value = request[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new GatewayError('bad_request', `${key} must be a number.`, { param: key });
  return value;
}

function convertTools(tools: unknown): GeminiFunctionDeclaration[] | undefined {
  if (tools === undefined || tools === null) return undefined;
  if (!Array.isArray(tools)) throw new GatewayError('bad_request', 'tools must be an array.', { param: 'tools' });
  return tools.map((tool: unknown, index) => {
    if (!isObject(tool) || tool['type'] !== 'function' || !isObject(tool['function'])) {
      const type = isObject(tool) ? String(tool['type']) : typeof tool;
      throw new GatewayError('unsupported_tool_type', `Tools of type ${type} cannot be sent to a Gemini model; use function tools.`, {
        param: `tools[${index}].type`,
      });
    }
    const fn = tool['function'];
    if (typeof fn['name'] !== 'string' || fn['name'].length === 0) {
      throw new GatewayError('bad_request', 'A function tool needs a name.', { param: `tools[${index}].function.name` });
    }
    const declaration: GeminiFunctionDeclaration = { name: fn['name'] };
    if (typeof fn['description'] === 'string') declaration.description = fn['description'];
    const parameters = fn['parameters'];
    if (isObject(parameters) && !isEmptyObjectSchema(parameters)) {
      declaration.parametersJsonSchema = convertJsonSchemaForGemini(parameters) as JsonObject;
    }
    return declaration;
  });
}

function convertToolChoice(choice: unknown): GeminiToolConfig | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  if (isObject(choice) && choice['type'] === 'function') {
    const fn = choice['function'];
    const name = isObject(fn) ? fn['name'] : choice['name'];
    if (typeof name === 'string' && name.length > 0) return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } };
  }
  throw new GatewayError('bad_request', "tool_choice must be 'auto', 'none', 'required' or {type: 'function', function: {name}}.", {
    param: 'tool_choice',
  });
}

function convertStop(stop: unknown): string[] | undefined {
  if (stop === undefined || stop === null) return undefined;
  if (typeof stop === 'string') return [stop];
  if (Array.isArray(stop) && stop.every((entry) => typeof entry === 'string')) return stop as string[];
  throw new GatewayError('bad_request', 'stop must be a string or an array of strings.', { param: 'stop' });
}

function applyResponseFormat(format: unknown, config: GeminiGenerationConfig): void {
  if (format === undefined || format === null) return;
  if (!isObject(format)) throw new GatewayError('bad_request', 'response_format must be an object.', { param: 'response_format' });
  switch (format['type']) {
    case 'text':
      return;
    case 'json_object':
      // Gemini's JSON mode: the candidate text is raw JSON, never fenced.
      config.responseMimeType = 'application/json';
      return;
    case 'json_schema': {
      const spec = format['json_schema'];
      config.responseMimeType = 'application/json';
      const schema = isObject(spec) ? spec['schema'] : undefined;
      if (isObject(schema)) config.responseJsonSchema = convertJsonSchemaForGemini(schema) as JsonObject;
      return;
    }
    default:
      throw new GatewayError('bad_request', "response_format.type must be 'text', 'json_object' or 'json_schema'.", {
        param: 'response_format.type',
      });
  }
}

/**
 * reasoning_effort to a thinking budget, with the token figures Google's own OpenAI compatibility
 * layer uses (https://ai.google.dev/gemini-api/docs/openai#thinking). A budget (not Gemini 3's
 * thinkingLevel) because every thinking generation accepts it.
 */
const THINKING_BUDGET: Readonly<Record<string, number>> = { none: 0, minimal: 1024, low: 1024, medium: 8192, high: 24576 };

function thinkingBudget(request: ChatCompletionRequest): number | undefined {
  const effort = request['reasoning_effort'];
  if (effort === undefined || effort === null) return undefined;
  const budget = typeof effort === 'string' ? THINKING_BUDGET[effort] : undefined;
  if (budget === undefined) {
    throw new GatewayError('bad_request', "reasoning_effort must be 'none', 'minimal', 'low', 'medium' or 'high'.", { param: 'reasoning_effort' });
  }
  return budget;
}

function generationConfig(request: ChatCompletionRequest): GeminiGenerationConfig | undefined {
  const config: GeminiGenerationConfig = {};
  const temperature = numberField(request, 'temperature');
  if (temperature !== undefined) config.temperature = temperature;
  const topP = numberField(request, 'top_p');
  if (topP !== undefined) config.topP = topP;
  const topK = numberField(request, 'top_k');
  if (topK !== undefined) config.topK = topK;
  const maxTokens = numberField(request, 'max_completion_tokens') ?? numberField(request, 'max_tokens');
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  const stop = convertStop(request['stop']);
  if (stop) config.stopSequences = stop;
  const n = numberField(request, 'n');
  if (n !== undefined) config.candidateCount = n;
  const seed = numberField(request, 'seed');
  if (seed !== undefined) config.seed = seed;
  const presence = numberField(request, 'presence_penalty');
  if (presence !== undefined) config.presencePenalty = presence;
  const frequency = numberField(request, 'frequency_penalty');
  if (frequency !== undefined) config.frequencyPenalty = frequency;
  if (request['logprobs'] === true) {
    config.responseLogprobs = true;
    const top = numberField(request, 'top_logprobs');
    if (top !== undefined) config.logprobs = top;
  }
  const budget = thinkingBudget(request);
  if (budget !== undefined) config.thinkingConfig = { thinkingBudget: budget };
  applyResponseFormat(request['response_format'], config);
  return Object.keys(config).length > 0 ? config : undefined;
}

export function convertToGeminiRequest(request: ChatCompletionRequest): GeminiRequest {
  if (!Array.isArray(request.messages)) throw new GatewayError('bad_request', 'messages must be an array.', { param: 'messages' });
  const { systemInstruction, contents } = convertToGeminiContents(request.messages);
  const body: GeminiRequest = { contents };
  if (systemInstruction) body.systemInstruction = systemInstruction;
  const declarations = convertTools(request['tools']);
  if (declarations && declarations.length > 0) body.tools = [{ functionDeclarations: declarations }];
  const toolConfig = convertToolChoice(request['tool_choice']);
  if (toolConfig) body.toolConfig = toolConfig;
  const config = generationConfig(request);
  if (config) body.generationConfig = config;
  return body;
}
