// Canonical request → Anthropic Messages body (https://docs.anthropic.com/en/api/messages). Pure: the
// request is only read (retries resend it). `model`, `anthropic_version` and `stream` are left to the
// hosting (Anthropic puts the model in the body, Bedrock and Vertex in the URL).
//
// Options: exactly those in ANTHROPIC_HONOURED_OPTIONS are mapped; the rest have no Anthropic field
// and are not sent (Anthropic rejects unknown fields); the model-call layer reports them to the caller.
import type { ModelRequest, OptionName, ToolChoice, ToolDefinition } from '../../canonical/model';
import { GatewayError } from '../../http/errors';
import { planJsonTool, type JsonToolPlan } from './anthropic-json-tool';
import { planThinking } from './anthropic-thinking-budget';
import type { AnthropicMessagesBody, AnthropicTool, AnthropicToolChoice } from './anthropic-wire-types';
import { canonicalToAnthropicMessages } from './canonical-to-anthropic-messages';

/** The generation options this converter maps onto Messages fields. */
export const ANTHROPIC_HONOURED_OPTIONS: ReadonlySet<OptionName> = new Set<OptionName>([
  'maxOutputTokens', // max_tokens
  'temperature',
  'topP', // top_p
  'topK', // top_k
  'stop', // stop_sequences
  'user', // metadata.user_id
  'parallelToolCalls', // tool_choice.disable_parallel_tool_use
  'reasoning', // thinking
  'responseFormat', // the JSON tool (anthropic-json-tool.ts)
]);

/** Body fields the hosting owns: an `extra` field of the same name is never sent. */
const HOSTING_FIELDS = new Set(['model', 'stream', 'anthropic_version']);

export interface AnthropicCall {
  body: AnthropicMessagesBody;
  /** Set when the response format is enforced through a JSON tool (see anthropic-json-tool.ts). */
  jsonTool: JsonToolPlan | null;
}

function toolDefinition(tool: ToolDefinition, param: string): AnthropicTool {
  switch (tool.kind) {
    case 'function': {
      const converted: AnthropicTool = { name: tool.name, input_schema: tool.parameters ?? { type: 'object', properties: {} } };
      if (tool.description !== undefined) converted.description = tool.description;
      if (tool.cacheControl !== undefined) converted['cache_control'] = tool.cacheControl;
      return converted;
    }
    case 'native':
      // An Anthropic tool the canonical model does not describe (web_search_20250305, bash_20250124...).
      if (tool.format === 'messages') return tool.definition as AnthropicTool;
      throw new GatewayError('unsupported_tool_type', `Tools of type ${tool.type} cannot be sent to an Anthropic model.`, { param });
    case 'hosted':
      throw new GatewayError('unsupported_tool_type', `Hosted tools (${tool.type}) cannot be sent to an Anthropic model.`, { param });
    case 'mcp':
      throw new GatewayError('unsupported_tool_type', `MCP tools (${tool.serverLabel}) cannot be sent to an Anthropic model.`, { param });
  }
}

/**
 * Tool choice → Anthropic's. Anthropic has no allowed-list: `allowed` sends only the allowed tools'
 * definitions, with `auto` or `any` as its mode says.
 */
function toolChoiceAndTools(choice: ToolChoice | undefined, tools: AnthropicTool[]): { toolChoice: AnthropicToolChoice | undefined; tools: AnthropicTool[] } {
  switch (choice?.kind) {
    case undefined:
      return { toolChoice: undefined, tools };
    case 'auto':
      return { toolChoice: { type: 'auto' }, tools };
    case 'none':
      return { toolChoice: { type: 'none' }, tools };
    case 'required':
      return { toolChoice: { type: 'any' }, tools };
    case 'tool':
      return { toolChoice: { type: 'tool', name: choice.name }, tools };
    case 'allowed': {
      const names = new Set(choice.names);
      const allowed = tools.filter((tool) => names.has(tool.name));
      if (choice.mode === 'required' && allowed.length === 0) {
        throw new GatewayError('bad_request', 'tool_choice requires a call of an allowed tool, but none of the allowed tools is defined.', {
          param: 'tool_choice',
        });
      }
      return { toolChoice: { type: choice.mode === 'required' ? 'any' : 'auto' }, tools: allowed };
    }
  }
}

/** The canonical request → an Anthropic Messages body and the plan the reply translators need. */
export function canonicalToAnthropic(request: ModelRequest): AnthropicCall {
  const { system, turns } = canonicalToAnthropicMessages(request.messages);
  const options = request.options;
  const { thinking, maxTokens } = planThinking(options.reasoning, options.maxOutputTokens);
  const body: AnthropicMessagesBody = { messages: turns, max_tokens: maxTokens };

  if (system.length > 0) {
    // Plain text is joined into one string; blocks are kept when one carries cache control.
    const plain = system.every((b) => Object.keys(b).length === 2);
    body.system = plain ? system.map((b) => b.text).join('\n\n') : system;
  }
  if (options.stop !== undefined && options.stop.length > 0) body.stop_sequences = [...options.stop];
  if (options.temperature !== undefined) body.temperature = options.temperature;
  if (options.topP !== undefined) body.top_p = options.topP;
  if (options.topK !== undefined) body.top_k = options.topK;
  if (options.user !== undefined && options.user !== '') body.metadata = { user_id: options.user };
  if (thinking) body.thinking = thinking;

  const defined = request.tools.map((tool, i) => toolDefinition(tool, `tools[${i}]`));
  const chosen = toolChoiceAndTools(request.toolChoice, defined);
  let toolChoice = chosen.toolChoice;
  const tools = chosen.tools;
  const json = planJsonTool(options.responseFormat, {
    toolNames: tools.map((t) => t.name),
    toolChoice: request.toolChoice,
    thinking: thinking?.type === 'enabled',
  });
  if (json) {
    tools.push(json.tool);
    if (json.toolChoice) toolChoice = json.toolChoice;
  }
  // Anthropic takes tool_choice only alongside tools.
  if (tools.length > 0) {
    body.tools = tools;
    if (options.parallelToolCalls === false && toolChoice?.type !== 'none') {
      toolChoice = { ...(toolChoice ?? { type: 'auto' }), disable_parallel_tool_use: true };
    }
    if (toolChoice) body.tool_choice = toolChoice;
  }

  // Fields of a /v1/messages caller with no canonical meaning (container, mcp_servers, service_tier...)
  // are Messages fields already: sent as they came, never over a field mapped above.
  if (request.extra?.format === 'messages') {
    for (const [key, value] of Object.entries(request.extra.fields)) {
      if (!(key in body) && !HOSTING_FIELDS.has(key)) body[key] = value;
    }
  }
  return { body, jsonTool: json?.plan ?? null };
}
