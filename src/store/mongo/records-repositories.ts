import type { Document, Filter } from 'mongodb';
import type { AuditRepository, ResponseRepository, StepVerdictRepository, UsageRepository } from '../port';
import {
  LeaseLostError,
  type AuditRecord,
  type ResponseRecord,
  type ResponseSummary,
  type StepInit,
  type UsageGroup,
  type UsageGroupRow,
  type UsageQuery,
  type UsageRecord,
} from '../types';
import {
  date,
  dateOrNull,
  insertManyIgnoringDuplicates,
  isoOrNull,
  type AuditDoc,
  type Collections,
  type ResponseDoc,
  type StepDoc,
  type UsageDayTotalDoc,
} from './collections';

function toResponse(doc: ResponseDoc): ResponseRecord {
  return {
    id: doc._id,
    orgId: doc.orgId,
    userId: doc.userId,
    status: doc.status,
    model: doc.model,
    conversationId: doc.conversationId,
    previousResponseId: doc.previousResponseId,
    stored: doc.stored,
    body: doc.body,
    inputItems: doc.inputItems,
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
    expiresAt: isoOrNull(doc.expiresAt),
    lease: doc.leaseOwner && doc.leaseUntil ? { owner: doc.leaseOwner, until: doc.leaseUntil.toISOString() } : null,
  };
}

function toAudit(doc: AuditDoc): AuditRecord {
  const { _id, at, ...fields } = doc;
  return { id: _id, at: at.toISOString(), ...fields };
}

/** A run's new step rows (result null, completed false). */
export function stepDocs(runId: string, steps: readonly StepInit[]): StepDoc[] {
  const now = new Date();
  return steps.map((step) => ({
    _id: `${runId}#${step.stepNumber}`,
    runId,
    stepNumber: step.stepNumber,
    name: step.name,
    result: null,
    explanation: null,
    completed: false,
    updatedAt: now,
  }));
}

export function mongoSteps(c: Collections): StepVerdictRepository {
  return {
    async init(runId, steps) {
      if (steps.length === 0) return;
      const now = new Date();
      await c.steps.bulkWrite(
        steps.map((step) => ({
          updateOne: {
            filter: { _id: `${runId}#${step.stepNumber}` },
            update: {
              $setOnInsert: { runId, stepNumber: step.stepNumber, name: step.name, result: null, explanation: null, completed: false, updatedAt: now },
            },
            upsert: true,
          },
        })),
        { ordered: false },
      );
    },
    async update(runId, stepNumber, patch, fence) {
      const set: Partial<StepDoc> = { updatedAt: new Date() };
      if (patch.result !== undefined) set.result = patch.result;
      if (patch.explanation !== undefined) set.explanation = patch.explanation;
      if (patch.completed !== undefined) set.completed = patch.completed;
      if (!fence) {
        await c.steps.updateOne({ _id: `${runId}#${stepNumber}` }, { $set: set });
        return;
      }
      // The step row's own fence (raised by every takeover: see acquireLease) no newer than ours, checked
      // and written in one document update.
      const updated = await c.steps.updateOne(
        { _id: `${runId}#${stepNumber}`, leaseGeneration: { $not: { $gt: fence.generation } } },
        { $set: set, $max: { leaseGeneration: fence.generation } },
      );
      if (updated.matchedCount === 0) throw new LeaseLostError(runId);
    },
    async list(runId) {
      const docs = await c.steps.find({ runId }).sort({ stepNumber: 1 }).toArray();
      return docs.map((d) => ({
        runId: d.runId,
        stepNumber: d.stepNumber,
        name: d.name,
        result: d.result,
        explanation: d.explanation,
        completed: d.completed,
        updatedAt: d.updatedAt.toISOString(),
      }));
    },
  };
}

export function mongoResponses(c: Collections): ResponseRepository {
  return {
    async create(r) {
      await c.responses.insertOne({
        _id: r.id,
        orgId: r.orgId,
        userId: r.userId,
        status: r.status,
        model: r.model,
        conversationId: r.conversationId,
        previousResponseId: r.previousResponseId,
        stored: r.stored,
        body: r.body,
        inputItems: r.inputItems,
        createdAt: date(r.createdAt),
        updatedAt: date(r.updatedAt),
        expiresAt: dateOrNull(r.expiresAt),
        leaseOwner: r.lease?.owner ?? null,
        leaseUntil: r.lease ? date(r.lease.until) : null,
      });
    },
    async get(id) {
      const doc = await c.responses.findOne({ _id: id });
      return doc ? toResponse(doc) : null;
    },
    async getVisible(principal, id, now) {
      const doc = await c.responses.findOne({
        _id: id,
        orgId: principal.orgId,
        stored: true,
        $or: [{ expiresAt: null }, { expiresAt: { $gt: date(now) } }],
      });
      return doc ? toResponse(doc) : null;
    },
    async listVisible(principal, query) {
      if (query.limit <= 0) return [];
      const and: Filter<ResponseDoc>[] = [{ orgId: principal.orgId, stored: true }, { $or: [{ expiresAt: null }, { expiresAt: { $gt: date(query.now) } }] }];
      if (principal.role !== 'admin') and.push({ userId: principal.userId });
      if (query.after) {
        const a = date(query.after.createdAt);
        and.push({ $or: [{ createdAt: { $lt: a } }, { createdAt: a, _id: { $lt: query.after.id } }] });
      }
      const docs = await c.responses
        .find({ $and: and }, { projection: { _id: 1, userId: 1, status: 1, model: 1, conversationId: 1, previousResponseId: 1, createdAt: 1 } })
        .sort({ createdAt: -1, _id: -1 })
        .limit(query.limit)
        .toArray();
      return docs.map((doc): ResponseSummary => ({
        id: doc._id,
        userId: doc.userId,
        status: doc.status,
        model: doc.model,
        conversationId: doc.conversationId,
        previousResponseId: doc.previousResponseId,
        createdAt: doc.createdAt.toISOString(),
      }));
    },
    async update(id, patch) {
      const set: Partial<ResponseDoc> = { updatedAt: new Date() };
      if (patch.status !== undefined) set.status = patch.status;
      if (patch.body !== undefined) set.body = patch.body;
      if (patch.conversationId !== undefined) set.conversationId = patch.conversationId;
      if (patch.expiresAt !== undefined) set.expiresAt = dateOrNull(patch.expiresAt);
      if (patch.inputItems !== undefined) set.inputItems = patch.inputItems;
      await c.responses.updateOne({ _id: id }, { $set: set });
    },
    async finish(id, outcome, guard) {
      // One document, one atomic compare-and-set (see the port).
      const filter: Filter<ResponseDoc> = { _id: id, status: guard.whenStatus };
      if (guard.lapsedBefore !== undefined) filter.leaseUntil = { $type: 'date', $lt: date(guard.lapsedBefore) };
      const doc = await c.responses.findOneAndUpdate(
        filter,
        { $set: { status: outcome.status, body: outcome.body, updatedAt: new Date(), leaseOwner: null, leaseUntil: null } },
        { returnDocument: 'after' },
      );
      return doc ? toResponse(doc) : null;
    },
    async renewLeases(ids, owner, until) {
      if (ids.length === 0) return [];
      const filter: Filter<ResponseDoc> = { _id: { $in: [...ids] }, leaseOwner: owner, status: 'in_progress' };
      // No multi-document RETURNING: the ids are read back after the update. One that finished in
      // between is left out (it is not this owner's to write any more either way).
      await c.responses.updateMany(filter, { $set: { leaseUntil: date(until) } });
      const held = await c.responses.find({ ...filter, leaseUntil: date(until) }, { projection: { _id: 1 } }).toArray();
      return held.map((d) => d._id);
    },
    async listLapsed(now, limit) {
      if (limit <= 0) return [];
      const docs = await c.responses
        .find({ status: 'in_progress', leaseUntil: { $type: 'date', $lt: date(now) } })
        .sort({ leaseUntil: 1, _id: 1 })
        .limit(limit)
        .toArray();
      return docs.map(toResponse);
    },
    async lastSequenceNumber(responseId) {
      const [last] = await c.responseEvents
        .find({ responseId }, { projection: { sequenceNumber: 1 } })
        .sort({ sequenceNumber: -1 })
        .limit(1)
        .toArray();
      return last?.sequenceNumber ?? -1;
    },
    async prune(now, limit) {
      if (limit <= 0) return 0;
      const ids = (
        await c.responses
          .find({ expiresAt: { $type: 'date', $lte: date(now) } }, { projection: { _id: 1 } })
          .sort({ expiresAt: 1 })
          .limit(limit)
          .toArray()
      ).map((d) => d._id);
      if (ids.length === 0) return 0;
      // Events first: a prune stopped half way leaves a response without events (replayed from its
      // body), never events without their response.
      await c.responseEvents.deleteMany({ responseId: { $in: ids } });
      return (await c.responses.deleteMany({ _id: { $in: ids } })).deletedCount;
    },
    async appendEvents(events) {
      // A re-sent event (same response and sequence number) is kept once.
      await insertManyIgnoringDuplicates(
        c.responseEvents,
        events.map((e) => ({
          _id: `${e.responseId}#${e.sequenceNumber}`,
          responseId: e.responseId,
          sequenceNumber: e.sequenceNumber,
          event: e.event,
          // A document, not text: an event written as its JSON text is parsed once here.
          data: e.json !== undefined ? (JSON.parse(e.json) as Record<string, unknown>) : (e.data ?? {}),
          createdAt: date(e.createdAt),
        })),
      );
    },
    async listEvents(responseId, after, limit) {
      if (limit !== undefined && limit <= 0) return [];
      const cursor = c.responseEvents.find({ responseId, sequenceNumber: { $gt: after } }).sort({ sequenceNumber: 1 });
      if (limit !== undefined) cursor.limit(limit);
      const docs = await cursor.toArray();
      return docs.map((d) => ({
        responseId: d.responseId,
        sequenceNumber: d.sequenceNumber,
        event: d.event,
        data: d.data,
        createdAt: d.createdAt.toISOString(),
      }));
    },
  };
}

export function mongoAudit(c: Collections): AuditRepository {
  const repository: AuditRepository = {
    async insertMany(records, usage = []) {
      // Ids are unique: a batch retried after a failed flush does not duplicate records.
      await insertManyIgnoringDuplicates(
        c.audit,
        records.map(({ id, at, ...fields }) => ({ _id: id, at: date(at), ...fields })),
      );
      await insertUsageDocs(c, usage);
    },
    async insertJson(batch) {
      // MongoDB takes documents: the texts are parsed here (the SQL stores pass them through). A call's
      // own usage carried in its audit record becomes a usage document like the others.
      const records = JSON.parse(batch.audit.toString('utf8')) as AuditRecord[];
      const usage = JSON.parse(batch.usage.toString('utf8')) as UsageRecord[];
      await repository.insertMany(records, [...usageCarriedBy(records), ...usage]);
    },
    async list(query) {
      if (query.limit <= 0) return [];
      const and: Filter<AuditDoc>[] = [{ orgId: query.orgId }];
      if (query.since) and.push({ at: { $gte: date(query.since) } });
      if (query.until) and.push({ at: { $lte: date(query.until) } });
      if (query.userId) and.push({ userId: query.userId });
      if (query.keyId) and.push({ keyId: query.keyId });
      if (query.operationId) and.push({ operationId: query.operationId });
      if (query.model) and.push({ model: query.model });
      if (query.status) and.push({ status: { $gte: query.status.from, $lte: query.status.to } });
      const desc = query.order === 'desc';
      if (query.after) {
        const a = date(query.after.at);
        const past = desc ? '$lt' : '$gt';
        and.push({ $or: [{ at: { [past]: a } }, { at: a, _id: { [past]: query.after.id } }] });
      }
      const direction = desc ? -1 : 1;
      const docs = await c.audit.find({ $and: and }).sort({ at: direction, _id: direction }).limit(query.limit).toArray();
      return docs.map(toAudit);
    },
  };
  return repository;
}

/** The usage records carried by audit records (those with token counts), in the records' order. */
export function usageCarriedBy(records: readonly AuditRecord[]): UsageRecord[] {
  const usage: UsageRecord[] = [];
  for (const r of records) {
    if (r.model === undefined || r.promptTokens === undefined || r.orgId === null) continue;
    usage.push({
      at: r.at,
      orgId: r.orgId,
      userId: r.userId,
      keyId: r.keyId,
      model: r.model,
      promptTokens: r.promptTokens ?? 0,
      completionTokens: r.completionTokens ?? 0,
      requestId: r.requestId,
      ...(r.cachedPromptTokens !== undefined ? { cachedPromptTokens: r.cachedPromptTokens } : {}),
      ...(r.cost !== undefined ? { cost: r.cost } : {}),
    });
  }
  return usage;
}

async function insertUsageDocs(c: Collections, records: readonly UsageRecord[]): Promise<void> {
  if (records.length === 0) return;
  await c.usage.insertMany(
    records.map((r) => ({
      at: date(r.at),
      orgId: r.orgId,
      userId: r.userId,
      keyId: r.keyId,
      model: r.model,
      promptTokens: r.promptTokens,
      completionTokens: r.completionTokens,
      requestId: r.requestId,
      ...(r.cachedPromptTokens !== undefined ? { cachedPromptTokens: r.cachedPromptTokens } : {}),
      ...(typeof r.cost === 'number' ? { cost: r.cost } : {}),
    })),
  );
  // No multi-document transactions here: the day totals follow the records they sum, one write per
  // (organization, day, model, user, key) of the batch. A process dying between the two leaves the
  // totals short of that batch.
  await addDayTotals(c, sumDays(records.map((r) => ({ ...r, at: date(r.at) }))));
}

interface Call {
  at: Date;
  orgId: string;
  userId: string | null;
  keyId: string | null;
  model: string;
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens?: number | undefined;
  cost?: number | null | undefined;
}

const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/** Calls summed per organization, UTC day, model, user and key. */
export function sumDays(calls: readonly Call[]): UsageDayTotalDoc[] {
  const groups = new Map<string, UsageDayTotalDoc>();
  for (const r of calls) {
    const day = utcDay(r.at);
    const id = JSON.stringify([r.orgId, day, r.model, r.userId, r.keyId]);
    let group = groups.get(id);
    if (!group) {
      group = {
        _id: id,
        orgId: r.orgId,
        day,
        model: r.model,
        userId: r.userId,
        keyId: r.keyId,
        requests: 0,
        promptTokens: 0,
        cachedPromptTokens: 0,
        completionTokens: 0,
        cost: 0,
      };
      groups.set(id, group);
    }
    group.requests += 1;
    group.promptTokens += r.promptTokens;
    group.cachedPromptTokens += r.cachedPromptTokens ?? 0;
    group.completionTokens += r.completionTokens;
    group.cost += typeof r.cost === 'number' ? r.cost : 0;
  }
  return [...groups.values()];
}

/** Adds summed calls to the day totals: one upsert with $inc per group. */
export async function addDayTotals(c: Collections, groups: readonly UsageDayTotalDoc[]): Promise<void> {
  if (groups.length === 0) return;
  await c.usageDays.bulkWrite(
    groups.map(({ _id, orgId, day, model, userId, keyId, requests, promptTokens, cachedPromptTokens, completionTokens, cost }) => ({
      updateOne: {
        filter: { _id },
        update: { $setOnInsert: { orgId, day, model, userId, keyId }, $inc: { requests, promptTokens, cachedPromptTokens, completionTokens, cost } },
        upsert: true,
      },
    })),
    { ordered: false },
  );
}

/** Sums the usage records of [from, to) per day into the day totals (the schema version's backfill, the prune's cutoff day). */
export async function addDayTotalsOf(c: Collections, from: Date | null, to: Date | null): Promise<void> {
  const at: Document = {};
  if (from) at['$gte'] = from;
  if (to) at['$lt'] = to;
  const cursor = c.usage.find(from || to ? { at } : {}, {
    projection: { _id: 0, at: 1, orgId: 1, userId: 1, keyId: 1, model: 1, promptTokens: 1, completionTokens: 1, cachedPromptTokens: 1, cost: 1 },
  });
  let batch: Call[] = [];
  for await (const doc of cursor) {
    batch.push(doc);
    if (batch.length >= 10_000) {
      await addDayTotals(c, sumDays(batch));
      batch = [];
    }
  }
  await addDayTotals(c, sumDays(batch));
}

/** Each group's value in the aggregation's group key (days are UTC; see CALL_FIELDS). */
const GROUP_KEYS: Record<UsageGroup, unknown> = {
  day: '$day',
  month: { $substrBytes: ['$day', 0, 7] },
  model: '$model',
  user: '$userId',
  key: '$keyId',
};

/** A raw usage record as a call of the day totals' shape. */
const CALL_FIELDS: Document = {
  _id: 0,
  day: { $dateToString: { format: '%Y-%m-%d', date: '$at', timezone: 'UTC' } },
  model: 1,
  userId: 1,
  keyId: 1,
  requests: { $literal: 1 },
  promptTokens: { $ifNull: ['$promptTokens', 0] },
  cachedPromptTokens: { $ifNull: ['$cachedPromptTokens', 0] },
  completionTokens: { $ifNull: ['$completionTokens', 0] },
  cost: { $ifNull: ['$cost', 0] },
};
const TOTAL_FIELDS: Document = {
  _id: 0,
  day: 1,
  model: 1,
  userId: 1,
  keyId: 1,
  requests: 1,
  promptTokens: 1,
  cachedPromptTokens: 1,
  completionTokens: 1,
  cost: 1,
};

const DAY_MS = 86_400_000;

/**
 * A pipeline's source of calls: the whole UTC days of [since, until) from the day totals, the partial
 * days around them from the raw records (all of it raw when the window holds no whole day). Run on
 * the collection `collection` names.
 */
function callsOf(c: Collections, filter: Document, since: Date, until: Date | null): { collection: 'usage' | 'usageDays'; stages: Document[] } {
  const from = Math.ceil(since.getTime() / DAY_MS) * DAY_MS;
  const to = until === null ? Infinity : Math.floor(until.getTime() / DAY_MS) * DAY_MS;
  const raw = (lo: Date, hi: Date | null): Document[] => [{ $match: { ...filter, at: hi ? { $gte: lo, $lt: hi } : { $gte: lo } } }, { $project: CALL_FIELDS }];
  if (!(from < to)) return { collection: 'usage', stages: raw(since, until) };
  const day: Document = { $gte: utcDay(new Date(from)) };
  if (to !== Infinity) day['$lt'] = utcDay(new Date(to));
  const stages: Document[] = [
    { $match: { ...filter, day } },
    { $project: TOTAL_FIELDS },
    { $unionWith: { coll: c.usage.collectionName, pipeline: raw(since, new Date(from)) } },
  ];
  if (to !== Infinity) stages.push({ $unionWith: { coll: c.usage.collectionName, pipeline: raw(new Date(to), until) } });
  return { collection: 'usageDays', stages };
}

const GROUP_FIELDS: Record<UsageGroup, 'day' | 'month' | 'model' | 'userId' | 'keyId'> = {
  day: 'day',
  month: 'month',
  model: 'model',
  user: 'userId',
  key: 'keyId',
};

const sumOf = (field: string): Document => ({ $sum: `$${field}` });
const tokensOf = { $add: ['$promptTokens', '$completionTokens'] };
const sumWhen = (condition: Document, value: unknown): Document => ({ $sum: { $cond: [condition, value, 0] } });

export function mongoUsage(c: Collections): UsageRepository {
  return {
    insertMany: (records) => insertUsageDocs(c, records),
    async totals(orgId, since) {
      const match: Filter<{ orgId: string; at: Date }> = since ? { orgId, at: { $gte: date(since) } } : { orgId };
      const rows = await c.usage
        .aggregate<{ _id: string; requests: number; promptTokens: number; completionTokens: number }>([
          { $match: match },
          { $group: { _id: '$model', requests: { $sum: 1 }, promptTokens: { $sum: '$promptTokens' }, completionTokens: { $sum: '$completionTokens' } } },
          { $sort: { _id: 1 } },
        ])
        .toArray();
      return rows.map((r) => ({ model: r._id, requests: r.requests, promptTokens: r.promptTokens, completionTokens: r.completionTokens }));
    },
    async query(query: UsageQuery) {
      const filter: Document = { orgId: query.orgId };
      if (query.userId !== undefined) filter['userId'] = query.userId;
      if (query.keyId !== undefined) filter['keyId'] = query.keyId;
      if (query.model !== undefined) filter['model'] = query.model;
      const calls = callsOf(c, filter, date(query.since), date(query.until));
      const key = Object.fromEntries(query.groupBy.map((g) => [GROUP_FIELDS[g], GROUP_KEYS[g]]));
      const sort = Object.fromEntries(query.groupBy.map((g) => [`_id.${GROUP_FIELDS[g]}`, 1 as const]));
      const pipeline: Document[] = [
        ...calls.stages,
        {
          $group: {
            _id: key,
            requests: sumOf('requests'),
            promptTokens: sumOf('promptTokens'),
            cachedPromptTokens: sumOf('cachedPromptTokens'),
            completionTokens: sumOf('completionTokens'),
            cost: sumOf('cost'),
          },
        },
      ];
      if (query.groupBy.length > 0) pipeline.push({ $sort: sort });
      pipeline.push({ $limit: query.limit });
      const rows = await (calls.collection === 'usage' ? c.usage : c.usageDays).aggregate<Document>(pipeline).toArray();
      return rows.map((row) => {
        const out: UsageGroupRow = {
          requests: Number(row['requests']),
          promptTokens: Number(row['promptTokens']),
          cachedPromptTokens: Number(row['cachedPromptTokens']),
          completionTokens: Number(row['completionTokens']),
          cost: Number(row['cost']),
        };
        const id = (row['_id'] ?? {}) as Record<string, unknown>;
        for (const group of query.groupBy) {
          const field = GROUP_FIELDS[group];
          const value = id[field];
          if (field === 'userId' || field === 'keyId') out[field] = typeof value === 'string' ? value : null;
          else out[field] = String(value);
        }
        return out;
      });
    },
    async spent(orgId, userId, keyId, since) {
      // Budget periods start at a UTC midnight: all from the day totals (callsOf reads raw records otherwise).
      const calls = callsOf(c, { orgId }, date(since), null);
      const [row] = await (calls.collection === 'usage' ? c.usage : c.usageDays)
        .aggregate<Record<'orgTokens' | 'orgCost' | 'userTokens' | 'userCost' | 'keyTokens' | 'keyCost', number>>([
          ...calls.stages,
          {
            $group: {
              _id: null,
              orgTokens: { $sum: tokensOf },
              orgCost: sumOf('cost'),
              userTokens: sumWhen({ $eq: ['$userId', userId] }, tokensOf),
              userCost: sumWhen({ $eq: ['$userId', userId] }, '$cost'),
              keyTokens: sumWhen({ $eq: ['$keyId', keyId] }, tokensOf),
              keyCost: sumWhen({ $eq: ['$keyId', keyId] }, '$cost'),
            },
          },
        ])
        .toArray();
      return {
        organization: { tokens: row?.orgTokens ?? 0, cost: row?.orgCost ?? 0 },
        user: { tokens: userId === null ? 0 : (row?.userTokens ?? 0), cost: userId === null ? 0 : (row?.userCost ?? 0) },
        key: { tokens: keyId === null ? 0 : (row?.keyTokens ?? 0), cost: keyId === null ? 0 : (row?.keyCost ?? 0) },
      };
    },
  };
}
