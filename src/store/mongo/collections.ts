// MongoDB documents: one collection per repository, timestamps as BSON dates (converted to ISO strings
// at the port boundary), _id carrying the record's id (or a composite key where the record has none).
import type { Collection, Db, ObjectId, OptionalUnlessRequiredId } from 'mongodb';
import { MongoServerError } from 'mongodb';
import type { Permission, Role } from '../../config/types';
import type {
  AgentDefinition,
  AgentShare,
  AuditRecord,
  BudgetSpec,
  KeySource,
  OrganizationRecord,
  ResponseStatus,
  RunInput,
  RunStatus,
  RunTrigger,
  StepResult,
} from '../types';
import type { DocumentMetadata } from '../tool-records';

export interface OrganizationDoc {
  _id: string;
  name: string;
  models: string[];
  rateLimit: OrganizationRecord['rateLimit'];
  dlp: OrganizationRecord['dlp'];
  updatedAt: Date;
}

export interface UserDoc {
  _id: string;
  orgId: string;
  name: string;
  role: Role;
}

export interface GroupDoc {
  /** `${orgId}/${id}`: group ids are unique within an organization. */
  _id: string;
  orgId: string;
  id: string;
  name: string;
  members: string[];
}

export interface KeyDoc {
  _id: string;
  orgId: string;
  userId: string;
  name: string;
  hash: string;
  prefix: string;
  source: KeySource;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** Absent on keys written before expiry, allow-lists and budgets: none. */
  expiresAt?: Date | null;
  models?: string[] | null;
  budgets?: BudgetSpec[];
}

/** A console session; tokenHash and ticketHash are absent (not null) when unset, so their sparse unique indexes skip them. */
export interface ConsoleSessionDoc {
  _id: string;
  orgId: string;
  userId: string;
  tokenHash?: string;
  ticketHash?: string;
  ticketExpiresAt: Date;
  subject: string;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

export interface AgentDoc {
  _id: string;
  orgId: string;
  version: number;
  createdBy: string;
  creatorName: string;
  definition: AgentDefinition;
  definitionHash: string;
  /** Copy of definition.sharedWith at the top level, read by the permission expression. */
  sharedWith: AgentShare[];
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

export interface AgentVersionDoc {
  /** `${agentId}#${version}` */
  _id: string;
  agentId: string;
  version: number;
  definition: AgentDefinition;
  definitionHash: string;
  createdAt: Date;
}

export interface RunDoc {
  _id: string;
  orgId: string;
  agentId: string;
  agentVersion: number;
  userId: string;
  conversationId: string;
  inputs: RunInput[];
  status: RunStatus;
  result: string | null;
  error: string | null;
  trigger: RunTrigger;
  sourceRunId: string | null;
  stepsCompleted: number;
  createdAt: Date;
  updatedAt: Date;
  endedAt: Date | null;
  deadlineAt: Date;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  attempts: number;
  /** Absent on runs written before lease fencing: counts as 0. */
  leaseGeneration?: number;
  keyId?: string | null;
  errorCode?: string | null;
  revision: number;
}

export interface StepDoc {
  /** `${runId}#${stepNumber}` */
  _id: string;
  runId: string;
  stepNumber: number;
  name: string | null;
  result: StepResult | null;
  explanation: string | null;
  completed: boolean;
  updatedAt: Date;
  /** Highest lease generation of the run that wrote or took over this row (the fence on MongoDB). */
  leaseGeneration?: number;
}

export interface ConversationDoc {
  _id: string;
  orgId: string;
  userId: string;
  runId: string | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
  /** Highest lease generation of the run that wrote or took over this conversation (the fence on MongoDB). */
  leaseGeneration?: number;
  summary?: { text: string; through: number; itemId: string } | null;
  contextTokens?: number | null;
  /** The response holding the conversation's turn, and until when (see ConversationRepository.claimTurn). */
  turnResponseId?: string | null;
  turnUntil?: Date | null;
}

export interface ItemDoc {
  /** `${conversationId}#${position}`: the position is unique per conversation by construction. */
  _id: string;
  conversationId: string;
  position: number;
  id: string;
  type: string;
  role: string | null;
  data: Record<string, unknown>;
  status: string;
  idempotencyKey: string | null;
  responseId: string | null;
  createdAt: Date;
}

export interface ResponseDoc {
  _id: string;
  orgId: string;
  userId: string;
  status: ResponseStatus;
  model: string;
  conversationId: string | null;
  previousResponseId: string | null;
  stored: boolean;
  body: Record<string, unknown>;
  inputItems: Record<string, unknown>[];
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date | null;
  /** Absent on responses written before leases: no lease. */
  leaseOwner?: string | null;
  leaseUntil?: Date | null;
}

export interface ResponseEventDoc {
  /** `${responseId}#${sequenceNumber}` */
  _id: string;
  responseId: string;
  sequenceNumber: number;
  event: string;
  data: Record<string, unknown>;
  createdAt: Date;
}

/** An AuditRecord as stored: its id as `_id`, its time as a Date. */
export type AuditDoc = Omit<AuditRecord, 'id' | 'at'> & { _id: string; at: Date };

export interface UsageDoc {
  at: Date;
  orgId: string;
  userId: string | null;
  keyId: string | null;
  model: string;
  promptTokens: number;
  completionTokens: number;
  requestId: string;
  cachedPromptTokens?: number;
  cost?: number;
}

/**
 * Usage summed per organization, UTC day, model, user and key (the SQL stores' usage_day_totals): `_id`
 * is the JSON text of [orgId, day, model, userId, keyId]; the fields repeat it for queries.
 */
export interface UsageDayTotalDoc {
  _id: string;
  orgId: string;
  /** YYYY-MM-DD, UTC. */
  day: string;
  model: string;
  userId: string | null;
  keyId: string | null;
  requests: number;
  promptTokens: number;
  cachedPromptTokens: number;
  completionTokens: number;
  cost: number;
}

export interface SettingDoc {
  _id: string;
  value: string;
}

export interface ToolStateDoc {
  /** JSON of [conversationId, orgId, key]: unambiguous whatever characters the ids hold. */
  _id: string;
  conversationId: string;
  orgId: string;
  key: string;
  value: string;
  updatedAt: Date;
}

/** A stored file's record; its bytes are the GridFS file `contentId` of the `file_contents` bucket. */
export interface StoredFileDoc {
  _id: string;
  orgId: string;
  userId: string | null;
  filename: string;
  purpose: string;
  bytes: number;
  mediaType: string;
  createdAt: Date;
  contentId: ObjectId;
}

export interface KnowledgeStoreDoc {
  _id: string;
  orgId: string;
  name: string;
  description: string | null;
  createdBy: string | null;
  createdAt: Date;
}

export interface KnowledgeDocumentDoc {
  _id: string;
  orgId: string;
  storeId: string;
  title: string;
  source: string | null;
  metadata: DocumentMetadata;
  text: string;
  textLength: number;
  createdAt: Date;
}

export interface DashboardDoc {
  _id: string;
  orgId: string;
  title: string;
  /**
   * The spec and data as JSON text: their keys are the caller's (a CSV header such as `$amount` or
   * `price.usd`), which MongoDB restricts in field names, and the store never queries inside them.
   */
  specJson: string;
  dataJson: string;
  version: number;
  createdBy: string | null;
  conversationId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface MigrationDoc {
  _id: number;
  name: string;
  appliedAt: Date;
}

export interface Collections {
  organizations: Collection<OrganizationDoc>;
  users: Collection<UserDoc>;
  groups: Collection<GroupDoc>;
  keys: Collection<KeyDoc>;
  consoleSessions: Collection<ConsoleSessionDoc>;
  agents: Collection<AgentDoc>;
  agentVersions: Collection<AgentVersionDoc>;
  runs: Collection<RunDoc>;
  steps: Collection<StepDoc>;
  conversations: Collection<ConversationDoc>;
  items: Collection<ItemDoc>;
  responses: Collection<ResponseDoc>;
  responseEvents: Collection<ResponseEventDoc>;
  audit: Collection<AuditDoc>;
  usage: Collection<UsageDoc>;
  usageDays: Collection<UsageDayTotalDoc>;
  settings: Collection<SettingDoc>;
  toolState: Collection<ToolStateDoc>;
  files: Collection<StoredFileDoc>;
  knowledgeStores: Collection<KnowledgeStoreDoc>;
  knowledgeDocuments: Collection<KnowledgeDocumentDoc>;
  dashboards: Collection<DashboardDoc>;
  migrations: Collection<MigrationDoc>;
}

export function collectionsOf(db: Db): Collections {
  return {
    organizations: db.collection<OrganizationDoc>('organizations'),
    users: db.collection<UserDoc>('users'),
    groups: db.collection<GroupDoc>('groups'),
    keys: db.collection<KeyDoc>('api_keys'),
    consoleSessions: db.collection<ConsoleSessionDoc>('console_sessions'),
    agents: db.collection<AgentDoc>('agents'),
    agentVersions: db.collection<AgentVersionDoc>('agent_versions'),
    runs: db.collection<RunDoc>('runs'),
    steps: db.collection<StepDoc>('step_verdicts'),
    conversations: db.collection<ConversationDoc>('conversations'),
    items: db.collection<ItemDoc>('conversation_items'),
    responses: db.collection<ResponseDoc>('responses'),
    responseEvents: db.collection<ResponseEventDoc>('response_events'),
    audit: db.collection<AuditDoc>('audit_records'),
    usage: db.collection<UsageDoc>('usage_records'),
    usageDays: db.collection<UsageDayTotalDoc>('usage_day_totals'),
    settings: db.collection<SettingDoc>('settings'),
    toolState: db.collection<ToolStateDoc>('tool_state'),
    files: db.collection<StoredFileDoc>('files'),
    knowledgeStores: db.collection<KnowledgeStoreDoc>('knowledge_stores'),
    knowledgeDocuments: db.collection<KnowledgeDocumentDoc>('knowledge_documents'),
    dashboards: db.collection<DashboardDoc>('dashboards'),
    migrations: db.collection<MigrationDoc>('schema_migrations'),
  };
}

export function date(iso: string): Date {
  return new Date(iso);
}

export function dateOrNull(iso: string | null): Date | null {
  return iso === null ? null : new Date(iso);
}

export function isoOrNull(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}

/** E11000: a unique index rejected the write. */
export function isDuplicateKey(err: unknown): err is MongoServerError {
  return err instanceof MongoServerError && err.code === 11000;
}

/** Inserts documents, ignoring the ones whose _id already exists (a retried batch is idempotent). */
export async function insertManyIgnoringDuplicates<T extends { _id: string }>(collection: Collection<T>, docs: T[]): Promise<void> {
  if (docs.length === 0) return;
  try {
    await collection.insertMany(docs as unknown as OptionalUnlessRequiredId<T>[], { ordered: false });
  } catch (err) {
    const writeErrors = (err as { writeErrors?: unknown }).writeErrors;
    const list = Array.isArray(writeErrors) ? (writeErrors as { code?: number }[]) : writeErrors ? [writeErrors as { code?: number }] : [];
    if (list.length === 0 || list.some((e) => e.code !== 11000)) throw err;
  }
}

export const ALL_PERMISSIONS: readonly Permission[] = ['view', 'edit', 'delete', 'share'];
