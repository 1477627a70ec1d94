// Responses `tools` and `tool_choice` → canonical. Tools: `function` → function; `mcp` → an MCP
// server (the stateless handler refuses it: unsupported_tool_type); our hosted `svc_*` types and the
// `svc_tools` shorthand → hosted (the gateway's tool loop runs them); any other type (OpenAI's
// `web_search_preview`, `file_search`, `custom`, ...) → native, forwarded verbatim to a provider that
// speaks Responses.
//
// tool_choice: `auto`, `none`, `required`, `{type: function, name}` and
// `{type: allowed_tools, mode, tools}` map one to one. The forms that force a tool of another kind
// name it the way its definition is known: `{type: custom, name}` by its name, `{type: mcp,
// server_label, name?}` by the MCP tool's name (else its server label), and a hosted or provider tool
// (`{type: web_search_preview}`, `{type: svc_shell}`) by its type, which is what its canonical
// definition carries (`ToolDefinition.type`). The same rule names the entries of `allowed_tools`.
import type { JsonObject, ToolChoice, ToolDefinition } from '../../canonical/model';
import { isRecord, optionalString, requiredString, unreadable } from './request-errors';

/** Our hosted tool types (spec "Hosted tools"): `svc_tools` expands to the current set at request time. */
export const isHostedToolType = (type: string): boolean => type.startsWith('svc_');

/**
 * The function name a model calls an MCP server's tool by: the server label and the tool's name
 * (`<label>__<tool>`), cut to what every provider accepts (letters, digits, `_`, `-`; 64 at most).
 */
export function mcpFunctionName(serverLabel: string, toolName: string): string {
  return `${serverLabel}__${toolName}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

function functionTool(tool: Record<string, unknown>, param: string): ToolDefinition {
  const definition: ToolDefinition = { kind: 'function', name: requiredString(tool, 'name', param) };
  const description = optionalString(tool, 'description', param);
  if (description !== undefined) definition.description = description;
  const parameters = tool['parameters'];
  if (isRecord(parameters)) definition.parameters = parameters;
  else if (parameters !== undefined && parameters !== null) throw unreadable(`${param}.parameters`, 'must be a JSON Schema object.');
  const strict = tool['strict'];
  if (typeof strict === 'boolean') definition.strict = strict;
  else if (strict !== undefined && strict !== null) throw unreadable(`${param}.strict`, 'must be a boolean.');
  return definition;
}

function withoutType(tool: Record<string, unknown>): JsonObject {
  const { type: _type, ...config } = tool;
  return config;
}

function toolDefinition(tool: unknown, param: string): ToolDefinition {
  if (!isRecord(tool)) throw unreadable(param, 'must be a tool object.');
  const type = requiredString(tool, 'type', param);
  if (type === 'function') return functionTool(tool, param);
  if (type === 'mcp') return { kind: 'mcp', serverLabel: requiredString(tool, 'server_label', param), config: withoutType(tool) };
  if (isHostedToolType(type)) return { kind: 'hosted', type, config: withoutType(tool) };
  return { kind: 'native', format: 'responses', type, definition: tool };
}

export function toolsToCanonical(tools: unknown): ToolDefinition[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw unreadable('tools', 'must be an array of tools.');
  return tools.map((tool, i) => toolDefinition(tool, `tools[${i}]`));
}

/** The name a forced or allowed tool goes by (see the header). */
function chosenToolName(choice: Record<string, unknown>, param: string): string {
  const type = requiredString(choice, 'type', param);
  if (type === 'function' || type === 'custom') return requiredString(choice, 'name', param);
  if (type === 'mcp') return optionalString(choice, 'name', param) ?? requiredString(choice, 'server_label', param);
  return type;
}

function allowedTools(choice: Record<string, unknown>): ToolChoice {
  const mode = choice['mode'] ?? 'auto';
  const tools = choice['tools'];
  if (!Array.isArray(tools)) throw unreadable('tool_choice.tools', 'must be an array of tools.');
  const names = tools.map((tool, i) => {
    const param = `tool_choice.tools[${i}]`;
    if (!isRecord(tool)) throw unreadable(param, 'must be a tool object ({type: function, name}).');
    return chosenToolName(tool, param);
  });
  if (mode === 'auto' || mode === 'required') return { kind: 'allowed', mode, names };
  if (mode === 'none') return { kind: 'none' }; // no tool may be called, whichever are allowed
  throw unreadable('tool_choice.mode', 'must be auto, required or none.');
}

/** `tool_choice` (absent or null: undefined, the provider's default, which is auto). */
export function toolChoiceToCanonical(choice: unknown): ToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return { kind: choice };
  if (!isRecord(choice)) throw unreadable('tool_choice', 'must be auto, none, required or a tool choice object.');
  if (choice['type'] === 'allowed_tools') return allowedTools(choice);
  return { kind: 'tool', name: chosenToolName(choice, 'tool_choice') };
}
