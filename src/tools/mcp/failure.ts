// What went wrong talking to an MCP server, in words the model (and the caller reading the `mcp_call`
// item) can act on, and what it means for the connection: lost (open a new one next time), or the
// server forgot the session (MCP "Session management": a 404 to a request carrying Mcp-Session-Id
// means start a new session; the request was not processed, so it may be sent again once).
import { SsrfBlockedError } from '../../providers/http/ssrf-guard';
import { WebAccessError } from '../web-access';
import { McpResponseTooLargeError } from './bounded-fetch';
import { loadedMcpSdk } from './sdk';

/** A short, stable name of the failure for logs (never the server's own words, which may echo secrets). */
export type McpFailureKind =
  'blocked' | 'unreachable' | 'http_status' | 'timeout' | 'cancelled' | 'closed' | 'too_large' | 'protocol_error' | 'invalid_reply' | 'other';

export interface McpFailure {
  kind: McpFailureKind;
  /** For the model: what happened, without headers. */
  message: string;
}

const MAX_DETAIL = 300;
const detail = (text: string): string => (text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}…` : text);

const NETWORK_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed by the server',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
};

/** The chain of causes of an error (fetch wraps the socket's error in `cause`). */
function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = err;
  while (current !== undefined && current !== null && chain.length < 5) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

/** The HTTP status of a transport error, when the server answered with one. */
export function httpStatusOf(err: unknown): number | undefined {
  const sdk = loadedMcpSdk();
  if (sdk && (err instanceof sdk.StreamableHTTPError || err instanceof sdk.SseError)) return err.code !== undefined && err.code > 0 ? err.code : undefined;
  // The legacy SSE transport reports a failed POST as a plain Error naming the status.
  const match = err instanceof Error ? /\(HTTP (\d{3})\)/.exec(err.message) : null;
  return match ? Number(match[1]) : undefined;
}

export function describeFailure(err: unknown, serverLabel: string, timeoutMs: number): McpFailure {
  const server = `MCP server ${serverLabel}`;
  for (const link of causes(err)) {
    if (link instanceof SsrfBlockedError || (link as { code?: unknown }).code === 'ERR_SSRF_BLOCKED') {
      return { kind: 'blocked', message: `${server} is not reachable from this gateway: its address is private or special-purpose.` };
    }
    if (link instanceof WebAccessError) return { kind: 'blocked', message: `${server} cannot be reached: ${link.message}` };
    if (link instanceof McpResponseTooLargeError) return { kind: 'too_large', message: `${server} sent a reply larger than ${link.maxBytes} bytes.` };
  }
  const sdk = loadedMcpSdk();
  if (sdk && err instanceof sdk.McpError) {
    const { ErrorCode } = sdk;
    if (err.code === Number(ErrorCode.RequestTimeout)) return { kind: 'timeout', message: `${server} did not answer within ${timeoutMs} ms.` };
    if (err.code === Number(ErrorCode.ConnectionClosed)) return { kind: 'closed', message: `The connection to ${server} closed.` };
    return { kind: 'protocol_error', message: `${server} answered with an error: ${detail(err.message)}` };
  }
  const status = httpStatusOf(err);
  if (status === 401 || status === 403) {
    return { kind: 'http_status', message: `${server} refused the request (HTTP ${status}): check the credentials in the tool's headers.` };
  }
  if (status !== undefined) return { kind: 'http_status', message: `${server} answered HTTP ${status}.` };
  for (const link of causes(err)) {
    const code = (link as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES[code] !== undefined) {
      return { kind: 'unreachable', message: `${server} is unreachable: ${NETWORK_CODES[code]}.` };
    }
  }
  if (err instanceof Error && err.name === 'ZodError') return { kind: 'invalid_reply', message: `${server} sent a reply that is not valid MCP.` };
  if (err instanceof Error && err.message === 'fetch failed') return { kind: 'unreachable', message: `${server} is unreachable.` };
  return { kind: 'other', message: `The request to ${server} failed: ${detail(err instanceof Error ? err.message : String(err))}` };
}

/** The connection cannot be trusted after this error: open a new one for the next request. */
export function connectionLost(err: unknown): boolean {
  const sdk = loadedMcpSdk();
  if (sdk && err instanceof sdk.McpError) return err.code === Number(sdk.ErrorCode.ConnectionClosed);
  return true;
}

/** The server no longer knows the session: a new session may retry the request once. */
export const sessionExpired = (err: unknown): boolean => httpStatusOf(err) === 404;
