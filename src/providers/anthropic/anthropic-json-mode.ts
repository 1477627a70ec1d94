// Rule 4 of the chat completions spec: for this family the service itself enforces `response_format`
// json_object / json_schema, so that `choices[0].message.content` is raw JSON without a code fence,
// streaming or not. Anthropic has no JSON switch, so we force a tool whose input schema is the wanted
// schema and hand the tool's input back as the message content (the Anthropic-documented way to get
// JSON out of Claude: "JSON mode" in the tool-use guide).
//
// Rule 5 sets the limits, and we keep them: json_object is not forced when the caller brings `tools`,
// `tool_choice` or extended thinking (forcing would suppress their tools, and Anthropic refuses forced
// tool use with thinking). json_schema is always given the tool; it is forced unless thinking is on.
import type { ChatCompletionRequest } from '../types';
import type { AnthropicTool, AnthropicToolChoice } from './anthropic-wire-types';

/** What the reply and stream translators must know to turn the JSON tool back into content. */
export interface JsonToolPlan {
  name: string;
  /** The schema was not an object: it was wrapped as `{value: <schema>}` and must be unwrapped. */
  wrappedKey: string | null;
  /** Forced: any text the model writes besides the tool input is dropped (content stays pure JSON). */
  forced: boolean;
}

export interface JsonModeDecision {
  plan: JsonToolPlan;
  tool: AnthropicTool;
  /** The tool_choice to send, or undefined to keep the one derived from the request. */
  toolChoice: AnthropicToolChoice | undefined;
}

const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
const DEFAULT_TOOL_NAME = 'json_response';
const WRAPPED_KEY = 'value';

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function hasThinking(request: ChatCompletionRequest): boolean {
  const thinking = request['thinking'];
  if (isRecord(thinking) && thinking['type'] !== 'disabled') return true;
  return request['reasoning_effort'] !== undefined && request['reasoning_effort'] !== null;
}

/** Decides whether (and how) to enforce JSON output; undefined when the request asks for none. */
export function planJsonMode(request: ChatCompletionRequest, userTools: readonly AnthropicTool[]): JsonModeDecision | undefined {
  const format = request['response_format'];
  if (!isRecord(format)) return undefined;
  const thinking = hasThinking(request);
  const hasTools = userTools.length > 0;
  const hasToolChoice = request['tool_choice'] !== undefined && request['tool_choice'] !== null;
  const takenNames = new Set(userTools.map((t) => t.name));

  if (format['type'] === 'json_object') {
    if (hasTools || hasToolChoice || thinking) return undefined; // rule 5 (b) and (c)
    const name = DEFAULT_TOOL_NAME;
    return {
      plan: { name, wrappedKey: null, forced: true },
      tool: {
        name,
        description: 'Answer with a single JSON object. Put the whole answer in the input of this tool.',
        input_schema: { type: 'object' },
      },
      toolChoice: { type: 'tool', name },
    };
  }

  if (format['type'] === 'json_schema') {
    const spec = isRecord(format['json_schema']) ? format['json_schema'] : {};
    const schema = isRecord(spec['schema']) ? spec['schema'] : { type: 'object' };
    let name = typeof spec['name'] === 'string' && TOOL_NAME_PATTERN.test(spec['name']) ? spec['name'] : DEFAULT_TOOL_NAME;
    while (takenNames.has(name)) name = `${name}_`.slice(-64);
    // Anthropic tool inputs are always objects: other top-level schemas are wrapped and unwrapped later.
    const isObjectSchema = schema['type'] === 'object' || (schema['type'] === undefined && isRecord(schema['properties']));
    const wrappedKey = isObjectSchema ? null : WRAPPED_KEY;
    const inputSchema = isObjectSchema ? schema : { type: 'object', properties: { [WRAPPED_KEY]: schema }, required: [WRAPPED_KEY] };
    const description =
      (typeof spec['description'] === 'string' ? `${spec['description']} ` : '') +
      'Answer by calling this tool: its input is the whole answer, as JSON matching the schema.';
    const tool: AnthropicTool = { name, description, input_schema: inputSchema };
    if (thinking) {
      // Anthropic rejects forced tool use with extended thinking: offer the tool, don't force it.
      return { plan: { name, wrappedKey, forced: false }, tool, toolChoice: undefined };
    }
    const choice = request['tool_choice'];
    if (isRecord(choice)) {
      // The caller forces one of its own functions: that wins, the JSON tool stays available.
      return { plan: { name, wrappedKey, forced: true }, tool, toolChoice: undefined };
    }
    const toolChoice: AnthropicToolChoice = hasTools && choice !== 'none' ? { type: 'any' } : { type: 'tool', name };
    return { plan: { name, wrappedKey, forced: true }, tool, toolChoice };
  }
  return undefined;
}

/** The JSON text of the tool input as the content (unwrapping a wrapped non-object schema). */
export function jsonToolInputToContent(input: unknown, plan: JsonToolPlan): string {
  if (plan.wrappedKey !== null && isRecord(input)) return JSON.stringify(input[plan.wrappedKey] ?? null);
  return JSON.stringify(input ?? {});
}
