// What the gateway keeps of a server's `tools/list` entry: what the model is offered (name,
// description, input schema) and the annotations `read_only` filters and an `mcp_list_tools` item use.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../canonical/model';

/** MCP tool annotations (hints from the server, not guarantees: spec "Tool annotations"). */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface McpToolInfo {
  name: string;
  /** Null when the server gives none. */
  description: string | null;
  /** JSON Schema of the arguments object. */
  inputSchema: JsonObject;
  /** Null when the server gives none. */
  annotations: McpToolAnnotations | null;
}

export function toolInfo(tool: Tool): McpToolInfo {
  let annotations: McpToolAnnotations | null = null;
  if (tool.annotations) {
    annotations = {};
    const { title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint } = tool.annotations;
    if (typeof title === 'string') annotations.title = title;
    if (typeof readOnlyHint === 'boolean') annotations.readOnlyHint = readOnlyHint;
    if (typeof destructiveHint === 'boolean') annotations.destructiveHint = destructiveHint;
    if (typeof idempotentHint === 'boolean') annotations.idempotentHint = idempotentHint;
    if (typeof openWorldHint === 'boolean') annotations.openWorldHint = openWorldHint;
  }
  return { name: tool.name, description: tool.description ?? null, inputSchema: tool.inputSchema as JsonObject, annotations };
}
