// The Store port over MongoDB with the official driver. No multi-document transactions (they need a
// replica set): every concurrency rule rests on single-document atomicity and unique indexes.
import { MongoClient } from 'mongodb';
import type { PrunedConversation, Store } from '../port';
import { mongoAgents } from './agents-repository';
import { mongoDashboards } from './dashboards-repository';
import { mongoKnowledge } from './knowledge-repository';
import { collectionsOf, date, type Collections } from './collections';
import { mongoConsoleSessions } from './console-sessions-repository';
import { mongoConversations } from './conversations-repository';
import { mongoFiles } from './files-repository';
import { composedTurns } from '../composed-turns';
import { isMongoRefusal } from './refusal';
import { mongoGroups, mongoKeys, mongoOrganizations, mongoSettings, mongoUsers } from './identity-repositories';
import { addDayTotalsOf, mongoAudit, mongoResponses, mongoSteps, mongoUsage } from './records-repositories';
import { mongoRuns } from './runs-repository';
import { mongoToolState, pruneToolState } from './tool-state-repository';

/** Bumped when the index set below changes; recorded in schema_migrations like the SQL stores. */
const SCHEMA_VERSION = 9;
const SCHEMA_NAMES: Record<number, string> = {
  1: 'initial indexes',
  2: 'response leases and expiry index',
  3: 'stored files',
  4: 'knowledge stores and dashboards',
  5: 'hosted tool state per conversation',
  6: 'console reads: list indexes',
  7: 'usage grouped per user and key',
  8: 'console sessions',
  9: 'usage totals per UTC day',
};
/** Documents deleted per prune round trip. */
const PRUNE_BATCH = 1000;

async function createIndexes(c: Collections): Promise<void> {
  // createIndex is idempotent for an identical spec, so concurrent starts converge on one index set.
  await Promise.all([
    c.users.createIndex({ orgId: 1, _id: 1 }),
    c.groups.createIndex({ orgId: 1, members: 1 }),
    c.keys.createIndex({ hash: 1 }, { unique: true }),
    c.keys.createIndex({ orgId: 1, createdAt: 1 }),
    c.keys.createIndex({ revokedAt: 1 }),
    // The console's lists (version 6): keyset pages whose leading fields are the filter.
    c.keys.createIndex({ orgId: 1, userId: 1, createdAt: 1, _id: 1 }),
    c.runs.createIndex({ orgId: 1, createdAt: -1, _id: -1 }),
    c.runs.createIndex({ orgId: 1, status: 1, createdAt: -1, _id: -1 }),
    c.runs.createIndex({ orgId: 1, userId: 1, createdAt: -1, _id: -1 }),
    c.responses.createIndex({ orgId: 1, createdAt: -1, _id: -1 }, { partialFilterExpression: { stored: true }, name: 'responses_org_created' }),
    c.responses.createIndex({ orgId: 1, userId: 1, createdAt: -1, _id: -1 }, { partialFilterExpression: { stored: true }, name: 'responses_org_user_created' }),
    c.audit.createIndex({ orgId: 1, userId: 1, at: 1, _id: 1 }),
    c.audit.createIndex({ orgId: 1, keyId: 1, at: 1, _id: 1 }),
    c.audit.createIndex({ orgId: 1, operationId: 1, at: 1, _id: 1 }),
    c.audit.createIndex({ orgId: 1, model: 1, at: 1, _id: 1 }, { partialFilterExpression: { model: { $type: 'string' } }, name: 'audit_org_model_at' }),
    c.audit.createIndex({ orgId: 1, status: 1, at: 1, _id: 1 }),
    // Console sessions (see the SQL schema's migration 15): a token or ticket digest names one session
    // (sparse: the field is absent until set or once redeemed), the revocation poll and the prune.
    c.consoleSessions.createIndex({ tokenHash: 1 }, { unique: true, sparse: true }),
    c.consoleSessions.createIndex({ ticketHash: 1 }, { unique: true, sparse: true }),
    c.consoleSessions.createIndex({ revokedAt: 1 }),
    c.consoleSessions.createIndex({ expiresAt: 1 }),
    c.agents.createIndex({ orgId: 1, deletedAt: 1, createdAt: -1, _id: -1 }),
    c.runs.createIndex({ agentId: 1, createdAt: -1, _id: -1 }),
    c.runs.createIndex({ status: 1, createdAt: 1, _id: 1 }),
    c.runs.createIndex({ status: 1, deadlineAt: 1 }),
    c.runs.createIndex({ createdAt: 1 }),
    c.steps.createIndex({ runId: 1, stepNumber: 1 }),
    c.conversations.createIndex({ runId: 1 }),
    c.items.createIndex({ conversationId: 1, position: 1 }, { unique: true }),
    c.items.createIndex({ conversationId: 1, id: 1 }),
    c.items.createIndex(
      { conversationId: 1, idempotencyKey: 1 },
      { unique: true, partialFilterExpression: { idempotencyKey: { $type: 'string' } }, name: 'conversation_idempotency' },
    ),
    // The lapsed-lease sweep and the expiry prune (see the SQL schema's migration 8); partial, so each
    // holds only the documents it serves.
    c.responses.createIndex({ leaseUntil: 1 }, { partialFilterExpression: { status: 'in_progress', leaseUntil: { $type: 'date' } }, name: 'responses_lapsed' }),
    c.responses.createIndex({ expiresAt: 1 }, { partialFilterExpression: { expiresAt: { $type: 'date' } }, name: 'responses_expiry' }),
    c.responseEvents.createIndex({ responseId: 1, sequenceNumber: 1 }),
    c.audit.createIndex({ orgId: 1, at: 1, _id: 1 }),
    c.audit.createIndex({ at: 1 }),
    c.usage.createIndex({ orgId: 1, at: 1 }),
    // GET /v1/usage of one member (members see only their own) and user budgets counted by the store.
    c.usage.createIndex({ orgId: 1, userId: 1, at: 1 }),
    c.usage.createIndex({ at: 1 }),
    // The usage day totals (see the SQL schema's migration 17) of an organization's days, and a member's.
    c.usageDays.createIndex({ orgId: 1, day: 1 }),
    c.usageDays.createIndex({ orgId: 1, userId: 1, day: 1 }),
    // A conversation's tool state is forgotten by conversation; the retention prune reads updatedAt.
    c.toolState.createIndex({ conversationId: 1 }),
    c.toolState.createIndex({ updatedAt: 1 }),
    // Listing an organization's files in creation order (keyset on createdAt, _id).
    c.files.createIndex({ orgId: 1, createdAt: 1, _id: 1 }),
    // Knowledge stores (see the SQL schema's migration 12): names unique per organization, documents
    // listed per store in insertion order, and the one text index a collection may have, title
    // weighted above text, English stemming like the SQL stores' tsvector.
    c.knowledgeStores.createIndex({ orgId: 1, name: 1 }, { unique: true }),
    c.knowledgeDocuments.createIndex({ storeId: 1, createdAt: 1, _id: 1 }),
    c.knowledgeDocuments.createIndex(
      { title: 'text', text: 'text' },
      { weights: { title: 4, text: 1 }, default_language: 'english', name: 'knowledge_documents_text' },
    ),
    c.dashboards.createIndex({ orgId: 1, updatedAt: -1, _id: 1 }),
  ]);
  // Read by nothing since responses expire by expiresAt (absent on a new database: nothing to drop).
  await c.responses.dropIndex('createdAt_1').catch(() => undefined);
  // Version 9: the day totals filled from the usage records written before (once: a database that has
  // recorded it keeps them with every write). Two processes starting at once on such a database would
  // both fill them; MongoDB has no lock the SQL stores' advisory lock could be.
  if ((await c.migrations.countDocuments({ _id: 9 })) === 0 && (await c.usageDays.estimatedDocumentCount()) === 0) {
    await addDayTotalsOf(c, null, null);
  }
  await c.migrations
    .updateOne({ _id: SCHEMA_VERSION }, { $setOnInsert: { name: SCHEMA_NAMES[SCHEMA_VERSION] ?? '', appliedAt: new Date() } }, { upsert: true })
    .catch((err: unknown) => {
      // Two processes recording the same version at once: the other one won, which is fine.
      if ((err as { code?: number }).code !== 11000) throw err;
    });
}

async function pruneRuns(c: Collections, before: Date, gone: PrunedConversation[]): Promise<number> {
  let total = 0;
  for (;;) {
    // Finished runs only: an in-progress run belongs to a worker. A run's conversation goes with it.
    const batch = await c.runs
      .find({ createdAt: { $lt: before }, status: { $ne: 'in_progress' } }, { projection: { _id: 1, conversationId: 1 } })
      .limit(PRUNE_BATCH)
      .toArray();
    if (batch.length === 0) return total;
    const ids = batch.map((r) => r._id);
    const found = await c.conversations
      .find({ _id: { $in: batch.map((r) => r.conversationId) }, runId: { $in: ids } }, { projection: { _id: 1, orgId: 1 } })
      .toArray();
    const conversations = found.map((d) => d._id);
    await c.items.deleteMany({ conversationId: { $in: conversations } });
    await c.conversations.deleteMany({ _id: { $in: conversations } });
    await c.toolState.deleteMany({ conversationId: { $in: conversations } });
    gone.push(...found.map((d) => ({ orgId: d.orgId, id: d._id })));
    await c.steps.deleteMany({ runId: { $in: ids } });
    total += (await c.runs.deleteMany({ _id: { $in: ids } })).deletedCount;
  }
}

/** Responses conversations past retention: nothing added since `before`, no turn in progress. */
async function pruneIdleConversations(c: Collections, before: Date, gone: PrunedConversation[]): Promise<number> {
  let total = 0;
  for (;;) {
    const candidates = await c.conversations
      .find(
        { runId: null, createdAt: { $lt: before }, $or: [{ turnResponseId: null }, { turnResponseId: { $exists: false } }] },
        { projection: { _id: 1, orgId: 1 } },
      )
      .limit(PRUNE_BATCH)
      .toArray();
    if (candidates.length === 0) return total;
    const recent = new Set(
      (await c.items.distinct('conversationId', { conversationId: { $in: candidates.map((d) => d._id) }, createdAt: { $gte: before } })) as string[],
    );
    const idleDocs = candidates.filter((d) => !recent.has(d._id));
    const idle = idleDocs.map((d) => d._id);
    if (idle.length === 0) return total;
    await c.items.deleteMany({ conversationId: { $in: idle } });
    total += (await c.conversations.deleteMany({ _id: { $in: idle } })).deletedCount;
    await c.toolState.deleteMany({ conversationId: { $in: idle } });
    gone.push(...idleDocs.map((d) => ({ orgId: d.orgId, id: d._id })));
    if (candidates.length < PRUNE_BATCH) return total;
  }
}

export interface MongoStoreOptions {
  url: string;
  /** How long to look for a reachable server before an operation fails. */
  serverSelectionTimeoutMS?: number;
}

/** Connects (failing when no server answers) and returns the store; call migrate() before use. */
export async function openMongoStore(options: MongoStoreOptions): Promise<Store> {
  const explicitTimeout = /[?&]serverSelectionTimeoutMS=/i.test(options.url);
  const client = new MongoClient(options.url, explicitTimeout ? {} : { serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 10_000 });
  try {
    await client.connect();
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err;
  }
  // The database named in the URL path (the driver's default when absent is "test"); an explicit name is expected.
  const db = client.db();
  const c = collectionsOf(db);
  let closed: Promise<void> | null = null;
  const conversations = mongoConversations(c);
  const responses = mongoResponses(c);
  return {
    driver: 'mongodb',
    organizations: mongoOrganizations(c),
    users: mongoUsers(c),
    groups: mongoGroups(c),
    keys: mongoKeys(c),
    consoleSessions: mongoConsoleSessions(c),
    agents: mongoAgents(c),
    runs: mongoRuns(c),
    steps: mongoSteps(c),
    conversations,
    responses,
    turns: composedTurns(conversations, responses, isMongoRefusal),
    audit: mongoAudit(c),
    usage: mongoUsage(c),
    settings: mongoSettings(c),
    toolState: mongoToolState(c),
    files: mongoFiles(db, c),
    knowledge: mongoKnowledge(c),
    dashboards: mongoDashboards(c),
    async migrate() {
      await createIndexes(c);
    },
    async ping() {
      await db.command({ ping: 1 });
    },
    async prune(before) {
      const cutoff = date(before);
      const gone: PrunedConversation[] = [];
      const runs = await pruneRuns(c, cutoff, gone);
      await c.audit.deleteMany({ at: { $lt: cutoff } });
      await c.usage.deleteMany({ at: { $lt: cutoff } });
      // The day totals of the days before the cutoff's go; the cutoff's own day is summed again from the
      // records left of it.
      const cutoffDay = cutoff.toISOString().slice(0, 10);
      await c.usageDays.deleteMany({ day: { $lte: cutoffDay } });
      await addDayTotalsOf(c, cutoff, new Date(Date.parse(cutoffDay) + 86_400_000));
      const conversations = await pruneIdleConversations(c, cutoff, gone);
      await pruneToolState(c, cutoff);
      return { runs, conversations, gone };
    },
    close() {
      closed ??= client.close();
      return closed;
    },
  };
}
