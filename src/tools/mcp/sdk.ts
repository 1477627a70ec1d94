// The MCP SDK, loaded on first use: it (with its schema library) is ~26 MB of the gateway's resident
// memory, which a gateway whose callers never name an MCP server should not carry. Loaded with
// require, as the rest of the build is CommonJS: one instance of its classes (instanceof holds).
import type * as ClientModule from '@modelcontextprotocol/sdk/client/index.js';
import type * as SseModule from '@modelcontextprotocol/sdk/client/sse.js';
import type * as StreamableHttpModule from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type * as TypesModule from '@modelcontextprotocol/sdk/types.js';

export interface McpSdk {
  Client: typeof ClientModule.Client;
  SSEClientTransport: typeof SseModule.SSEClientTransport;
  SseError: typeof SseModule.SseError;
  StreamableHTTPClientTransport: typeof StreamableHttpModule.StreamableHTTPClientTransport;
  StreamableHTTPError: typeof StreamableHttpModule.StreamableHTTPError;
  McpError: typeof TypesModule.McpError;
  ErrorCode: typeof TypesModule.ErrorCode;
  ToolListChangedNotificationSchema: typeof TypesModule.ToolListChangedNotificationSchema;
}

let loaded: McpSdk | null = null;

/** The SDK, loading it now if nothing has. */
export function mcpSdk(): McpSdk {
  if (loaded) return loaded;
  /* eslint-disable @typescript-eslint/no-require-imports */
  const client = require('@modelcontextprotocol/sdk/client/index.js') as typeof ClientModule;
  const sse = require('@modelcontextprotocol/sdk/client/sse.js') as typeof SseModule;
  const http = require('@modelcontextprotocol/sdk/client/streamableHttp.js') as typeof StreamableHttpModule;
  const types = require('@modelcontextprotocol/sdk/types.js') as typeof TypesModule;
  /* eslint-enable @typescript-eslint/no-require-imports */
  loaded = {
    Client: client.Client,
    SSEClientTransport: sse.SSEClientTransport,
    SseError: sse.SseError,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    StreamableHTTPError: http.StreamableHTTPError,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  };
  return loaded;
}

/** The SDK when something loaded it; null before (then no error can be one of its classes). */
export function loadedMcpSdk(): McpSdk | null {
  return loaded;
}
