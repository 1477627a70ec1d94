import type { Filter, UpdateFilter } from 'mongodb';
import type { RunRepository } from '../port';
import type { ConversationRecord, RunListItem, RunPatch, RunRecord, RunStatus, StepInit, VisibleRun } from '../types';
import { date, dateOrNull, isoOrNull, type AgentDoc, type Collections, type RunDoc } from './collections';
import { conversationDoc } from './conversations-repository';
import { generationIs } from './lease-generation';
import { stepDocs } from './records-repositories';
import { agentGrantsAnyExpr, agentModelsExpr, agentModelsMatch, visibleRecordMatch } from './permissions';

export function toRun(doc: RunDoc): RunRecord {
  return {
    id: doc._id,
    orgId: doc.orgId,
    agentId: doc.agentId,
    agentVersion: doc.agentVersion,
    userId: doc.userId,
    keyId: doc.keyId ?? null,
    conversationId: doc.conversationId,
    inputs: doc.inputs,
    status: doc.status,
    result: doc.result,
    error: doc.error,
    errorCode: doc.errorCode ?? null,
    trigger: doc.trigger,
    sourceRunId: doc.sourceRunId,
    stepsCompleted: doc.stepsCompleted,
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
    endedAt: isoOrNull(doc.endedAt),
    deadlineAt: doc.deadlineAt.toISOString(),
    leaseOwner: doc.leaseOwner,
    leaseExpiresAt: isoOrNull(doc.leaseExpiresAt),
    attempts: doc.attempts,
    leaseGeneration: doc.leaseGeneration ?? 0,
    revision: doc.revision,
  };
}

function patchDoc(patch: RunPatch): Partial<RunDoc> {
  const set: Partial<RunDoc> = {};
  if (patch.status !== undefined) set.status = patch.status;
  if (patch.result !== undefined) set.result = patch.result;
  if (patch.error !== undefined) set.error = patch.error;
  if (patch.errorCode !== undefined) set.errorCode = patch.errorCode;
  if (patch.stepsCompleted !== undefined) set.stepsCompleted = patch.stepsCompleted;
  if (patch.endedAt !== undefined) set.endedAt = dateOrNull(patch.endedAt);
  if (patch.leaseOwner !== undefined) set.leaseOwner = patch.leaseOwner;
  if (patch.leaseExpiresAt !== undefined) set.leaseExpiresAt = dateOrNull(patch.leaseExpiresAt);
  if (patch.attempts !== undefined) set.attempts = patch.attempts;
  if (patch.deadlineAt !== undefined) set.deadlineAt = date(patch.deadlineAt);
  return set;
}

const RUN_STATUSES: readonly RunStatus[] = ['in_progress', 'success', 'failure', 'cancelled'];

export function mongoRuns(c: Collections): RunRepository {
  async function insertRun(run: RunRecord): Promise<void> {
    await c.runs.insertOne({
      _id: run.id,
      orgId: run.orgId,
      agentId: run.agentId,
      agentVersion: run.agentVersion,
      userId: run.userId,
      conversationId: run.conversationId,
      inputs: run.inputs,
      status: run.status,
      result: run.result,
      error: run.error,
      trigger: run.trigger,
      sourceRunId: run.sourceRunId,
      stepsCompleted: run.stepsCompleted,
      createdAt: date(run.createdAt),
      updatedAt: date(run.updatedAt),
      endedAt: dateOrNull(run.endedAt),
      deadlineAt: date(run.deadlineAt),
      leaseOwner: run.leaseOwner,
      leaseExpiresAt: dateOrNull(run.leaseExpiresAt),
      attempts: run.attempts,
      leaseGeneration: run.leaseGeneration,
      keyId: run.keyId,
      errorCode: run.errorCode,
      revision: run.revision,
    });
  }

  return {
    async create(run, parts: { conversation?: ConversationRecord; steps?: readonly StepInit[] } = {}) {
      // No transactions here: the run document is the commit point, written last. A failure before it
      // removes what this call wrote, so a failed trigger leaves nothing behind.
      const { conversation, steps } = parts;
      try {
        if (conversation) await c.conversations.insertOne(conversationDoc(conversation));
        if (steps?.length) await c.steps.insertMany(stepDocs(run.id, steps));
        await insertRun(run);
      } catch (err) {
        await Promise.all([
          conversation ? c.conversations.deleteOne({ _id: conversation.id }) : undefined,
          steps?.length ? c.steps.deleteMany({ runId: run.id }) : undefined,
        ]).catch(() => undefined);
        throw err;
      }
    },
    async get(runId) {
      const doc = await c.runs.findOne({ _id: runId });
      return doc ? toRun(doc) : null;
    },
    async getVisible(principal, runId) {
      // The agent counts whether deleted or not: a run stays readable after its agent disappears.
      const agent = { $arrayElemAt: ['$agent', 0] };
      const [doc] = await c.runs
        .aggregate<RunDoc & { agent: AgentDoc[] }>([
          { $match: { _id: runId, orgId: principal.orgId } },
          { $lookup: { from: c.agents.collectionName, localField: 'agentId', foreignField: '_id', as: 'agent' } },
          visibleRecordMatch(principal, agentGrantsAnyExpr(principal, agent)),
          ...agentModelsMatch(principal, agent),
        ])
        .toArray();
      if (!doc) return null;
      const agentDoc = doc.agent[0];
      const { agent: _joined, ...run } = doc;
      return { ...toRun(run), agentDeleted: !agentDoc || agentDoc.deletedAt !== null } satisfies VisibleRun;
    },
    async page(query) {
      const and: Filter<RunDoc>[] = [{ agentId: query.agentId }];
      if (query.after) {
        const a = date(query.after.createdAt);
        and.push({ $or: [{ createdAt: { $lt: a } }, { createdAt: a, _id: { $lt: query.after.id } }] });
      }
      if (query.startDate) and.push({ createdAt: { $gte: date(query.startDate) } });
      if (query.endDate) and.push({ createdAt: { $lte: date(query.endDate) } });
      const docs = await c.runs
        .find({ $and: and }, { projection: { _id: 1, createdAt: 1 } })
        .sort({ createdAt: -1, _id: -1 })
        .limit(query.limit + 1)
        .toArray();
      const more = docs.length > query.limit;
      const page = more ? docs.slice(0, query.limit) : docs;
      const last = page[page.length - 1];
      return { ids: page.map((d) => d._id), next: more && last ? { createdAt: last.createdAt.toISOString(), id: last._id } : null };
    },
    async listVisible(principal, query) {
      if (query.limit <= 0) return [];
      const and: Filter<RunDoc>[] = [{ orgId: principal.orgId }];
      if (query.agentId !== null) and.push({ agentId: query.agentId });
      if (query.status !== null) and.push({ status: query.status });
      if (query.createdAfter !== null) and.push({ createdAt: { $gte: date(query.createdAfter) } });
      if (query.createdBefore !== null) and.push({ createdAt: { $lte: date(query.createdBefore) } });
      if (query.after) {
        const a = date(query.after.createdAt);
        and.push({ $or: [{ createdAt: { $lt: a } }, { createdAt: a, _id: { $lt: query.after.id } }] });
      }
      const agentMatch: Filter<AgentDoc> = query.agentId !== null ? { orgId: principal.orgId, _id: query.agentId } : { orgId: principal.orgId };
      const models = agentModelsExpr(principal, '$$ROOT');
      if (models) {
        // A key with a model allow-list: runs of agents (deleted or not) within it only, whoever's.
        const allowed = await c.agents.aggregate<{ _id: string }>([{ $match: agentMatch }, { $match: { $expr: models } }, { $project: { _id: 1 } }]).toArray();
        and.push({ agentId: { $in: allowed.map((a) => a._id) } });
      }
      if (principal.role !== 'admin') {
        // A member: their own runs and the runs of agents (deleted or not) granting them any permission,
        // decided by the server (the agents' permission expression), then one indexed read of the runs.
        const granted = await c.agents
          .aggregate<{ _id: string }>([{ $match: agentMatch }, { $match: { $expr: agentGrantsAnyExpr(principal, '$$ROOT') } }, { $project: { _id: 1 } }])
          .toArray();
        and.push({ $or: [{ userId: principal.userId }, { agentId: { $in: granted.map((a) => a._id) } }] });
      }
      const docs = await c.runs.find({ $and: and }).sort({ createdAt: -1, _id: -1 }).limit(query.limit).toArray();
      const agentIds = [...new Set(docs.map((d) => d.agentId))];
      const agents = new Map(
        (await c.agents.find({ _id: { $in: agentIds } }, { projection: { _id: 1, deletedAt: 1, 'definition.name': 1 } }).toArray()).map((a) => [a._id, a]),
      );
      return docs.map((doc): RunListItem => {
        const agent = agents.get(doc.agentId);
        const live = agent !== undefined && agent.deletedAt === null;
        return { ...toRun(doc), agentDeleted: !live, agentName: live ? agent.definition.name : null };
      });
    },
    async latestCreatedAt(agentId) {
      const [doc] = await c.runs
        .find({ agentId }, { projection: { createdAt: 1 } })
        .sort({ createdAt: -1, _id: -1 })
        .limit(1)
        .toArray();
      return doc ? doc.createdAt.toISOString() : null;
    },
    async update(runId, patch, guard) {
      const filter: Filter<RunDoc> = { _id: runId };
      if (guard?.whenStatus) filter.status = { $in: [...guard.whenStatus] };
      if (guard?.whenRevision !== undefined) filter.revision = guard.whenRevision;
      if (guard?.whenGeneration !== undefined) filter.leaseGeneration = generationIs(guard.whenGeneration);
      // One document write: MongoDB applies the filter and the update atomically, so exactly one of
      // several updaters holding the same revision succeeds.
      const update: UpdateFilter<RunDoc> = { $set: { ...patchDoc(patch), updatedAt: new Date() }, $inc: { revision: 1 } };
      const doc = await c.runs.findOneAndUpdate(filter, update, { returnDocument: 'after' });
      return doc ? toRun(doc) : null;
    },
    async acquireLease(runId, owner, until, now) {
      const at = date(now);
      const doc = await c.runs.findOneAndUpdate(
        {
          _id: runId,
          status: 'in_progress',
          $or: [{ leaseOwner: null }, { leaseExpiresAt: null }, { leaseExpiresAt: { $lte: at } }, { leaseOwner: owner }],
        },
        { $set: { leaseOwner: owner, leaseExpiresAt: date(until), updatedAt: at }, $inc: { attempts: 1, revision: 1, leaseGeneration: 1 } },
        { returnDocument: 'after' },
      );
      if (!doc) return null;
      // The fence on MongoDB lives in each document a run's execution writes (single-document atomicity,
      // no transactions): the takeover raises it in the conversation and step rows before the new holder
      // reads or writes anything, so the old holder's writes, which require a generation no older than
      // the document's, fail from here on.
      const generation = doc.leaseGeneration ?? 0;
      await c.conversations.updateOne({ _id: doc.conversationId }, { $max: { leaseGeneration: generation } });
      await c.steps.updateMany({ runId }, { $max: { leaseGeneration: generation } });
      return toRun(doc);
    },
    async listOrphaned(now, limit) {
      if (limit <= 0) return [];
      const at = date(now);
      const docs = await c.runs
        .find({ status: 'in_progress', $or: [{ leaseOwner: null }, { leaseExpiresAt: null }, { leaseExpiresAt: { $lte: at } }] })
        .sort({ createdAt: 1, _id: 1 })
        .limit(limit)
        .toArray();
      return docs.map(toRun);
    },
    async listOverdue(now, limit) {
      if (limit <= 0) return [];
      const docs = await c.runs
        .find({ status: 'in_progress', deadlineAt: { $lte: date(now) } })
        .sort({ deadlineAt: 1, _id: 1 })
        .limit(limit)
        .toArray();
      return docs.map(toRun);
    },
    async countByStatus() {
      const rows = await c.runs.aggregate<{ _id: RunStatus; n: number }>([{ $group: { _id: '$status', n: { $sum: 1 } } }]).toArray();
      const counts = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
      for (const row of rows) if (row._id in counts) counts[row._id] = row.n;
      return counts;
    },
  };
}
