// A Responses `{type: "mcp"}` tool, read into what the MCP client needs (OpenAI Responses semantics):
//
//   server_label      required, names the server in `mcp_*` items
//   server_url        required, http(s), no credentials in it (connectors, `connector_id`, are not offered)
//   headers           sent with every request to the server (never logged); `authorization` is the
//                     OpenAI shorthand for an `Authorization: Bearer` header
//   allowed_tools     an array of tool names, or a filter `{tool_names?, read_only?}`; absent: every tool
//   require_approval  "always" | "never" | `{always?: filter, never?: filter}`. Absent: "always", as OpenAI
//                     does, so a caller who says nothing is asked before a third-party server acts.
//
// A bad field is a 400 naming it (`tools[2].server_url`), before anything is contacted.
import type { JsonObject } from '../../canonical/model';
import { GatewayError } from '../../http/errors';

/** Which of a server's tools a rule covers: all the given conditions must hold. */
export interface McpToolFilter {
  /** The tools named here (absent: any name). */
  toolNames?: string[];
  /** Tools whose `readOnlyHint` annotation equals this (absent: read-only or not). */
  readOnly?: boolean;
}

/** `require_approval`: a policy for every tool, or filters; a tool neither filter covers needs approval. */
export type McpApprovalPolicy = 'always' | 'never' | { always?: McpToolFilter; never?: McpToolFilter };

export interface McpServerSpec {
  serverLabel: string;
  /** The server's endpoint (the Streamable HTTP endpoint, or the legacy SSE endpoint). */
  serverUrl: string;
  /** Headers sent to the server, credentials included: never log them. */
  headers: Record<string, string>;
  /** Null: every tool the server lists. */
  allowedTools: McpToolFilter | null;
  requireApproval: McpApprovalPolicy;
  serverDescription?: string;
}

/** The approval policy when the request gives none (OpenAI's default). */
export const DEFAULT_APPROVAL: McpApprovalPolicy = 'always';

/** Headers the transports set themselves (RFC 9110 framing, MCP session and version): a caller's value would break them. */
const RESERVED_HEADERS = new Set([
  'accept',
  'connection',
  'content-length',
  'content-type',
  'host',
  'keep-alive',
  'last-event-id',
  'mcp-protocol-version',
  'mcp-session-id',
  'te',
  'transfer-encoding',
  'upgrade',
]);

/** RFC 9110 section 5.6.2 token: a header name. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** RFC 9110 section 5.5 field value: visible characters, spaces and tabs (no CR, LF or NUL). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

const MAX_HEADERS = 64;
const MAX_HEADER_VALUE = 8192;

const bad = (param: string, message: string): GatewayError => new GatewayError('bad_request', `${param}: ${message}`, { param });

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function stringList(value: unknown, param: string): string[] {
  if (!Array.isArray(value)) throw bad(param, 'must be an array of tool names.');
  return value.map((name, i) => {
    if (typeof name !== 'string' || name === '') throw bad(`${param}[${i}]`, 'must be a tool name (a non-empty string).');
    return name;
  });
}

function toolFilter(value: unknown, param: string): McpToolFilter {
  if (Array.isArray(value)) return { toolNames: stringList(value, param) };
  if (!isObject(value)) throw bad(param, 'must be an array of tool names or a filter {tool_names, read_only}.');
  const filter: McpToolFilter = {};
  if (value['tool_names'] !== undefined && value['tool_names'] !== null) filter.toolNames = stringList(value['tool_names'], `${param}.tool_names`);
  const readOnly = value['read_only'];
  if (typeof readOnly === 'boolean') filter.readOnly = readOnly;
  else if (readOnly !== undefined && readOnly !== null) throw bad(`${param}.read_only`, 'must be a boolean.');
  return filter;
}

function approvalPolicy(value: unknown, param: string): McpApprovalPolicy {
  if (value === undefined || value === null) return DEFAULT_APPROVAL;
  if (value === 'always' || value === 'never') return value;
  if (!isObject(value)) throw bad(param, 'must be "always", "never" or {always: {tool_names}, never: {tool_names}}.');
  const policy: { always?: McpToolFilter; never?: McpToolFilter } = {};
  for (const key of Object.keys(value)) {
    if (key !== 'always' && key !== 'never') throw bad(`${param}.${key}`, 'is not a field of require_approval (always, never).');
  }
  if (value['always'] !== undefined && value['always'] !== null) policy.always = toolFilter(value['always'], `${param}.always`);
  if (value['never'] !== undefined && value['never'] !== null) policy.never = toolFilter(value['never'], `${param}.never`);
  return policy;
}

function serverUrl(value: unknown, param: string): string {
  if (typeof value !== 'string' || value === '') throw bad(param, 'must be the URL of an MCP server (http or https).');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw bad(param, 'is not a valid URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad(param, `must be an http or https URL, not ${url.protocol}`);
  if (url.username !== '' || url.password !== '') throw bad(param, 'must not carry credentials; send them in headers.');
  return url.toString();
}

function headerMap(value: unknown, authorization: unknown, param: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (value !== undefined && value !== null) {
    if (!isObject(value)) throw bad(`${param}.headers`, 'must be an object of header names to string values.');
    const entries = Object.entries(value);
    if (entries.length > MAX_HEADERS) throw bad(`${param}.headers`, `may hold at most ${MAX_HEADERS} headers.`);
    const seen = new Set<string>();
    for (const [name, headerValue] of entries) {
      const lower = name.toLowerCase();
      // The value is never echoed: it is likely a credential.
      if (!HEADER_NAME.test(name)) throw bad(`${param}.headers`, `${JSON.stringify(name.slice(0, 64))} is not a valid header name.`);
      if (RESERVED_HEADERS.has(lower)) throw bad(`${param}.headers.${name}`, 'is set by the MCP transport and cannot be given.');
      if (seen.has(lower)) throw bad(`${param}.headers.${name}`, 'is given twice (header names are case-insensitive).');
      if (typeof headerValue !== 'string') throw bad(`${param}.headers.${name}`, 'must be a string.');
      if (headerValue.length > MAX_HEADER_VALUE || !HEADER_VALUE.test(headerValue)) {
        throw bad(`${param}.headers.${name}`, `must be a header value: at most ${MAX_HEADER_VALUE} characters, no line breaks.`);
      }
      seen.add(lower);
      headers[name] = headerValue;
    }
  }
  if (authorization !== undefined && authorization !== null) {
    if (typeof authorization !== 'string' || authorization === '' || !HEADER_VALUE.test(authorization)) {
      throw bad(`${param}.authorization`, 'must be an access token (a string without line breaks).');
    }
    if (Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) {
      throw bad(`${param}.authorization`, 'cannot be given together with an Authorization header in headers.');
    }
    headers['Authorization'] = `Bearer ${authorization}`;
  }
  return headers;
}

/**
 * Reads a Responses `mcp` tool (with or without its `type`) at `param` (`tools[2]`); a field it cannot
 * use is a 400 GatewayError naming that field.
 */
export function parseMcpTool(config: JsonObject, param: string): McpServerSpec {
  if (config['type'] !== undefined && config['type'] !== 'mcp') throw bad(`${param}.type`, 'must be "mcp".');
  const label = config['server_label'];
  if (typeof label !== 'string' || label.trim() === '') throw bad(`${param}.server_label`, 'must be a non-empty string.');
  if (config['connector_id'] !== undefined && config['connector_id'] !== null) {
    throw new GatewayError('unsupported_parameter', `${param}.connector_id: connectors are not offered by this gateway; give server_url.`, {
      param: `${param}.connector_id`,
    });
  }
  const spec: McpServerSpec = {
    serverLabel: label,
    serverUrl: serverUrl(config['server_url'], `${param}.server_url`),
    headers: headerMap(config['headers'], config['authorization'], param),
    allowedTools:
      config['allowed_tools'] === undefined || config['allowed_tools'] === null ? null : toolFilter(config['allowed_tools'], `${param}.allowed_tools`),
    requireApproval: approvalPolicy(config['require_approval'], `${param}.require_approval`),
  };
  const description = config['server_description'];
  if (typeof description === 'string') spec.serverDescription = description;
  else if (description !== undefined && description !== null) throw bad(`${param}.server_description`, 'must be a string.');
  return spec;
}
