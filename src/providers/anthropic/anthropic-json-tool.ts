// Rule 4 of the chat completions spec, for every caller format: a `responseFormat` of json_object or
// json_schema gives raw JSON text without a code fence, streaming or not. Anthropic has no JSON switch,
// so we offer (and usually force) a tool whose input schema is the wanted schema and hand the tool's
// input back as text (the Anthropic-documented way to get JSON out of Claude: "JSON mode" in the
// tool-use guide).
//
// Rule 5 sets the limits, and we keep them: json_object is not forced when the caller brings tools, a
// tool choice or extended thinking (forcing would suppress their tools, and Anthropic refuses forced
// tool use with thinking). json_schema always gets the tool; it is forced unless thinking is on.
import type { ResponseFormat, ToolChoice } from '../../canonical/model';
import type { AnthropicTool, AnthropicToolChoice } from './anthropic-wire-types';

/** What the reply and stream translators must know to turn the JSON tool back into text. */
export interface JsonToolPlan {
  name: string;
  /** The schema was not an object: it was wrapped as `{value: <schema>}` and must be unwrapped. */
  wrappedKey: string | null;
  /** Forced: any text the model writes besides the tool input is dropped (the reply stays pure JSON). */
  forced: boolean;
}

export interface JsonToolDecision {
  plan: JsonToolPlan;
  tool: AnthropicTool;
  /** The tool_choice to send, or undefined to keep the one derived from the request. */
  toolChoice: AnthropicToolChoice | undefined;
}

export interface JsonToolContext {
  /** Names of the tools the caller's request sends (the JSON tool must not take one). */
  toolNames: readonly string[];
  toolChoice: ToolChoice | undefined;
  /** Extended thinking is on for this request. */
  thinking: boolean;
}

const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
const DEFAULT_TOOL_NAME = 'json_response';
const WRAPPED_KEY = 'value';

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Decides whether (and how) to enforce JSON output; undefined when the request asks for none. */
export function planJsonTool(format: ResponseFormat | undefined, context: JsonToolContext): JsonToolDecision | undefined {
  if (format === undefined || format.type === 'text') return undefined;
  const hasTools = context.toolNames.length > 0;

  if (format.type === 'json_object') {
    if (hasTools || context.toolChoice !== undefined || context.thinking) return undefined; // rule 5 (b) and (c)
    const name = DEFAULT_TOOL_NAME;
    return {
      plan: { name, wrappedKey: null, forced: true },
      tool: { name, description: 'Answer with a single JSON object. Put the whole answer in the input of this tool.', input_schema: { type: 'object' } },
      toolChoice: { type: 'tool', name },
    };
  }

  const taken = new Set(context.toolNames);
  let name = TOOL_NAME_PATTERN.test(format.name) ? format.name : DEFAULT_TOOL_NAME;
  while (taken.has(name)) name = `${name}_`.slice(-64);
  const schema = format.schema;
  // Anthropic tool inputs are always objects: other top-level schemas are wrapped, and unwrapped later.
  const isObjectSchema = schema['type'] === 'object' || (schema['type'] === undefined && isRecord(schema['properties']));
  const wrappedKey = isObjectSchema ? null : WRAPPED_KEY;
  const inputSchema = isObjectSchema ? schema : { type: 'object', properties: { [WRAPPED_KEY]: schema }, required: [WRAPPED_KEY] };
  const description =
    (format.description !== undefined ? `${format.description} ` : '') +
    'Answer by calling this tool: its input is the whole answer, as JSON matching the schema.';
  const tool: AnthropicTool = { name, description, input_schema: inputSchema };
  // Anthropic rejects forced tool use with extended thinking: offer the tool, don't force it.
  if (context.thinking) return { plan: { name, wrappedKey, forced: false }, tool, toolChoice: undefined };
  // The caller forces one of its own tools: that wins, the JSON tool stays available.
  if (context.toolChoice?.kind === 'tool') return { plan: { name, wrappedKey, forced: true }, tool, toolChoice: undefined };
  const toolChoice: AnthropicToolChoice = hasTools && context.toolChoice?.kind !== 'none' ? { type: 'any' } : { type: 'tool', name };
  return { plan: { name, wrappedKey, forced: true }, tool, toolChoice };
}

/** The JSON text of the tool input as the reply's text (unwrapping a wrapped non-object schema). */
export function jsonToolInputToText(input: unknown, plan: JsonToolPlan): string {
  if (plan.wrappedKey !== null && isRecord(input)) return JSON.stringify(input[plan.wrappedKey] ?? null);
  return JSON.stringify(input ?? {});
}
