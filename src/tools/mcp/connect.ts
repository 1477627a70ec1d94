// Opens an MCP client session with a server: Streamable HTTP first, and when the server answers that
// first POST with a 4xx other than 401/403 (a server of the 2024-11-05 protocol has no POST endpoint
// there), the legacy HTTP+SSE transport at the same URL (MCP "Transports", backwards compatibility;
// the SDK's streamableHttpWithSseFallbackClient example). 401 and 403 are answers about the
// credentials, which the older transport would only repeat less clearly.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { boundedFetch, type McpResponseTooLargeError } from './bounded-fetch';
import { httpStatusOf } from './failure';
import { mcpSdk } from './sdk';

export type McpTransportKind = 'streamable-http' | 'sse';

export interface McpConnection {
  client: Client;
  kind: McpTransportKind;
  /** Set when the transport closed or (legacy SSE) its event stream broke: open a new connection. */
  broken: boolean;
  /** The server sent a message past the size bound: the session was ended, and this is why. */
  overflow: McpResponseTooLargeError | null;
  /** Ends the session (a DELETE for Streamable HTTP, best effort within `graceMs`) and the transport. */
  close(graceMs: number): Promise<void>;
}

export interface ConnectOptions {
  headers: Record<string, string>;
  /** The guarded (SSRF-checked) fetch every request goes through. */
  fetch: typeof fetch;
  /** Largest message accepted from the server (bounded-fetch.ts). */
  maxResponseBytes: number;
  /** Bound of the initialize handshake, per transport tried. */
  timeoutMs: number;
  /** The server said its tool list changed (notifications/tools/list_changed). */
  onToolsChanged(): void;
  /** A transport error no request is waiting on (the message only: it may quote the server). */
  onTransportError(error: Error): void;
}

const CLIENT_INFO = { name: 'agent-gateway', version: '1' };

const fallsBackToSse = (err: unknown): boolean => {
  const status = httpStatusOf(err);
  return status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403;
};

async function open(url: URL, kind: McpTransportKind, options: ConnectOptions): Promise<McpConnection> {
  const { Client, SSEClientTransport, StreamableHTTPClientTransport, ToolListChangedNotificationSchema } = mcpSdk();
  const requestInit = { headers: options.headers };
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  const fetch = boundedFetch(options.fetch, options.maxResponseBytes, (error) => {
    connection.overflow = error;
    // Closing rejects whatever waits on the session at once, instead of at its timeout.
    void client.close().catch(() => undefined);
  });
  const transport =
    kind === 'streamable-http' ? new StreamableHTTPClientTransport(url, { fetch, requestInit }) : new SSEClientTransport(url, { fetch, requestInit });
  const connection: McpConnection = {
    client,
    kind,
    broken: false,
    overflow: null,
    async close(graceMs) {
      connection.broken = true;
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
        let timer: NodeJS.Timeout | undefined;
        const grace = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, graceMs);
        });
        await Promise.race([transport.terminateSession().catch(() => undefined), grace]);
        clearTimeout(timer);
      }
      await client.close().catch(() => undefined);
    },
  };
  client.onclose = () => {
    connection.broken = true;
  };
  client.onerror = (error) => {
    // The legacy transport has one event stream for every reply: once it broke, replies are lost.
    if (kind === 'sse') connection.broken = true;
    options.onTransportError(error);
  };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => options.onToolsChanged());
  try {
    await client.connect(transport, { timeout: options.timeoutMs });
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err;
  }
  return connection;
}

export async function connectMcpServer(serverUrl: string, options: ConnectOptions): Promise<McpConnection> {
  const url = new URL(serverUrl);
  try {
    return await open(url, 'streamable-http', options);
  } catch (err) {
    if (!fallsBackToSse(err)) throw err;
    return open(url, 'sse', options);
  }
}
