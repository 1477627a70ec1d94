// The MCP client of the tool loop (Responses `{type: "mcp"}` tools): parse a request's tool, list and
// call the server's tools per conversation, decide approvals.
export { parseMcpTool, DEFAULT_APPROVAL, type McpServerSpec, type McpToolFilter, type McpApprovalPolicy } from './server-spec';
export { McpClients, type McpClientsOptions, type McpCallResult } from './clients';
export { needsApproval, isToolAllowed, type McpToolRef } from './tool-filter';
export type { McpToolInfo, McpToolAnnotations } from './tool-info';
