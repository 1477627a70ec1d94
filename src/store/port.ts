// The store port: every repository the service uses. Backends (sql/ for embedded PGlite and
// PostgreSQL, mongo/ for MongoDB) implement it and pass the one contract suite in test/store/.
// Permission rules live in the queries (listVisible/getVisible), never as filtering after the fact.
import type {
  AgentRecord,
  AgentUpsert,
  AgentVersionRecord,
  ApiKeyRecord,
  AuditQuery,
  ConsoleSessionRecord,
  AuditRecord,
  ConversationItemRecord,
  ConversationRecord,
  ConversationSummary,
  FilePageQuery,
  FileViewer,
  GroupRecord,
  KeyListQuery,
  LeaseFence,
  NewConversationItem,
  NewResponseEvent,
  OrganizationRecord,
  Principal,
  ResolvedConsoleSession,
  ResolvedKey,
  ResponseEventRecord,
  ResponseListQuery,
  ResponseOutcome,
  ResponseRecord,
  ResponseSummary,
  RunListItem,
  RunListQuery,
  RunPage,
  RunPageQuery,
  RunPatch,
  RunRecord,
  RunStatus,
  StepInit,
  StepVerdictRecord,
  StoredFileRecord,
  UsageGroupRow,
  UsageQuery,
  UsageRecord,
  UsageSpent,
  UsageTotal,
  UserRecord,
  VisibleAgent,
  VisibleRun,
} from './types';
import type {
  DashboardPatch,
  DashboardRecord,
  DashboardSummary,
  KnowledgeDocumentRecord,
  KnowledgeDocumentSummary,
  KnowledgeSearchHit,
  KnowledgeStoreRecord,
  KnowledgeStoreView,
} from './tool-records';

export interface OrganizationRepository {
  upsert(org: Omit<OrganizationRecord, 'updatedAt'>): Promise<void>;
  get(id: string): Promise<OrganizationRecord | null>;
  list(): Promise<OrganizationRecord[]>;
}

export interface UserRepository {
  upsert(user: UserRecord): Promise<void>;
  get(id: string): Promise<UserRecord | null>;
  listByOrg(orgId: string): Promise<UserRecord[]>;
  count(): Promise<number>;
}

export interface GroupRepository {
  /** Creates or replaces the group, members included. */
  upsert(group: GroupRecord): Promise<void>;
  listByOrg(orgId: string): Promise<GroupRecord[]>;
  /** Ids of the groups the user belongs to. */
  groupIdsOf(orgId: string, userId: string): Promise<string[]>;
}

export interface KeyRepository {
  /** Inserts a key; a key whose hash already exists is left as it is (returns false). */
  create(key: ApiKeyRecord): Promise<boolean>;
  /**
   * Active (not revoked) key by hash, with its user and groups; null if unknown or revoked. An expired
   * key is returned (with its expiresAt): the caller's clock decides, and its cache honours it.
   */
  resolve(hash: string): Promise<ResolvedKey | null>;
  get(id: string): Promise<ApiKeyRecord | null>;
  /** Sets revokedAt; false when no such active key. */
  revoke(id: string, at: string): Promise<boolean>;
  listByOrg(orgId: string): Promise<ApiKeyRecord[]>;
  /** The organization's keys (or one user's of it), oldest first by (createdAt, id), at most `limit`. */
  list(query: KeyListQuery, limit: number): Promise<ApiKeyRecord[]>;
  /** Records last use; callers batch these off the request path. */
  touch(ids: readonly string[], at: string): Promise<void>;
  countActive(): Promise<number>;
  /** Revoked-since check for auth caches: ids of keys revoked at or after `since`. */
  revokedSince(since: string): Promise<string[]>;
}

/** Console sessions (sign-in with OpenID Connect); tickets and tokens are stored as SHA-256 digests only. */
export interface ConsoleSessionRepository {
  create(session: ConsoleSessionRecord): Promise<void>;
  /**
   * Redeems a ticket once: when a session holds `ticketHash`, its ticket has not expired at `now`, and
   * it is neither revoked nor expired, sets its token hash and clears the ticket in one atomic write
   * (a second redemption, even a concurrent one, finds no ticket). Returns the session, else null.
   */
  redeemTicket(ticketHash: string, tokenHash: string, now: string): Promise<ConsoleSessionRecord | null>;
  /** The session holding this token hash, not revoked and not expired at `now`, with its user and groups; else null. */
  resolve(tokenHash: string, now: string): Promise<ResolvedConsoleSession | null>;
  get(id: string): Promise<ConsoleSessionRecord | null>;
  /** Sets revokedAt; false when no such unrevoked session. */
  revoke(id: string, at: string): Promise<boolean>;
  /** Ids of sessions revoked at or after `since` (auth caches evict them). */
  revokedSince(since: string): Promise<string[]>;
  /** Deletes up to `limit` sessions expired (or revoked) before `before`; returns how many. */
  prune(before: string, limit: number): Promise<number>;
}

export interface AgentUpsertResult {
  agent: AgentRecord;
  /** True when this upsert created the agent or a new version of it. */
  changed: boolean;
}

export interface AgentRepository {
  /** Creates the agent, or a new version when `definitionHash` differs from the latest; undeletes it. */
  upsert(agent: AgentUpsert): Promise<AgentUpsertResult>;
  /** Soft-deletes the organization's agents whose ids are not in `keep`; returns the ids deleted. */
  softDeleteExcept(keep: readonly string[], at: string): Promise<string[]>;
  /**
   * Agents the principal may see (creator, shared user/group, org admin) and, for a key with a model
   * allow-list, whose models are within it (agent-models.ts), not deleted, newest first, at most `limit`.
   */
  listVisible(principal: Principal, limit: number): Promise<VisibleAgent[]>;
  /** One agent if the principal may see it (listVisible's rule) and it is not deleted. */
  getVisible(principal: Principal, agentId: string): Promise<VisibleAgent | null>;
  /** System access (workers, triggers): any agent, deleted or not. */
  get(agentId: string): Promise<AgentRecord | null>;
  getVersion(agentId: string, version: number): Promise<AgentVersionRecord | null>;
  /** Every agent not deleted (trigger scheduling). */
  listActive(): Promise<AgentRecord[]>;
}

export interface RunRepository {
  /**
   * Creates the run and, in the same transaction, its conversation and step rows: all or nothing (on
   * MongoDB, which has no transactions here, the run document is written last and what was written
   * before it is removed when a later write fails). A run in progress with no lease is its own outbox
   * entry: the recovery sweep enqueues it if its job never made it to the queue.
   */
  create(run: RunRecord, parts?: { conversation?: ConversationRecord; steps?: readonly StepInit[] }): Promise<void>;
  /** System access. */
  get(runId: string): Promise<RunRecord | null>;
  /**
   * The run if the principal may read it: same organization and (org admin, or the user who triggered
   * it, or the agent, deleted or not, is visible to them), and for a key with a model allow-list, its
   * agent's models within it (agent-models.ts). agentDeleted tells whether to show agentId null.
   */
  getVisible(principal: Principal, runId: string): Promise<VisibleRun | null>;
  /** Newest first by (createdAt, id), keyset-paginated, inclusive date filters. */
  page(query: RunPageQuery): Promise<RunPage>;
  /**
   * The runs the principal may read (getVisible's rule, decided in the query), newest first by
   * (createdAt, id), filtered, keyset-paginated, at most `query.limit`, each with its agent's name.
   */
  listVisible(principal: Principal, query: RunListQuery): Promise<RunListItem[]>;
  /** createdAt of the agent's latest run, regardless of any filter. */
  latestCreatedAt(agentId: string): Promise<string | null>;
  /**
   * Compare-and-set update: applies the patch only when the run's status is one of `whenStatus`
   * (if given), its revision equals `whenRevision` (if given) and its lease generation equals
   * `whenGeneration` (if given: the fence of an execution). Returns the updated run or null.
   */
  update(
    runId: string,
    patch: RunPatch,
    guard?: { whenStatus?: readonly RunStatus[]; whenRevision?: number; whenGeneration?: number },
  ): Promise<RunRecord | null>;
  /**
   * Takes the lease of an in-progress run for `owner` until `until` when it is free or expired (or
   * already held by `owner`). Increments attempts and the lease generation (so writes fenced with an
   * older generation fail from now on). Returns the run, or null when someone else holds it.
   */
  acquireLease(runId: string, owner: string, until: string, now: string): Promise<RunRecord | null>;
  /** In-progress runs whose lease is missing or expired before `now` (crash recovery), oldest first. */
  listOrphaned(now: string, limit: number): Promise<RunRecord[]>;
  /** In-progress runs past their deadline (timeout sweeps). */
  listOverdue(now: string, limit: number): Promise<RunRecord[]>;
  countByStatus(): Promise<Record<RunStatus, number>>;
}

export interface StepVerdictRepository {
  /** Creates the run's step rows (result null, completed false); existing rows are kept. */
  init(runId: string, steps: readonly { stepNumber: number; name: string | null }[]): Promise<void>;
  /** With a fence: applied only while the run is in progress under that lease generation, else LeaseLostError. */
  update(runId: string, stepNumber: number, patch: Partial<Pick<StepVerdictRecord, 'result' | 'explanation' | 'completed'>>, fence?: LeaseFence): Promise<void>;
  list(runId: string): Promise<StepVerdictRecord[]>;
}

export interface ConversationRepository {
  create(conversation: ConversationRecord): Promise<void>;
  get(id: string): Promise<ConversationRecord | null>;
  /**
   * Same organization and (owner, org admin, or the backing run is visible); a run's conversation, for
   * a key with a model allow-list, only when the run's agent's models are within it (agent-models.ts).
   */
  getVisible(principal: Principal, id: string): Promise<ConversationRecord | null>;
  /**
   * Appends items in order, assigning positions. An item whose idempotencyKey already exists in the
   * conversation is not appended again; the existing item is returned in its place. With a fence (a
   * run's execution writing): appended only while the run is in progress under that lease generation,
   * else LeaseLostError and nothing is appended.
   */
  append(conversationId: string, items: readonly NewConversationItem[], fence?: LeaseFence): Promise<ConversationItemRecord[]>;
  /** Items by position: ascending or descending, after a position (exclusive), at most `limit`. */
  listItems(conversationId: string, options: { order: 'asc' | 'desc'; afterPosition?: number; limit: number }): Promise<ConversationItemRecord[]>;
  getItem(conversationId: string, itemId: string): Promise<ConversationItemRecord | null>;
  /**
   * Takes the conversation's turn for a response (Responses: one turn at a time per conversation,
   * across processes). Granted when no turn is held, the holder's turn ended before `now`, or the
   * holding response exists and is no longer in progress (finished, or failed by the lapsed-lease
   * sweeper after its writer died). False: another response is generating in it.
   */
  claimTurn(conversationId: string, responseId: string, now: string, until: string): Promise<boolean>;
  /**
   * A stateful Responses turn's opening in one round trip: the conversation named (or that of the
   * stored, unexpired `previousResponseId` of the principal's organization), visible to the principal
   * as getVisible says, its turn claimed for `response.id` as claimTurn says, and, when claimed, the
   * response record inserted (ResponseRepository.create) with the conversation's id. A run's
   * conversation is never claimed. The conversation returned is read after the claim (its summary is
   * current).
   */
  openTurn(principal: Principal, ref: TurnRef, response: ResponseRecord, now: string, until: string): Promise<OpenedTurn>;
  /**
   * Undoes an openTurn whose response never began (its model call failed first): the response record
   * it inserted goes (while still in progress) and the turn is released (while the response holds it).
   */
  abandonTurn(conversationId: string, responseId: string): Promise<void>;
  /**
   * Ends the turn `responseId` holds, in one transaction: appends its items (none when the turn
   * failed) and records the context size. Applied only while `responseId` still holds the turn:
   * returns false, and appends nothing, when it does not (its turn lapsed and another took it).
   */
  endTurn(conversationId: string, responseId: string, items: readonly NewConversationItem[], contextTokens: number | null): Promise<boolean>;
  /** Compaction: appends the `compaction` item and sets the running summary, in one transaction. */
  setSummary(conversationId: string, summary: ConversationSummary, item: NewConversationItem): Promise<void>;
}

export type TurnRef = { conversationId: string } | { previousResponseId: string };

export type OpenedTurn =
  | { kind: 'not_found' }
  /** A run's conversation (written by its run; not continued through Responses). */
  | { kind: 'run'; conversationId: string }
  /** Another response holds the turn. */
  | { kind: 'locked'; conversationId: string }
  /** `items`: the items after the summary, when the store could read them with the claim (else read them after). */
  | { kind: 'claimed'; conversation: ConversationRecord; items?: ConversationItemRecord[] };

/** A stored turn's beginning (see TurnRepository.commit). */
export interface TurnBegin {
  /** The conversation the turn starts (`store: true` alone), inserted with its turn held by the response; null when it continues one. */
  conversation: ConversationRecord | null;
  /** Until when a new conversation's turn is held without its response being in progress (ConversationRepository.claimTurn). */
  turnUntil: string;
  response: ResponseRecord;
}

/** A stored turn's end (see TurnRepository.commit). */
export interface TurnEnd {
  responseId: string;
  outcome: ResponseOutcome;
  /** The conversation whose turn the response holds. */
  conversationId: string;
  /** Appended when the response still holds the turn (none for a failed turn). */
  items: readonly NewConversationItem[];
  /** The response's input items (GET …/input_items), written with the terminal write when given. */
  inputItems?: Record<string, unknown>[];
  contextTokens: number | null;
  /**
   * The last events of the response's event log, not stored yet: stored with the end (as
   * ResponseRepository.appendEvents would, whether or not the terminal write applies), so the end
   * costs one commit, not a log write and then a commit.
   */
  events?: readonly NewResponseEvent[];
}

export interface TurnRepository {
  /**
   * Group commit of stored Responses turns: the beginnings and ends of many responses in one
   * transaction. A beginning inserts its new conversation (turn held by the response) and the response
   * record (ResponseRepository.create). An end is ConversationRepository.endTurn followed by
   * ResponseRepository.finish (whenStatus in_progress): items appended and the turn released only while
   * the response still holds it, then the terminal write; an end's `events` are stored with it. Returns
   * the ids whose terminal write applied.
   * All or nothing: a failure writes none of them (the caller retries them one by one).
   */
  commit(begins: readonly TurnBegin[], ends: readonly TurnEnd[]): Promise<{ finished: string[] }>;
  /**
   * True when `err` (from commit) is the store answering no to the write itself: the same write gets
   * the same answer. False for a store that did not answer, was cut off, cancelled the statement or
   * asked for it to be tried again: the write may still be taken.
   */
  refused(err: unknown): boolean;
}

export interface ResponseRepository {
  /** Inserts the response, with its lease when `response.lease` is set (an in-progress stream's writer). */
  create(response: ResponseRecord): Promise<void>;
  /** System access. */
  get(id: string): Promise<ResponseRecord | null>;
  /** Same organization and stored and not expired at `now`: anything else is absent (the same 404). */
  getVisible(principal: Principal, id: string, now: string): Promise<ResponseRecord | null>;
  /**
   * Stored responses not expired at `now` of the principal (an org admin: of its organization), newest
   * first by (createdAt, id), keyset-paginated, at most `query.limit`.
   */
  listVisible(principal: Principal, query: ResponseListQuery): Promise<ResponseSummary[]>;
  /** Unconditional patch of non-terminal fields; the terminal write is finish(). */
  update(id: string, patch: Partial<Pick<ResponseRecord, 'status' | 'body' | 'conversationId' | 'expiresAt' | 'inputItems'>>): Promise<void>;
  /**
   * The terminal write, compare-and-set: applied only while the response is still `in_progress` (and,
   * with `lapsedBefore`, only while its lease ends before that time: the sweeper's guard against a
   * writer that renewed in the meantime). Clears the lease. The first terminal write wins: a writer
   * finishing after the sweeper marked its response failed gets null and changes nothing, because
   * readers were already told it failed. Returns the finished response, or null when not applied.
   */
  finish(id: string, outcome: ResponseOutcome, guard: { whenStatus: 'in_progress'; lapsedBefore?: string }): Promise<ResponseRecord | null>;
  /**
   * Extends the leases `owner` holds on in-progress responses among `ids` to `until`, in one write
   * (a process renews all its streams at once). Returns the ids renewed; an id missing from the
   * answer is no longer this owner's to write (finished, or failed by the sweeper).
   */
  renewLeases(ids: readonly string[], owner: string, until: string): Promise<string[]>;
  /** In-progress responses whose lease ended before `now`, the longest lapsed first, at most `limit`. */
  listLapsed(now: string, limit: number): Promise<ResponseRecord[]>;
  /**
   * Appends events; idempotent on (responseId, sequenceNumber): an event already stored (a retried
   * batch, or the same event twice in one batch) is kept once, as first written, and is no error.
   */
  appendEvents(events: readonly NewResponseEvent[]): Promise<void>;
  /** Events with sequenceNumber > after, ascending; at most `limit` when given. */
  listEvents(responseId: string, after: number, limit?: number): Promise<ResponseEventRecord[]>;
  /** The highest stored sequence number of the response's events, -1 when none (one index lookup). */
  lastSequenceNumber(responseId: string): Promise<number>;
  /**
   * Deletes up to `limit` responses whose expiresAt is at or before `now`, with their events; returns
   * how many (callers repeat while a full batch came back). Served by an index on expiresAt.
   */
  prune(now: string, limit: number): Promise<number>;
}

/**
 * Audit and usage records as JSON array texts (UTF-8), each item an AuditRecord / UsageRecord
 * with the same property names. The audit plugin keeps its batches in this form, outside the V8 heap.
 */
export interface RecordsJson {
  audit: Buffer;
  usage: Buffer;
}

export interface AuditRepository {
  /**
   * Writes audit records and, in the same write, the usage records of those calls (on the SQL stores
   * one statement: one round trip and one commit per batch instead of two). Audit ids are unique, so a
   * retried batch does not duplicate audit records.
   */
  insertMany(records: readonly AuditRecord[], usage?: readonly UsageRecord[]): Promise<void>;
  /**
   * The same write as insertMany, from the records' JSON texts (the SQL stores pass them through as they
   * are); an audit record's own usage (its token counts) counts in usage totals like a usage record.
   */
  insertJson(batch: RecordsJson): Promise<void>;
  /** The organization's records matching the query's filters, by (at, id) in its order (default oldest first), keyset-paginated. */
  list(query: AuditQuery): Promise<AuditRecord[]>;
}

export interface UsageRepository {
  insertMany(records: readonly UsageRecord[]): Promise<void>;
  totals(orgId: string, since: string | null): Promise<UsageTotal[]>;
  /** Sums per group, ordered by the groups (time buckets first); served by the (org_id, at) indexes. */
  query(query: UsageQuery): Promise<UsageGroupRow[]>;
  /** Tokens and cost of the organization, of `userId` and of `keyId` (null: none) at or after `since`. */
  spent(orgId: string, userId: string | null, keyId: string | null, since: string): Promise<UsageSpent>;
}

/** Small installation-wide values (e.g. the secret webhook URLs are derived from). */
export interface SettingsRepository {
  get(key: string): Promise<string | null>;
  /** Stores `value` unless the key exists; returns the stored value either way (first writer wins). */
  setIfAbsent(key: string, value: string): Promise<string>;
}

/**
 * Small per-conversation values of hosted tools (the egress profile svc_vpn_connect chose, …), keyed by
 * (organization, conversation, key): read by every process, kept across restarts. A value is the tool's
 * own text (JSON when it needs structure); never a secret (the egress choice is a profile name, the
 * proxy URL stays in the configuration).
 */
export interface ToolStateRepository {
  get(orgId: string, conversationId: string, key: string): Promise<string | null>;
  /** Creates or replaces the value (last writer wins). */
  set(orgId: string, conversationId: string, key: string, value: string, updatedAt: string): Promise<void>;
  /** Removes one value; true when there was one. */
  delete(orgId: string, conversationId: string, key: string): Promise<boolean>;
  /** Removes a conversation's values (every key, or only `key`), whatever the organization: the conversation went. */
  forget(conversationId: string, key?: string): Promise<number>;
}

/**
 * Stored files (POST /v1/files and tool outputs): the record in the store, the bytes where the backend
 * keeps them (PostgreSQL: a bytea column; the embedded store: a file under <store.path>/files, so they
 * never pass through the embedded database's WebAssembly memory; MongoDB: GridFS).
 */
export interface FileRepository {
  /** Stores the bytes, then the record: a record never names bytes that are not there. */
  create(file: StoredFileRecord, content: Buffer): Promise<void>;
  /** The record if the viewer may see it (see FileViewer), else null. */
  getVisible(viewer: FileViewer, id: string): Promise<StoredFileRecord | null>;
  /** The viewer's visible files, keyset-paginated by (createdAt, id), at most `limit`. */
  listVisible(viewer: FileViewer, query: FilePageQuery): Promise<StoredFileRecord[]>;
  /** Record and bytes of a file the viewer may see, else null. */
  readVisible(viewer: FileViewer, id: string): Promise<{ file: StoredFileRecord; content: Buffer } | null>;
  /** System access (a signed share link already proved the right to it): record and bytes, or null. */
  read(id: string): Promise<{ file: StoredFileRecord; content: Buffer } | null>;
  /** Deletes the record, then the bytes, of a file the viewer may see; false when there is none. */
  deleteVisible(viewer: FileViewer, id: string): Promise<boolean>;
}

/**
 * An organization's knowledge stores and their documents, searched by relevance (SQL: PostgreSQL full
 * text, a GIN-indexed tsvector of title and text; MongoDB: a text index). Every method takes the
 * organization: another organization's stores and documents are absent.
 */
export interface KnowledgeRepository {
  /** Inserts the store; false (nothing written) when the organization already has a store of that name. */
  createStore(store: KnowledgeStoreRecord): Promise<boolean>;
  getStore(orgId: string, storeId: string): Promise<KnowledgeStoreView | null>;
  getStoreByName(orgId: string, name: string): Promise<KnowledgeStoreView | null>;
  /** The organization's stores by name. */
  listStores(orgId: string): Promise<KnowledgeStoreView[]>;
  /** Deletes the store with its documents; false when there was no such store. */
  deleteStore(orgId: string, storeId: string): Promise<boolean>;
  /** Adds a document to an existing store of the organization; false (nothing kept) when there is no such store. */
  addDocument(document: KnowledgeDocumentRecord): Promise<boolean>;
  getDocument(orgId: string, storeId: string, documentId: string): Promise<KnowledgeDocumentRecord | null>;
  /** Oldest first by (createdAt, id), after the document `after` (exclusive) when given, at most `limit`. */
  listDocuments(orgId: string, storeId: string, options: { after?: string; limit: number }): Promise<KnowledgeDocumentSummary[]>;
  deleteDocument(orgId: string, storeId: string, documentId: string): Promise<boolean>;
  /**
   * The documents of the given stores of the organization that match `query` (web-search syntax:
   * words, "quoted phrases", -excluded words), best first, at most `limit`, each with a snippet.
   */
  search(orgId: string, storeIds: readonly string[], query: string, limit: number): Promise<KnowledgeSearchHit[]>;
}

/** Dashboards made by svc_dashboard_generate, per organization. */
export interface DashboardRepository {
  create(dashboard: DashboardRecord): Promise<void>;
  /** System access (a signed link names the dashboard alone). */
  get(id: string): Promise<DashboardRecord | null>;
  /** The organization's dashboard, else null. */
  getInOrg(orgId: string, id: string): Promise<DashboardRecord | null>;
  /** The organization's dashboards, most recently updated first, at most `limit`. */
  listByOrg(orgId: string, limit: number): Promise<DashboardSummary[]>;
  /**
   * Compare-and-set: applies the patch only while the dashboard's version is `whenVersion`, then
   * increments the version and sets updatedAt to `at`. Returns the updated dashboard, or null (no such
   * dashboard in the organization, or another update came first).
   */
  update(orgId: string, id: string, patch: DashboardPatch, whenVersion: number, at: string): Promise<DashboardRecord | null>;
  delete(orgId: string, id: string): Promise<boolean>;
}

/** A conversation retention pruned: its organization (its workspace is under it) and id. */
export interface PrunedConversation {
  orgId: string;
  id: string;
}

export interface PruneResult {
  /** Runs deleted (each with its conversation). */
  runs: number;
  /** Idle Responses conversations deleted. */
  conversations: number;
  /** Every conversation deleted: the runs' and the idle ones. */
  gone: PrunedConversation[];
}

export interface Store {
  readonly driver: 'embedded' | 'postgres' | 'mongodb';
  readonly organizations: OrganizationRepository;
  readonly users: UserRepository;
  readonly groups: GroupRepository;
  readonly keys: KeyRepository;
  readonly consoleSessions: ConsoleSessionRepository;
  readonly agents: AgentRepository;
  readonly runs: RunRepository;
  readonly steps: StepVerdictRepository;
  readonly conversations: ConversationRepository;
  readonly responses: ResponseRepository;
  readonly turns: TurnRepository;
  readonly audit: AuditRepository;
  readonly usage: UsageRepository;
  readonly settings: SettingsRepository;
  readonly toolState: ToolStateRepository;
  readonly files: FileRepository;
  readonly knowledge: KnowledgeRepository;
  readonly dashboards: DashboardRepository;
  /** Creates or migrates schema and indexes; idempotent, safe to run from several processes at once. */
  migrate(): Promise<void>;
  /** Cheap round trip for readiness. */
  ping(): Promise<void>;
  /**
   * Deletes finished runs (with their verdicts and conversation) and audit/usage records older than
   * `before`, and the Responses conversations idle since before it (created before it, no item since,
   * no turn in progress) with their items; the tool state of every conversation that went, and tool
   * state not written since `before` whose conversation is gone (or never was a stored one: a
   * stateless response's scope). Returns the counts and the conversations that went (the caller
   * releases what the tools hold for them outside the store: workspaces, browser contexts, MCP
   * sessions). Responses carry their own expiry: responses.prune.
   */
  prune(before: string): Promise<PruneResult>;
  close(): Promise<void>;
}
