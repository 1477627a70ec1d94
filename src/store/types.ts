// Records the service keeps. Timestamps are ISO-8601 strings (UTC, millisecond precision) at this
// boundary so every backend returns identical shapes; JSON columns hold the nested values.
import type { AgentInputConfig, AgentStepConfig, AgentTriggerConfig, DlpPolicyConfig, Permission, RateLimitConfig, Role } from '../config/types';

/** Who is calling: resolved from an API key by the auth plugin. */
export interface Principal {
  orgId: string;
  userId: string;
  /** Id of the key used (null when auth is off, for internal callers such as triggers, and for console sessions). */
  keyId: string | null;
  role: Role;
  groups: string[];
  /**
   * The key's model allow-list (a subset of the organization's models); absent or null: every model of
   * the organization. Set by the auth plugin from the key used.
   */
  models?: readonly string[] | null;
  /**
   * With `models`: the model that judges agent steps (config evaluation.model; absent or null: each
   * agent's own). An agent with a judged step is visible to the key only when this model is on its
   * list too (agent-models.ts). Set by the auth plugin with `models`.
   */
  evaluationModel?: string | null;
  /** Id of the console session used, when the credential was a console session token (keyId is then null). */
  sessionId?: string;
  /** The budgets of the key used (ApiKeyRecord.budgets), when it has any. */
  keyBudgets?: readonly BudgetSpec[];
}

/** A token or cost budget per UTC day or month (cost in USD), as an API key carries it. */
export interface BudgetSpec {
  metric: 'tokens' | 'cost';
  period: 'day' | 'month';
  limit: number;
}

export interface OrganizationRecord {
  id: string;
  name: string;
  models: string[];
  rateLimit: RateLimitConfig | null;
  dlp: DlpPolicyConfig | null;
  updatedAt: string;
}

export interface UserRecord {
  id: string;
  orgId: string;
  name: string;
  role: Role;
}

export interface GroupRecord {
  id: string;
  orgId: string;
  name: string;
  members: string[];
}

export type KeySource = 'config' | 'cli' | 'bootstrap' | 'api';

export interface ApiKeyRecord {
  id: string;
  orgId: string;
  userId: string;
  name: string;
  /** SHA-256 of the key (hex). The key itself is never stored. */
  hash: string;
  /** First characters of the key for humans to recognise it (e.g. "agw_3kF9"); never enough to use it. */
  prefix: string;
  source: KeySource;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** After this the key is refused like a revoked one; null: it does not expire. */
  expiresAt: string | null;
  /** The models the key may call (a subset of its organization's); null: all of the organization's. */
  models: string[] | null;
  /** Budgets of this key (enforced with the organization's and the user's). */
  budgets: BudgetSpec[];
}

/** Which keys to list: an organization's, or one user's of it; revoked ones only when asked. */
export interface KeyListQuery {
  orgId: string;
  /** null: every user's keys of the organization. */
  userId: string | null;
  includeRevoked: boolean;
}

/**
 * A console session: made by an OpenID Connect sign-in for a configured user. It starts with a one-time
 * ticket (carried by a cookie to the console page) that POST /console/auth/session exchanges for the
 * bearer token; only SHA-256 digests of ticket and token are stored.
 */
export interface ConsoleSessionRecord {
  id: string;
  orgId: string;
  userId: string;
  /** SHA-256 (hex) of the bearer token; null until the ticket is redeemed. */
  tokenHash: string | null;
  /** SHA-256 (hex) of the one-time ticket; null once redeemed. */
  ticketHash: string | null;
  /** Until when the ticket may be redeemed. */
  ticketExpiresAt: string;
  /** The identity provider's subject the session was made for (the record's link to the sign-in). */
  subject: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
}

/** A console session resolved for authentication: the session, its user and the user's groups. */
export interface ResolvedConsoleSession {
  session: ConsoleSessionRecord;
  user: UserRecord;
  groups: string[];
}

/** A key resolved for authentication: the key, its user and the user's groups. */
export interface ResolvedKey {
  key: ApiKeyRecord;
  user: UserRecord;
  groups: string[];
}

export interface AgentShare {
  user?: string;
  group?: string;
  permissions: Permission[];
}

/** What an agent is, as configured; hashed to decide whether a config change makes a new version. */
export interface AgentDefinition {
  name: string;
  description: string;
  model: string;
  instructions: string;
  inputs: AgentInputConfig[];
  tools: Record<string, unknown>[];
  steps: AgentStepConfig[];
  timeoutSeconds: number;
  triggers: AgentTriggerConfig[];
  sharedWith: AgentShare[];
}

export interface AgentRecord extends AgentDefinition {
  id: string;
  orgId: string;
  /** Current (latest) version number, starting at 1. */
  version: number;
  createdBy: string;
  creatorName: string;
  definitionHash: string;
  createdAt: string;
  updatedAt: string;
  /** Set when the agent disappeared from the config (soft delete). */
  deletedAt: string | null;
}

/** An agent with the calling principal's own permissions on it (computed in the store query). */
export interface VisibleAgent extends AgentRecord {
  permissions: Permission[];
}

export interface AgentVersionRecord {
  agentId: string;
  version: number;
  definition: AgentDefinition;
  definitionHash: string;
  createdAt: string;
}

export interface AgentUpsert extends AgentDefinition {
  id: string;
  orgId: string;
  createdBy: string;
  creatorName: string;
  definitionHash: string;
}

export type RunStatus = 'in_progress' | 'success' | 'failure' | 'cancelled';
export type RunTrigger = 'api' | 'restart' | 'schedule' | 'webhook' | 'responses';

export interface RunInput {
  name: string;
  value: string;
}

export interface RunRecord {
  id: string;
  orgId: string;
  /** The agent's id even after soft delete; the API shows null when the agent is deleted. */
  agentId: string;
  agentVersion: number;
  /** User who triggered the run (for schedule/webhook triggers: the agent's creator). */
  userId: string;
  /** API key the run was triggered with (null for schedule and webhook triggers): its usage is metered to it. */
  keyId: string | null;
  conversationId: string;
  inputs: RunInput[];
  status: RunStatus;
  /** JSON-encoded final assistant message, or null. */
  result: string | null;
  /** Why the run failed or was cancelled: the message of the Run's `error` extension field. */
  error: string | null;
  /** Stable code of that reason (RunErrorCode), null while in progress or after a success. */
  errorCode: string | null;
  trigger: RunTrigger;
  sourceRunId: string | null;
  /** Steps completed so far (0..steps.length). */
  stepsCompleted: number;
  createdAt: string;
  updatedAt: string;
  endedAt: string | null;
  /** When the run is cancelled by its timeout. */
  deadlineAt: string;
  /** Worker holding the run, and until when (crash recovery takes over expired leases). */
  leaseOwner: string | null;
  leaseExpiresAt: string | null;
  attempts: number;
  /**
   * Fencing token: incremented by every acquireLease. An execution writes only while the run's
   * generation is still the one its lease was taken with (checked by the store in the write itself),
   * so an execution whose lease was taken over cannot write after the takeover.
   */
  leaseGeneration: number;
  /** Incremented by every update; used for compare-and-set. */
  revision: number;
}

/** A run as returned to an API caller: agentId null when the agent is soft-deleted. */
export interface VisibleRun extends RunRecord {
  agentDeleted: boolean;
}

export type RunPatch = Partial<
  Pick<RunRecord, 'status' | 'result' | 'error' | 'errorCode' | 'stepsCompleted' | 'endedAt' | 'leaseOwner' | 'leaseExpiresAt' | 'attempts' | 'deadlineAt'>
>;

/** A step row created with its run. */
export interface StepInit {
  stepNumber: number;
  name: string | null;
}

/** What an execution of a run writes under: the run and the lease generation it holds. */
export interface LeaseFence {
  runId: string;
  generation: number;
}

/** A fenced write refused: the run's lease was taken over (or the run ended) since the fence was taken. */
export class LeaseLostError extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId}: the lease was taken over; this execution may not write any more`);
    this.name = 'LeaseLostError';
  }
}

export interface RunPageQuery {
  agentId: string;
  limit: number;
  /** Keyset position from a previous page: runs strictly older than this. */
  after: { createdAt: string; id: string } | null;
  startDate: string | null;
  endDate: string | null;
}

/** GET /v1/runs: the runs a principal may read, newest first by (createdAt, id), with filters. */
export interface RunListQuery {
  agentId: string | null;
  status: RunStatus | null;
  /** Inclusive bounds on createdAt. */
  createdAfter: string | null;
  createdBefore: string | null;
  limit: number;
  /** Keyset position from a previous page: runs strictly older than this. */
  after: { createdAt: string; id: string } | null;
}

/** A run of a list, with its agent's name (null when the agent is gone or soft-deleted). */
export interface RunListItem extends VisibleRun {
  agentName: string | null;
}

export interface RunPage {
  ids: string[];
  /** Keyset of the last run returned when more remain, else null. */
  next: { createdAt: string; id: string } | null;
}

export type StepResult = 'pass' | 'fail' | 'not_evaluated' | 'unknown';

export interface StepVerdictRecord {
  runId: string;
  stepNumber: number;
  name: string | null;
  /** null: no verdict recorded yet. */
  result: StepResult | null;
  explanation: string | null;
  /** Whether the step itself has finished executing (its verdict may still be pending). */
  completed: boolean;
  updatedAt: string;
}

export interface ConversationRecord {
  id: string;
  orgId: string;
  userId: string;
  runId: string | null;
  metadata: Record<string, unknown>;
  createdAt: string;
  /**
   * The running summary of a compacted conversation (Responses rule 6): its text and the position of
   * the last item it covers. The model is sent the summary, then the items after `through`. Reads
   * always set it; omitted on create means none.
   */
  summary?: ConversationSummary | null;
  /** Upstream-reported input + output tokens of the last completed turn: the context's size after it. */
  contextTokens?: number | null;
}

export interface ConversationSummary {
  text: string;
  through: number;
  /** The stored `compaction` item that carries it (listed with the conversation's items). */
  itemId: string;
}

export interface ConversationItemRecord {
  id: string;
  conversationId: string;
  /** Monotonic position within the conversation, assigned by the store. */
  position: number;
  type: string;
  role: string | null;
  /** The item's body (content parts, call fields...), OpenAI conversation-item shaped. */
  data: Record<string, unknown>;
  status: string;
  /** Same key twice appends once: how re-executed steps avoid duplicating messages. */
  idempotencyKey: string | null;
  responseId: string | null;
  createdAt: string;
}

export type NewConversationItem = Omit<ConversationItemRecord, 'position' | 'createdAt' | 'conversationId'>;

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'incomplete';

export interface ResponseRecord {
  id: string;
  orgId: string;
  userId: string;
  status: ResponseStatus;
  model: string;
  conversationId: string | null;
  previousResponseId: string | null;
  stored: boolean;
  /** The full response object as returned to clients. */
  body: Record<string, unknown>;
  /** The originating input items (for /input_items). */
  inputItems: Record<string, unknown>[];
  createdAt: string;
  updatedAt: string;
  /** After this the response is treated as absent (getVisible) and pruned; null keeps it. */
  expiresAt: string | null;
  /**
   * Who is generating the response and until when (renewed while it streams): an in-progress
   * response whose lease lapsed belongs to a process that died and is marked failed by the sweeper.
   * Taken by create(); null once finished (and on responses created without one, which never lapse).
   * Reads always set it; omitted on create means none.
   */
  lease?: ResponseLease | null;
}

/** GET /v1/responses: a stored response's summary (no body, no input items). */
export interface ResponseSummary {
  id: string;
  userId: string;
  status: ResponseStatus;
  model: string;
  conversationId: string | null;
  previousResponseId: string | null;
  createdAt: string;
}

/** Stored, unexpired responses a principal may list (their own; an org admin: the organization's). */
export interface ResponseListQuery {
  now: string;
  limit: number;
  /** Keyset position from a previous page: responses strictly older than this. */
  after: { createdAt: string; id: string } | null;
}

export interface ResponseLease {
  owner: string;
  until: string;
}

/** The terminal write of a response (finish): its final status and the body clients read. */
export interface ResponseOutcome {
  status: Exclude<ResponseStatus, 'queued' | 'in_progress'>;
  body: Record<string, unknown>;
}

export interface ResponseEventRecord {
  responseId: string;
  sequenceNumber: number;
  event: string;
  data: Record<string, unknown>;
  createdAt: string;
}

/**
 * An event as written to the log: its data as an object, or as the JSON text the caller was sent
 * (`json`, which wins when both are given: stored as that text, not serialized again; read back as
 * `data` like any other).
 */
export type NewResponseEvent = Omit<ResponseEventRecord, 'data'> & ({ data: Record<string, unknown>; json?: string } | { json: string; data?: undefined });

export interface AuditRecord {
  id: string;
  at: string;
  orgId: string | null;
  userId: string | null;
  keyId: string | null;
  method: string;
  /** Route template (e.g. /v1/runs/{runId}), never the raw URL with query values. */
  route: string;
  operationId: string | null;
  resourceIds: Record<string, string>;
  status: number;
  latencyMs: number;
  requestId: string;
  /** DLP replacements in the call's request per detector (never the matched text); absent when none. */
  redactions?: Record<string, number>;
  /** Model calls: the configured model id called. */
  model?: string;
  /** Model calls: the provider that served it. */
  provider?: string;
  /**
   * The token usage of the call's one upstream call when it made exactly one, which is then not
   * written as a UsageRecord of its own: the stores count it in usage totals.
   */
  promptTokens?: number;
  completionTokens?: number;
  /** Of promptTokens, those read from a prompt cache (with the token counts). */
  cachedPromptTokens?: number;
  /** What the call cost in USD by models[].pricing (with the token counts; absent: the model has no pricing). */
  cost?: number;
  /** The stable error code (ERROR_REGISTRY) the call ended with, when it failed. */
  errorCode?: string;
  /** Set when values were shortened to keep the record within its size bound. */
  truncated?: true;
}

export interface AuditQuery {
  orgId: string;
  since: string | null;
  /** Inclusive upper bound on `at`. */
  until?: string | null;
  userId?: string | null;
  keyId?: string | null;
  model?: string | null;
  operationId?: string | null;
  /** Inclusive range of HTTP statuses: one status (404..404) or a class (400..499). */
  status?: { from: number; to: number } | null;
  /** By (at, id); default asc (oldest first). */
  order?: 'asc' | 'desc';
  limit: number;
  /** Keyset from a previous page: records after it in `order`. */
  after: { at: string; id: string } | null;
}

export interface UsageRecord {
  at: string;
  orgId: string;
  userId: string | null;
  keyId: string | null;
  model: string;
  promptTokens: number;
  completionTokens: number;
  requestId: string;
  /** Of promptTokens, those read from a prompt cache (absent: 0). */
  cachedPromptTokens?: number;
  /** USD by models[].pricing (absent: the model has no pricing). */
  cost?: number;
}

export type UsageGroup = 'day' | 'month' | 'model' | 'user' | 'key';

/** GET /v1/usage: an organization's usage between two times, grouped. */
export interface UsageQuery {
  orgId: string;
  /** Inclusive. */
  since: string;
  /** Exclusive. */
  until: string;
  groupBy: readonly UsageGroup[];
  userId?: string;
  keyId?: string;
  model?: string;
  /** At most this many groups (the caller asks one more to tell the result was cut). */
  limit: number;
}

/** One group of a usage query: the grouped-by fields present, the sums. */
export interface UsageGroupRow {
  /** YYYY-MM-DD (UTC). */
  day?: string;
  /** YYYY-MM (UTC). */
  month?: string;
  model?: string;
  userId?: string | null;
  keyId?: string | null;
  requests: number;
  promptTokens: number;
  cachedPromptTokens: number;
  completionTokens: number;
  cost: number;
}

/** What an organization, and one user and one key of it, spent since a time (budgets counted by the store). */
export interface UsageSpent {
  organization: { tokens: number; cost: number };
  user: { tokens: number; cost: number };
  key: { tokens: number; cost: number };
}

export interface UsageTotal {
  model: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
}

/**
 * A stored file (POST /v1/files, or a file a tool produced): its record. The bytes are read apart
 * (FileRepository.readVisible), so listing never carries them.
 */
export interface StoredFileRecord {
  /** `file-` and 24 hex digits. */
  id: string;
  orgId: string;
  /** The user who uploaded it or whose tool call made it; null for a caller with no user. */
  userId: string | null;
  /** The name it was uploaded or shared under (no directory part). */
  filename: string;
  /** OpenAI's purposes (`assistants`, `user_data`, …) or `tool_output` for files tools made. */
  purpose: string;
  /** Size of the content in bytes. */
  bytes: number;
  /** The media type given at upload, or guessed from the file name. */
  mediaType: string;
  createdAt: string;
}

/**
 * Who asks for stored files. A file is visible within its organization to its owner and to the
 * organization's admins (the conversations' rule); another organization never sees it.
 */
export interface FileViewer {
  orgId: string;
  /** null: a caller with no user (sees only files made with no user). */
  userId: string | null;
  admin: boolean;
}

export interface FilePageQuery {
  /** Only files of this purpose. */
  purpose?: string;
  limit: number;
  /** By creation time (ties by id); `desc` lists the newest first. */
  order: 'asc' | 'desc';
  /** A file id: the files after it in that order (none when it is not a visible file). */
  after?: string;
}
