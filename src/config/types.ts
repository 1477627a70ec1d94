// The shape of config/gateway.yaml after interpolation and schema validation.
// config/gateway.schema.json is the authority; these types mirror it.

export type StoreDriver = 'embedded' | 'postgres' | 'mongodb';
export type QueueDriver = 'inline' | 'bullmq';
export type ProviderType = 'openai' | 'anthropic' | 'bedrock-anthropic' | 'vertex-anthropic' | 'gemini' | 'demo';
export type Role = 'admin' | 'member';
export type Permission = 'view' | 'edit' | 'delete' | 'share';

export interface ServerConfig {
  host: string;
  port: number;
  /** Largest accepted request body, in bytes. */
  bodyLimitBytes: number;
  /** How long in-flight requests may take to finish on shutdown. */
  shutdownGraceMs: number;
  /** Trust X-Forwarded-* headers (behind a reverse proxy). */
  trustProxy: boolean;
  /** The gateway's address as users reach it, for links it hands out (absent: from the request, else host:port). */
  publicUrl?: string;
}

export interface StoreConfig {
  driver: StoreDriver;
  path: string;
  url?: string;
  /** Retention of runs, responses and their event logs, in days (0 keeps forever). */
  retentionDays: number;
  /** postgres: statement time limit in ms (statement_timeout; unanswered ones dropped 2 s later). 0: none. */
  queryTimeoutMs: number;
}

export interface QueueConfig {
  driver: QueueDriver;
  redisUrl: string;
  concurrency: number;
  /** Prefix for every Redis key the queue and shared counters use. */
  prefix: string;
  /**
   * How long a worker's hold on a run (its lease, and the BullMQ job lock) lasts without renewal: a
   * run of a killed worker is taken over by another after this. Renewed every third of it.
   */
  leaseSeconds: number;
}

export interface ResponsesConfig {
  /** The curated prompt of `svc.system_prompt: agent_default` (absent: the built-in one). */
  systemPrompt?: string;
  /**
   * What `agent_default` on a stateful request tells the model of its caller: the organization (id and
   * name), the user (id, name, role) and their groups, as listed; plus the operator's own lines.
   */
  serviceContext: { include: Array<'organization' | 'user' | 'groups'>; text?: string };
  /** IANA time zone of the current date and time sent with a stateful `agent_default` turn. */
  timezone: string;
  /** Compaction of stored conversations near their model's context window (rule 6). */
  compaction: { model?: string; threshold: number; target: number };
}

export interface ProviderConfig {
  type: ProviderType;
  baseUrl?: string;
  apiKey?: string;
  responses?: 'native' | 'translate';
  /** Extra headers sent upstream (e.g. an Azure api-version or organization header). */
  headers?: Record<string, string>;
  /** bedrock-anthropic: AWS region and credentials. */
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  /** vertex-anthropic: GCP project, region and service-account key JSON (string or path). */
  projectId?: string;
  serviceAccountKey?: string;
  tokenUrl?: string;
  timeouts?: { connectMs?: number; firstByteMs?: number; idleMs?: number };
  retries?: { max?: number; baseDelayMs?: number; maxDelayMs?: number };
  /** Bounds on what an upstream may send: a non-streamed reply's size, an SSE stream's longest line. */
  limits?: { maxBodyBytes?: number; maxSseLineBytes?: number };
  /** Offer HTTP/2 to https upstreams (ALPN); off by default. */
  http2?: boolean;
  /** A PEM file of the CA(s) that sign the upstream's certificate (a private CA), instead of Node's. */
  tls?: { caFile?: string };
  /**
   * Accepted and ignored: operator-configured upstream URLs are trusted as written (the SSRF guard
   * applies to URLs that come from requests and tools). Kept so older configs still load.
   */
  allowPrivateNetwork?: boolean;
}

export interface ModelConfig {
  id: string;
  provider: string;
  upstream?: string;
  contextWindow?: number;
  created?: number;
  /** USD per million tokens; absent: the model's calls have no cost. */
  pricing?: ModelPricing;
}

/** A model's prices in USD per million tokens (models[].pricing). */
export interface ModelPricing {
  input: number;
  /** Prompt tokens read from a prompt cache (absent: priced as input). */
  cachedInput?: number;
  output: number;
}

/** A token or cost budget per UTC day or month (organizations[].budgets, users[].budgets, API keys). */
export interface BudgetConfig {
  metric: 'tokens' | 'cost';
  period: 'day' | 'month';
  /** Tokens, or USD. */
  limit: number;
}

export interface RateLimitConfig {
  requestsPerMinute?: number;
  perUserRequestsPerMinute?: number;
}

export interface DlpCustomPattern {
  name: string;
  pattern: string;
}

export type DlpDetector = 'email' | 'credit_card' | 'us_ssn' | 'iban' | 'phone' | 'secret_key';

export interface DlpPolicyConfig {
  enabled: boolean;
  detectors: DlpDetector[];
  custom: DlpCustomPattern[];
}

export interface GroupConfig {
  id: string;
  name?: string;
  members: string[];
}

export interface UserConfig {
  id: string;
  name: string;
  role: Role;
  keys: string[];
  budgets: BudgetConfig[];
  /** Console sign-in: the user a verified email claim maps to (after oidcSubject). */
  email?: string;
  /** Console sign-in: the ID token subject at console.oidc.issuer that is this user. */
  oidcSubject?: string;
}

/** Console sign-in with an OpenID Connect provider (config schema `console.oidc`). */
export interface ConsoleOidcConfig {
  issuer: string;
  clientId: string;
  /** A secret: never logged or shown. */
  clientSecret: string;
  /** Space-separated, including openid (default "openid email profile"). */
  scopes: string;
  /** The callback registered at the provider; absent: derived from server.publicUrl or the request. */
  redirectUrl?: string;
}

/** The web console (config schema `console`). */
export interface ConsoleConfig {
  /** Lifetime of a console session token, in seconds (default 12 hours). */
  sessionTtlSeconds: number;
  /**
   * Requests a minute each client address may make to the public sign-in routes (OIDC login and
   * callback, the ticket exchange); 0: no limit.
   */
  signInRateLimit: number;
  oidc?: ConsoleOidcConfig;
}

/** A named egress profile (svc_vpn_connect): a proxy the conversation's web tools go out through. */
export interface EgressProfileConfig {
  /** http://, https://, socks5:// or socks5h://, with user:password@ when the proxy wants them: a secret. */
  url: string;
  description?: string;
}

export type WebSearchProvider = 'searxng' | 'brave' | 'tavily';

/** svc_web_search's search API for an organization. */
export interface WebSearchConfig {
  provider: WebSearchProvider;
  /** Base URL; required for searxng, defaults to the public API for brave and tavily. */
  url?: string;
  apiKey?: string;
  timeoutMs: number;
}

/** An organization's server-side tools. */
export interface OrganizationToolsConfig {
  /** Hosted tools switched off for this organization. */
  disabled: string[];
  /** Egress profiles by name (svc_vpn_connect). */
  egressProfiles: Record<string, EgressProfileConfig>;
  /** Absent: svc_web_search fails saying it is not configured. */
  webSearch?: WebSearchConfig;
}

export interface OrganizationConfig {
  id: string;
  name: string;
  models: string[];
  tools: OrganizationToolsConfig;
  rateLimit?: RateLimitConfig;
  budgets: BudgetConfig[];
  dlp?: DlpPolicyConfig;
  groups: GroupConfig[];
  users: UserConfig[];
}

export interface AgentShareConfig {
  user?: string;
  group?: string;
  permissions: Permission[];
}

export interface AgentInputConfig {
  label: string;
  required: boolean;
}

export interface AgentStepConfig {
  name?: string;
  prompt: string;
  objective?: string;
}

export type AgentTriggerConfig =
  { type: 'schedule'; cron: string; inputs?: Record<string, string>; timezone?: string } | { type: 'webhook' } | { type: 'event'; event: string };

export interface AgentConfig {
  id: string;
  organization: string;
  name: string;
  description: string;
  createdBy: string;
  sharedWith: AgentShareConfig[];
  model: string;
  instructions: string;
  inputs: AgentInputConfig[];
  tools: Record<string, unknown>[];
  steps: AgentStepConfig[];
  timeoutSeconds: number;
  triggers: AgentTriggerConfig[];
}

export interface EvaluationConfig {
  model?: string;
}

export interface LoggingConfig {
  level: 'error' | 'warn' | 'info' | 'debug';
  accessLog: boolean;
}

/** OpenTelemetry traces exported over OTLP/HTTP (JSON); absent: tracing is off. */
export interface TelemetryOtlpConfig {
  /** The collector's traces URL (e.g. http://otel-collector:4318/v1/traces). */
  endpoint: string;
  /** Headers of every export request (e.g. an authorization token): secrets, never logged. */
  headers: Record<string, string>;
  /** The `service.name` resource attribute. */
  serviceName: string;
  /** How often finished spans are sent. */
  exportIntervalMs: number;
  /** The longest one export may take. */
  timeoutMs: number;
}

export interface TelemetryConfig {
  otlp?: TelemetryOtlpConfig;
}

export interface PluginToggle {
  enabled: boolean;
  [key: string]: unknown;
}

/** svc_shell: commands in a bubblewrap sandbox (config schema `tools.shell`). */
export interface ShellToolConfig {
  /** The bubblewrap executable. */
  bwrapPath: string;
  /** CPU seconds per process. */
  cpuSeconds: number;
  /** Address space per process, MiB. */
  memoryMb: number;
  /** Processes and threads of one sandbox at once. */
  maxProcesses: number;
  /** Wall time of one command (a call's timeout_ms may only lower it). */
  wallTimeMs: number;
  /** stdout and stderr bytes kept; past them the command is stopped. */
  maxOutputBytes: number;
  /** Largest file a process may write, MiB. */
  maxFileMb: number;
  /** Size of the sandbox's /tmp and of its /dev/shm, MiB each. */
  tmpSizeMb: number;
  /** Host uid and gid the sandbox runs as when the gateway runs as root. */
  sandboxUid: number;
  sandboxGid: number;
}

/** Server-side tools: the tool loop and the hosted svc_* catalog (config schema `tools`). */
export interface ToolsConfig {
  maxRounds: number;
  timeoutMs: number;
  maxOutputBytes: number;
  maxConcurrentCalls: number;
  /** Default: <store.path>/workspaces. */
  workspaceDir?: string;
  /** Hosted tools switched off everywhere. */
  disabled: string[];
  /** Hosts request- and tool-supplied URLs may reach past the SSRF guard. */
  allowHosts: string[];
  shell: ShellToolConfig;
  /** svc_web_download's limits. */
  webDownload: { maxBytes: number; timeoutMs: number };
  browser: BrowserToolsConfig;
  dashboards: DashboardsConfig;
  mcp: McpClientConfig;
}

/** The browser tools (config schema `tools.browser`): headless Chromium, one context per conversation. */
export interface BrowserToolsConfig {
  executablePath: string;
  maxContexts: number;
  idleTimeoutMs: number;
  navigationTimeoutMs: number;
  actionTimeoutMs: number;
  maxCapturedRequests: number;
  maxPostDataBytes: number;
  maxTextChars: number;
  viewportWidth: number;
  viewportHeight: number;
  maxScreenshotHeight: number;
}

/** The MCP client of Responses `mcp` tools (config schema `tools.mcp`). */
export interface McpClientConfig {
  callTimeoutMs: number;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  maxResponseBytes: number;
}

/** Stored files: the Files API and the stored-file tools. */
export interface FilesConfig {
  /** Largest stored file, in bytes (uploads and shared workspace files). */
  maxBytes: number;
  /** Lifetime of a share link when the call names none. */
  shareTtlSeconds: number;
  /** Longest lifetime a share link may be given. */
  maxShareTtlSeconds: number;
  /** Key that signs share links; absent: generated once and kept in the store's settings. */
  shareSecret?: string;
}

/** svc_dashboard_generate/update and the dashboard pages (config schema `tools.dashboards`). */
export interface DashboardsConfig {
  linkTtlSeconds: number;
  maxDataRows: number;
  maxDataBytes: number;
  renderTimeoutMs: number;
}

export interface GatewayConfig {
  server: ServerConfig;
  store: StoreConfig;
  queue: QueueConfig;
  providers: Record<string, ProviderConfig>;
  models: ModelConfig[];
  evaluation: EvaluationConfig;
  responses: ResponsesConfig;
  tools: ToolsConfig;
  files: FilesConfig;
  console: ConsoleConfig;
  organizations: OrganizationConfig[];
  agents: AgentConfig[];
  plugins: Record<string, PluginToggle>;
  logging: LoggingConfig;
  telemetry: TelemetryConfig;
}
