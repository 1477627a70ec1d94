// What the gateway keeps of a server's `tools/list` entry: what the model is offered (name,
// description, input schema) and the annotations `read_only` filters and an `mcp_list_tools` item use.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../canonical/model';

/**
 * MCP tool annotations (hints from the server, not guarantees: spec "Tool annotations"). A type, not an
 * interface, so it is also a `Record<string, unknown>` where a caller wants a plain JSON object.
 */
export type McpToolAnnotations = {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
};

export interface McpToolInfo {
  name: string;
  /** Absent when the server gives none. */
  description?: string;
  /** JSON Schema of the arguments object. */
  inputSchema: JsonObject;
  /** Absent when the server gives none. */
  annotations?: McpToolAnnotations;
}

export function toolInfo(tool: Tool): McpToolInfo {
  const info: McpToolInfo = { name: tool.name, inputSchema: tool.inputSchema as JsonObject };
  if (typeof tool.description === 'string') info.description = tool.description;
  if (tool.annotations) {
    const annotations: McpToolAnnotations = {};
    const { title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint } = tool.annotations;
    if (typeof title === 'string') annotations.title = title;
    if (typeof readOnlyHint === 'boolean') annotations.readOnlyHint = readOnlyHint;
    if (typeof destructiveHint === 'boolean') annotations.destructiveHint = destructiveHint;
    if (typeof idempotentHint === 'boolean') annotations.idempotentHint = idempotentHint;
    if (typeof openWorldHint === 'boolean') annotations.openWorldHint = openWorldHint;
    info.annotations = annotations;
  }
  return info;
}
