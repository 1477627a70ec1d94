// `allowed_tools` and `require_approval` evaluated for one tool. A `read_only` condition is judged by
// the tool's `readOnlyHint` annotation (absent counts as not read-only, as the MCP spec's default is);
// given only a name, a `read_only` condition cannot hold, so such a rule never matches on a name alone.
import type { McpServerSpec, McpToolFilter } from './server-spec';
import type { McpToolInfo } from './tool-info';

/** A tool by its name alone, or as the server listed it (annotations included). */
export type McpToolRef = string | Pick<McpToolInfo, 'name' | 'annotations'>;

export function filterMatches(filter: McpToolFilter, tool: McpToolRef): boolean {
  const name = typeof tool === 'string' ? tool : tool.name;
  if (filter.toolNames !== undefined && !filter.toolNames.includes(name)) return false;
  if (filter.readOnly !== undefined) {
    if (typeof tool === 'string') return false;
    if ((tool.annotations?.readOnlyHint ?? false) !== filter.readOnly) return false;
  }
  return true;
}

/** Whether `allowed_tools` lets the model see and call the tool. */
export function isToolAllowed(spec: McpServerSpec, tool: McpToolRef): boolean {
  return spec.allowedTools === null || filterMatches(spec.allowedTools, tool);
}

/**
 * Whether a call of the tool needs the caller's approval first (an `mcp_approval_request` item). With
 * filters, a tool `always` covers needs approval even when `never` covers it too (in doubt, ask); a
 * tool only `never` covers does not; a tool neither covers does, the safe default.
 */
export function needsApproval(spec: McpServerSpec, tool: McpToolRef): boolean {
  const policy = spec.requireApproval;
  if (policy === 'always') return true;
  if (policy === 'never') return false;
  if (policy.always && filterMatches(policy.always, tool)) return true;
  return !(policy.never && filterMatches(policy.never, tool));
}
