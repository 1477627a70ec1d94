// A canonical ModelRequest to a Gemini generateContent body. The request is only read, never modified
// (a retry, or another provider, sees it unchanged). Options Gemini has no field for (user,
// parallelToolCalls, verbosity, serviceTier, promptCacheKey) are not sent: Gemini rejects unknown
// fields, and the provider does not list them as honoured, so the call reports them dropped.
// responseFormat json_object / json_schema goes to Gemini's own JSON mode (responseMimeType +
// responseJsonSchema), so the reply is raw JSON, streamed or not.
import type { GenerationOptions, JsonObject, ModelRequest, ReasoningConfig, ReasoningEffort, ToolChoice, ToolDefinition } from '../../canonical/model';
import { GatewayError } from '../../http/errors';
import { convertJsonSchemaForGemini, isEmptyObjectSchema } from './convert-json-schema-for-gemini';
import { convertModelMessagesToGemini } from './convert-model-messages-to-gemini';
import type { GeminiFunctionDeclaration, GeminiGenerationConfig, GeminiRequest, GeminiToolConfig } from './gemini-wire-types';

function convertTool(tool: ToolDefinition, index: number): GeminiFunctionDeclaration {
  if (tool.kind !== 'function') {
    const type = tool.kind === 'mcp' ? 'mcp' : tool.type;
    throw new GatewayError('unsupported_tool_type', `Tools of type ${type} cannot be sent to a Gemini model; use function tools.`, {
      param: `tools[${index}]`,
    });
  }
  const declaration: GeminiFunctionDeclaration = { name: tool.name };
  if (tool.description !== undefined) declaration.description = tool.description;
  // Gemini wants an argument-less function declared without parameters rather than with an empty object.
  if (tool.parameters !== undefined && !isEmptyObjectSchema(tool.parameters)) {
    declaration.parametersJsonSchema = convertJsonSchemaForGemini(tool.parameters) as JsonObject;
  }
  return declaration;
}

function convertToolChoice(choice: ToolChoice): GeminiToolConfig {
  switch (choice.kind) {
    case 'auto':
      return { functionCallingConfig: { mode: 'AUTO' } };
    case 'none':
      return { functionCallingConfig: { mode: 'NONE' } };
    case 'required':
      return { functionCallingConfig: { mode: 'ANY' } };
    case 'tool':
      return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
    case 'allowed':
      // ANY: a call of one of them; VALIDATED: a call of one of them, or text.
      return { functionCallingConfig: { mode: choice.mode === 'required' ? 'ANY' : 'VALIDATED', allowedFunctionNames: [...choice.names] } };
  }
}

/**
 * Reasoning effort to a thinking budget, with the figures Google's own OpenAI compatibility layer
 * uses (https://ai.google.dev/gemini-api/docs/openai#thinking). A budget (not Gemini 3's
 * thinkingLevel) because every thinking generation accepts it; `xhigh` gets `high`'s 24576, the
 * largest budget every 2.5 model accepts (Flash's maximum).
 */
export const THINKING_BUDGET: Readonly<Record<ReasoningEffort, number>> = { none: 0, minimal: 1024, low: 1024, medium: 8192, high: 24576, xhigh: 24576 };

function thinkingConfig(reasoning: ReasoningConfig): GeminiGenerationConfig['thinkingConfig'] | undefined {
  const config: NonNullable<GeminiGenerationConfig['thinkingConfig']> = {};
  if (reasoning.disabled === true) config.thinkingBudget = 0;
  else if (reasoning.budgetTokens !== undefined) config.thinkingBudget = reasoning.budgetTokens;
  else if (reasoning.effort !== undefined) config.thinkingBudget = THINKING_BUDGET[reasoning.effort];
  // A summary asked for: Gemini's thought summaries, returned as reasoning.
  if (reasoning.summary !== undefined && reasoning.disabled !== true) config.includeThoughts = true;
  return Object.keys(config).length > 0 ? config : undefined;
}

function generationConfig(options: GenerationOptions): GeminiGenerationConfig | undefined {
  const config: GeminiGenerationConfig = {};
  if (options.maxOutputTokens !== undefined) config.maxOutputTokens = options.maxOutputTokens;
  if (options.temperature !== undefined) config.temperature = options.temperature;
  if (options.topP !== undefined) config.topP = options.topP;
  if (options.topK !== undefined) config.topK = options.topK;
  if (options.stop !== undefined) config.stopSequences = [...options.stop];
  if (options.n !== undefined) config.candidateCount = options.n;
  if (options.seed !== undefined) config.seed = options.seed;
  if (options.presencePenalty !== undefined) config.presencePenalty = options.presencePenalty;
  if (options.frequencyPenalty !== undefined) config.frequencyPenalty = options.frequencyPenalty;
  if (options.logprobs === true) {
    config.responseLogprobs = true;
    if (options.topLogprobs !== undefined) config.logprobs = options.topLogprobs;
  }
  const thinking = options.reasoning && thinkingConfig(options.reasoning);
  if (thinking) config.thinkingConfig = thinking;
  const format = options.responseFormat;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    config.responseJsonSchema = convertJsonSchemaForGemini(format.schema) as JsonObject;
  }
  return Object.keys(config).length > 0 ? config : undefined;
}

export function convertModelRequestToGemini(request: ModelRequest): GeminiRequest {
  const { systemInstruction, contents } = convertModelMessagesToGemini(request.messages);
  const body: GeminiRequest = { contents };
  if (systemInstruction) body.systemInstruction = systemInstruction;
  if (request.tools.length > 0) body.tools = [{ functionDeclarations: request.tools.map(convertTool) }];
  if (request.toolChoice !== undefined) body.toolConfig = convertToolChoice(request.toolChoice);
  const config = generationConfig(request.options);
  if (config) body.generationConfig = config;
  return body;
}
