// The MCP client of the tool loop: one session per (conversation, server URL, headers), opened on
// first use (connect.ts), its `tools/list` read once and kept for the conversation (until the server
// says the list changed, the session idles out, or the conversation is forgotten). Every request goes
// through the SSRF guard (WebAccess, unless the host is in tools.allowHosts) and a size bound
// (bounded-fetch.ts). Nothing here throws an SDK error at the loop: a failure is a ToolFailure whose
// message the model sees. Headers are credentials: they go to the server and nowhere else (no log line
// carries them, nor anything the server said, which might echo them).
import { createHash } from 'node:crypto';
import type { Logger } from 'winston';
import type { GatewayConfig } from '../../config/types';
import { ToolFailure } from '../types';
import type { WebAccess } from '../web-access';
import { connectMcpServer, type McpConnection } from './connect';
import { connectionLost, describeFailure, sessionExpired } from './failure';
import { renderToolResult } from './render-result';
import type { McpServerSpec } from './server-spec';
import { isToolAllowed, needsApproval, type McpToolRef } from './tool-filter';
import { toolInfo, type McpToolInfo } from './tool-info';

export interface McpClientsOptions {
  webAccess: WebAccess;
  logger: Logger;
  config: GatewayConfig;
}

export interface McpCallResult {
  /** The result's text (cut at tools.maxOutputBytes): the `mcp_call` item's output, or its error when isError. */
  output: string;
  /** The server said the call failed (`isError`): the model sees the output as the error. */
  isError: boolean;
}

/** A conversation's session with one server. */
interface ServerSession {
  serverLabel: string;
  serverUrl: string;
  headers: Record<string, string>;
  connection: Promise<McpConnection> | null;
  /** Every tool the server listed (before allowed_tools), once read. */
  tools: Promise<McpToolInfo[]> | null;
  lastUsed: number;
  inFlight: number;
  /** Forgotten or idled out: a request still running on it must not open a connection nobody will close. */
  ended: boolean;
}

/** Pages of tools/list read at most (a server paginating without end is cut off). */
const MAX_LIST_PAGES = 20;
/** How long closing waits for a server to acknowledge the end of its session. */
const CLOSE_GRACE_MS = 2000;

/** A key of what makes a session distinct: the URL and the headers (hashed, so the key holds no secret). */
function sessionKey(spec: McpServerSpec): string {
  const headers = Object.entries(spec.headers)
    .map(([name, value]) => [name.toLowerCase(), value])
    .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0));
  const digest = createHash('sha256').update(JSON.stringify(headers)).digest('base64url');
  return `${spec.serverUrl} ${digest}`;
}

/** Waits for `work`, or fails as soon as `signal` aborts (the shared work goes on for other callers). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new ToolFailure('The call was cancelled.'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new ToolFailure('The call was cancelled.'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

export class McpClients {
  private readonly webAccess: WebAccess;
  private readonly logger: Logger;
  private readonly callTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly maxOutputBytes: number;
  /** conversation id → session key → session */
  private readonly conversations = new Map<string, Map<string, ServerSession>>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(options: McpClientsOptions) {
    const mcp = options.config.tools.mcp;
    this.webAccess = options.webAccess;
    this.logger = options.logger;
    this.callTimeoutMs = mcp.callTimeoutMs;
    this.connectTimeoutMs = mcp.connectTimeoutMs;
    this.idleTimeoutMs = mcp.idleTimeoutMs;
    this.maxResponseBytes = mcp.maxResponseBytes;
    this.maxOutputBytes = options.config.tools.maxOutputBytes;
    this.sweeper = setInterval(() => void this.closeIdle(), Math.min(this.idleTimeoutMs, 60_000));
    this.sweeper.unref();
  }

  /** The server's tools that allowed_tools lets the model see (tools/list, once per conversation). */
  async listTools(spec: McpServerSpec, conversationId: string, signal: AbortSignal): Promise<McpToolInfo[]> {
    const tools = await this.allTools(this.session(spec, conversationId), signal);
    return tools.filter((tool) => isToolAllowed(spec, tool));
  }

  /**
   * Calls a tool. The server's own error result comes back with isError; a tool outside allowed_tools
   * or unknown to the server, a transport or protocol failure, a timeout or cancellation is a ToolFailure.
   */
  async callTool(spec: McpServerSpec, conversationId: string, name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallResult> {
    const session = this.session(spec, conversationId);
    const listed = await this.allTools(session, signal);
    const tool = listed.find((candidate) => candidate.name === name);
    if (!isToolAllowed(spec, tool ?? name))
      throw new ToolFailure(`${name} is not among the allowed_tools of MCP server ${spec.serverLabel}; it was not called.`);
    if (!tool) {
      const offered = listed.filter((candidate) => isToolAllowed(spec, candidate)).map((candidate) => candidate.name);
      throw new ToolFailure(`MCP server ${spec.serverLabel} has no tool named ${name}; its tools: ${offered.join(', ') || '(none)'}.`);
    }
    const started = Date.now();
    try {
      const result = await this.request(session, signal, (connection) =>
        connection.client.callTool({ name, arguments: args }, undefined, { timeout: this.callTimeoutMs, signal }),
      );
      const isError = result['isError'] === true;
      this.logger.debug('mcp tool call', { server: spec.serverLabel, tool: name, durationMs: Date.now() - started, status: isError ? 'error_result' : 'ok' });
      return { output: renderToolResult(result, this.maxOutputBytes), isError };
    } catch (err) {
      if (signal.aborted) throw new ToolFailure('The call was cancelled.');
      throw this.failure(err, spec.serverLabel, 'tools/call', this.callTimeoutMs, { tool: name, durationMs: Date.now() - started });
    }
  }

  /** Whether calling the tool needs the caller's approval first (require_approval; see tool-filter.ts). */
  needsApproval(spec: McpServerSpec, tool: McpToolRef): boolean {
    return needsApproval(spec, tool);
  }

  /** Ends a conversation's sessions and forgets their tool lists. */
  async forget(conversationId: string): Promise<void> {
    const sessions = this.conversations.get(conversationId);
    if (!sessions) return;
    this.conversations.delete(conversationId);
    await Promise.all([...sessions.values()].map((session) => this.disconnect(session)));
  }

  /** Ends every session (shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const conversations = [...this.conversations.keys()];
    await Promise.all(conversations.map((id) => this.forget(id)));
  }

  private session(spec: McpServerSpec, conversationId: string): ServerSession {
    if (this.closed) throw new ToolFailure('MCP tools are not available: the gateway is shutting down.');
    let sessions = this.conversations.get(conversationId);
    if (!sessions) {
      sessions = new Map();
      this.conversations.set(conversationId, sessions);
    }
    const key = sessionKey(spec);
    let session = sessions.get(key);
    if (!session) {
      session = {
        serverLabel: spec.serverLabel,
        serverUrl: spec.serverUrl,
        headers: spec.headers,
        connection: null,
        tools: null,
        lastUsed: Date.now(),
        inFlight: 0,
        ended: false,
      };
      sessions.set(key, session);
    }
    session.lastUsed = Date.now();
    return session;
  }

  /** Every tool the server lists, read once and shared by concurrent callers (a failed read is not kept). */
  private async allTools(session: ServerSession, signal: AbortSignal): Promise<McpToolInfo[]> {
    if (!session.tools) {
      const listing = this.readToolList(session);
      session.tools = listing;
      listing.catch(() => {
        if (session.tools === listing) session.tools = null;
      });
    }
    return untilAborted(session.tools, signal);
  }

  private async readToolList(session: ServerSession): Promise<McpToolInfo[]> {
    // Not the caller's signal: the listing is shared, each caller stops waiting on its own (untilAborted).
    const never = new AbortController().signal;
    try {
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
        const params = cursor === undefined ? {} : { cursor };
        const result = await this.request(session, never, (connection) => connection.client.listTools(params, { timeout: this.connectTimeoutMs }));
        tools.push(...result.tools.map(toolInfo));
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
      return tools;
    } catch (err) {
      throw this.failure(err, session.serverLabel, 'tools/list', this.connectTimeoutMs, {});
    }
  }

  /**
   * Runs one request on the session's connection, opening it first when needed. A lost connection is
   * dropped (the next request opens a new one); a session the server forgot is opened anew and the
   * request sent once more.
   */
  private async request<T>(session: ServerSession, signal: AbortSignal, send: (connection: McpConnection) => Promise<T>): Promise<T> {
    session.inFlight += 1;
    try {
      for (let attempt = 0; ; attempt += 1) {
        const connection = await untilAborted(this.connection(session), signal);
        try {
          return await send(connection);
        } catch (thrown) {
          // A cut reply ended the session; the request saw only "connection closed".
          const err = connection.overflow ?? thrown;
          if (connectionLost(err) && !signal.aborted) await this.dropConnection(session, connection);
          if (attempt === 0 && sessionExpired(err) && !signal.aborted) continue;
          throw err;
        }
      }
    } finally {
      session.inFlight -= 1;
      session.lastUsed = Date.now();
    }
  }

  private connection(session: ServerSession): Promise<McpConnection> {
    if (session.ended) return Promise.reject(new ToolFailure(`The session with MCP server ${session.serverLabel} was closed.`));
    const current = session.connection;
    if (current) {
      // A connection that broke since its last use is replaced before it fails a request.
      return current.then(async (connection) => {
        if (!connection.broken) return connection;
        await this.dropConnection(session, connection);
        return this.connection(session);
      });
    }
    const opening = connectMcpServer(session.serverUrl, {
      headers: session.headers,
      fetch: this.webAccess.fetchFunction(),
      maxResponseBytes: this.maxResponseBytes,
      timeoutMs: this.connectTimeoutMs,
      onToolsChanged: () => {
        session.tools = null;
      },
      onTransportError: () => {
        // Not logged with its message: a server's words may echo the request's headers.
        this.logger.debug('mcp transport error', { server: session.serverLabel });
      },
    });
    session.connection = opening;
    opening.then(
      (connection) => this.logger.debug('mcp session opened', { server: session.serverLabel, transport: connection.kind }),
      () => {
        if (session.connection === opening) session.connection = null;
      },
    );
    return opening;
  }

  private async dropConnection(session: ServerSession, connection: McpConnection): Promise<void> {
    const current = session.connection;
    if (current && (await current.catch(() => null)) === connection) session.connection = null;
    await connection.close(CLOSE_GRACE_MS);
  }

  private async disconnect(session: ServerSession): Promise<void> {
    session.ended = true;
    const pending = session.connection;
    session.connection = null;
    session.tools = null;
    const connection = pending ? await pending.catch(() => null) : null;
    if (connection) await connection.close(CLOSE_GRACE_MS);
  }

  private async closeIdle(): Promise<void> {
    const now = Date.now();
    const idle: ServerSession[] = [];
    for (const [conversationId, sessions] of this.conversations) {
      for (const [key, session] of sessions) {
        if (session.inFlight === 0 && now - session.lastUsed >= this.idleTimeoutMs) {
          sessions.delete(key);
          idle.push(session);
        }
      }
      if (sessions.size === 0) this.conversations.delete(conversationId);
    }
    await Promise.all(idle.map((session) => this.disconnect(session)));
  }

  private failure(err: unknown, serverLabel: string, method: string, timeoutMs: number, fields: Record<string, unknown>): ToolFailure {
    if (err instanceof ToolFailure) return err;
    const failure = describeFailure(err, serverLabel, timeoutMs);
    this.logger.info('mcp request failed', { server: serverLabel, method, reason: failure.kind, ...fields });
    return new ToolFailure(failure.message);
  }
}
