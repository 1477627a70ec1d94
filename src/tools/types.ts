// The contract of a hosted tool (spec "Hosted tools"): a folder under src/tools/hosted/ exports a
// factory that, given the gateway's shared parts (ToolDeps), returns its tools. The tool loop
// (loop.ts) offers each enabled tool to the model as a function of the same name (`svc_shell`, …)
// with its JSON schema, executes the calls the model makes, and turns each into an `svc_call` item.
//
// A tool never throws at the loop for an ordinary failure: it throws ToolFailure (or anything else),
// and the loop records an item with `status: failed` whose message the model sees. Limits (time and
// output size) are enforced by the loop around every call; a tool with finer limits of its own
// (the shell's CPU and memory) enforces those itself.
import type { Logger } from 'winston';
import type { JsonObject } from '../canonical/model';
import type { GatewayConfig } from '../config/types';
import type { Store } from '../store/port';
import type { GuardedFetch } from './web-access';
import type { Workspace, Workspaces } from './workspace';

/** Bounds of one call. */
export interface ToolLimits {
  /** Wall time of one call; past it the call's signal aborts and the call fails. */
  timeoutMs: number;
  /** Largest output the model is shown, in UTF-8 bytes (longer output is cut, saying so). */
  maxOutputBytes: number;
}

/** Where a call runs: its caller, its conversation (workspace, browser, VPN state) and its bounds. */
export interface ToolCallContext {
  orgId: string;
  userId: string | null;
  /**
   * The conversation the call belongs to (a stored conversation, an agent run's conversation, or for a
   * stateless response a scope of that response alone): its workspace, browser context, egress state.
   */
  conversationId: string;
  /** The response the call is part of (Responses), when there is one. */
  responseId?: string;
  /** The run the call is part of (agent runs), when there is one. */
  runId?: string;
  /** Aborted at the call's time limit, or when the response or run stops. */
  signal: AbortSignal;
  /** The conversation's workspace (created on first use). */
  workspace: Workspace;
  /**
   * The gateway's address as the caller reached it (a Responses request's scheme and Host, see
   * requestBaseUrl in src/files/share-link.ts), for links a tool hands out; server.publicUrl wins
   * over it, and without either a link names this server's host and port.
   */
  baseUrl?: string;
}

/** What a call produced. */
export interface ToolOutcome {
  /** The text the model is shown, and the `svc_call` item's `output`. */
  output: string;
  /** Images the model is also shown when it reads images (a screenshot), base64 with their media type. */
  images?: Array<{ mediaType: string; data: string }>;
}

/** A failure the model is told about (`status: failed`, `error` = this message): not a failed response. */
export class ToolFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolFailure';
  }
}

export interface HostedTool {
  /** The tool type and function name, `svc_<name>` (spec "Hosted tools" table). */
  type: string;
  /** What the model is told the tool does. */
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: JsonObject;
  /** Overrides of the configured default limits (tools.timeoutMs, tools.maxOutputBytes). */
  limits?: Partial<ToolLimits>;
  execute(args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolOutcome>;
}

/**
 * Which egress profile (an organization's named HTTP or SOCKS proxy, svc_vpn_connect) a conversation's
 * web traffic goes out through: web tools and the shell ask before each call.
 */
export interface EgressState {
  /** The proxy URL of the conversation's connected profile, or null (direct, through the SSRF guard). */
  proxyFor(orgId: string, conversationId: string): Promise<string | null>;
}

/** The gateway's shared parts a tool folder may use. */
export interface ToolDeps {
  config: GatewayConfig;
  store: Store;
  logger: Logger;
  now(): Date;
  workspaces: Workspaces;
  /** Fetches a request- or tool-supplied URL through the SSRF guard (and the conversation's egress profile). */
  fetch: GuardedFetch;
  /** The conversation's egress profile (svc_vpn_connect). */
  egress: EgressState;
}

/** What a tool folder's factory returns. */
export interface HostedToolSet {
  tools: HostedTool[];
  /**
   * Checked once at start-up: null when the tools can run on this machine, else why not (the tools are
   * then disabled, with a log line saying so; never run without what they need, e.g. a sandbox).
   */
  check?(): Promise<string | null>;
  /** Releases what the tools hold (browsers, sandboxes, connections) at shutdown. */
  close?(): Promise<void>;
  /** Forgets a conversation's state (its browser context, egress choice) when the conversation goes. */
  forget?(conversationId: string): Promise<void>;
}

export type HostedToolFactory = (deps: ToolDeps) => HostedToolSet;
