import type { Filter } from 'mongodb';
import type { ConversationRepository } from '../port';
import { LeaseLostError, type ConversationItemRecord, type ConversationRecord } from '../types';
import { date, isDuplicateKey, type Collections, type ConversationDoc, type ItemDoc } from './collections';
import { agentGrantsAnyExpr, agentModelsMatch, visibleRecordMatch } from './permissions';
import { generationIs } from './lease-generation';
import { mongoResponses } from './records-repositories';

function toConversation(doc: ConversationDoc): ConversationRecord {
  return {
    id: doc._id,
    orgId: doc.orgId,
    userId: doc.userId,
    runId: doc.runId,
    metadata: doc.metadata,
    createdAt: doc.createdAt.toISOString(),
    summary: doc.summary ?? null,
    contextTokens: doc.contextTokens ?? null,
  };
}

function toItem(doc: ItemDoc): ConversationItemRecord {
  return {
    id: doc.id,
    conversationId: doc.conversationId,
    position: doc.position,
    type: doc.type,
    role: doc.role,
    data: doc.data,
    status: doc.status,
    idempotencyKey: doc.idempotencyKey,
    responseId: doc.responseId,
    createdAt: doc.createdAt.toISOString(),
  };
}

export function conversationDoc(conversation: ConversationRecord): ConversationDoc {
  return {
    _id: conversation.id,
    orgId: conversation.orgId,
    userId: conversation.userId,
    runId: conversation.runId,
    metadata: conversation.metadata,
    createdAt: date(conversation.createdAt),
    summary: conversation.summary ?? null,
    contextTokens: conversation.contextTokens ?? null,
  };
}

/** Bound on position conflicts one item may meet (each is another writer's successful insert). */
const MAX_CONFLICTS = 1000;

export function mongoConversations(c: Collections): ConversationRepository {
  async function lastPosition(conversationId: string): Promise<number> {
    const [doc] = await c.items
      .find({ conversationId }, { projection: { position: 1 } })
      .sort({ position: -1 })
      .limit(1)
      .toArray();
    return doc?.position ?? 0;
  }

  return {
    async create(conversation) {
      await c.conversations.insertOne(conversationDoc(conversation));
    },
    async get(id) {
      const doc = await c.conversations.findOne({ _id: id });
      return doc ? toConversation(doc) : null;
    },
    async getVisible(principal, id) {
      const run = { $arrayElemAt: ['$run', 0] };
      const agent = { $arrayElemAt: ['$agent', 0] };
      const field = (doc: unknown, name: string): unknown => ({ $let: { vars: { doc }, in: `$$doc.${name}` } });
      const [doc] = await c.conversations
        .aggregate<ConversationDoc>([
          { $match: { _id: id, orgId: principal.orgId } },
          { $lookup: { from: c.runs.collectionName, localField: 'runId', foreignField: '_id', as: 'run' } },
          { $lookup: { from: c.agents.collectionName, localField: 'run.agentId', foreignField: '_id', as: 'agent' } },
          // Through its run: a run of the principal's organization the principal may read.
          visibleRecordMatch(principal, {
            $and: [
              { $eq: [field(run, 'orgId'), { $literal: principal.orgId }] },
              { $or: [{ $eq: [field(run, 'userId'), { $literal: principal.userId }] }, agentGrantsAnyExpr(principal, agent)] },
            ],
          }),
          // A run's conversation, for a key with a model allow-list: only when its run's agent is within it.
          ...agentModelsMatch(principal, agent, { unlessNoRun: true }),
          { $project: { run: 0, agent: 0 } },
        ])
        .toArray();
      return doc ? toConversation(doc) : null;
    },
    async append(conversationId, items, fence) {
      if (items.length === 0) return [];
      if (fence) {
        // The run must still be in progress under the fence's generation, and the conversation's own
        // fence (raised by every takeover: see acquireLease) no newer: one compare-and-set on it.
        const run = await c.runs.findOne(
          { _id: fence.runId, status: 'in_progress', leaseGeneration: generationIs(fence.generation) },
          { projection: { _id: 1 } },
        );
        const held = run
          ? await c.conversations.findOneAndUpdate(
              { _id: conversationId, leaseGeneration: { $not: { $gt: fence.generation } } },
              { $max: { leaseGeneration: fence.generation } },
              { projection: { _id: 1 } },
            )
          : null;
        if (!held) throw new LeaseLostError(fence.runId);
      } else if (!(await c.conversations.findOne({ _id: conversationId }, { projection: { _id: 1 } }))) {
        throw new Error(`conversation ${conversationId} does not exist`);
      }
      // Lock-free: each item is inserted at last+1 with _id `${conversationId}#${position}`, so two writers
      // can never hold one position and a position is only consumed by a successful insert (no gaps).
      // A lost race re-reads the last position; a duplicate idempotency key (unique index) returns the
      // stored item instead. Items of one call keep their order; calls racing may interleave.
      const keys = items.map((i) => i.idempotencyKey).filter((k): k is string => k !== null);
      const known = new Map<string, ConversationItemRecord>();
      if (keys.length > 0) {
        for (const doc of await c.items.find({ conversationId, idempotencyKey: { $in: keys } }).toArray()) {
          if (doc.idempotencyKey !== null) known.set(doc.idempotencyKey, toItem(doc));
        }
      }
      const result: ConversationItemRecord[] = [];
      let position = (await lastPosition(conversationId)) + 1;
      for (const item of items) {
        const existing = item.idempotencyKey === null ? undefined : known.get(item.idempotencyKey);
        if (existing) {
          result.push(existing);
          continue;
        }
        for (let conflicts = 0; ; conflicts++) {
          if (conflicts >= MAX_CONFLICTS) throw new Error(`conversation ${conversationId}: too many concurrent appenders`);
          const doc: ItemDoc = {
            _id: `${conversationId}#${position}`,
            conversationId,
            position,
            id: item.id,
            type: item.type,
            role: item.role,
            data: item.data,
            status: item.status,
            idempotencyKey: item.idempotencyKey,
            responseId: item.responseId,
            createdAt: new Date(),
          };
          try {
            await c.items.insertOne(doc);
            const record = toItem(doc);
            if (record.idempotencyKey !== null) known.set(record.idempotencyKey, record);
            result.push(record);
            position++;
            break;
          } catch (err) {
            if (!isDuplicateKey(err)) throw err;
            if (item.idempotencyKey !== null) {
              const stored = await c.items.findOne({ conversationId, idempotencyKey: item.idempotencyKey });
              if (stored) {
                const record = toItem(stored);
                known.set(item.idempotencyKey, record);
                result.push(record);
                break;
              }
            }
            position = (await lastPosition(conversationId)) + 1;
          }
        }
      }
      return result;
    },
    async claimTurn(conversationId, responseId, now, until) {
      const free = await c.conversations.findOneAndUpdate(
        { _id: conversationId, $or: [{ turnResponseId: null }, { turnResponseId: responseId }, { turnUntil: { $lt: date(now) } }] },
        { $set: { turnResponseId: responseId, turnUntil: date(until) } },
        { projection: { _id: 1 } },
      );
      if (free) return true;
      // Held: free only when the holding response exists and is no longer in progress (see the port).
      const held = await c.conversations.findOne({ _id: conversationId }, { projection: { turnResponseId: 1 } });
      const holder = held?.turnResponseId;
      if (!holder) return false;
      const ended = await c.responses.findOne({ _id: holder, status: { $ne: 'in_progress' } }, { projection: { _id: 1 } });
      if (!ended) return false;
      const taken = await c.conversations.findOneAndUpdate(
        { _id: conversationId, turnResponseId: holder },
        { $set: { turnResponseId: responseId, turnUntil: date(until) } },
        { projection: { _id: 1 } },
      );
      return taken !== null;
    },
    async openTurn(principal, ref, response, now, until) {
      const responseId = response.id;
      // Several round trips (no multi-document statement): visibility, then the claim, then the read.
      let conversationId: string | null = null;
      if ('conversationId' in ref) conversationId = ref.conversationId;
      else {
        const response = await c.responses.findOne(
          { _id: ref.previousResponseId, orgId: principal.orgId, stored: true, $or: [{ expiresAt: null }, { expiresAt: { $gt: date(now) } }] },
          { projection: { conversationId: 1 } },
        );
        conversationId = response?.conversationId ?? null;
      }
      const visible = conversationId === null ? null : await this.getVisible(principal, conversationId);
      if (!visible) return { kind: 'not_found' };
      if (visible.runId !== null) return { kind: 'run', conversationId: visible.id };
      if (!(await this.claimTurn(visible.id, responseId, now, until))) return { kind: 'locked', conversationId: visible.id };
      await mongoResponses(c).create({ ...response, conversationId: visible.id, body: { ...response.body, conversation: { id: visible.id } } });
      const conversation = await this.get(visible.id);
      return conversation ? { kind: 'claimed', conversation } : { kind: 'not_found' };
    },
    async abandonTurn(conversationId, responseId) {
      await c.responses.deleteOne({ _id: responseId, status: 'in_progress' });
      await c.conversations.updateOne({ _id: conversationId, turnResponseId: responseId }, { $set: { turnResponseId: null, turnUntil: null } });
    },
    async endTurn(conversationId, responseId, items, contextTokens) {
      // No multi-document transaction: the items are appended while the turn is still held (no other
      // response may append meanwhile), then the turn is released.
      const held = await c.conversations.findOne({ _id: conversationId, turnResponseId: responseId }, { projection: { _id: 1 } });
      if (!held) return false;
      if (items.length > 0) await this.append(conversationId, items);
      const set: Record<string, unknown> = { turnResponseId: null, turnUntil: null };
      if (contextTokens !== null) set['contextTokens'] = contextTokens;
      const released = await c.conversations.updateOne({ _id: conversationId, turnResponseId: responseId }, { $set: set });
      return released.matchedCount > 0;
    },
    async setSummary(conversationId, summary, item) {
      await this.append(conversationId, [item]);
      await c.conversations.updateOne({ _id: conversationId }, { $set: { summary } });
    },
    async listItems(conversationId, options) {
      if (options.limit <= 0) return []; // find().limit(0) would mean "no limit"
      const desc = options.order === 'desc';
      const filter: Filter<ItemDoc> = { conversationId };
      if (options.afterPosition !== undefined) filter.position = desc ? { $lt: options.afterPosition } : { $gt: options.afterPosition };
      const docs = await c.items
        .find(filter)
        .sort({ position: desc ? -1 : 1 })
        .limit(options.limit)
        .toArray();
      return docs.map(toItem);
    },
    async getItem(conversationId, itemId) {
      const doc = await c.items.findOne({ conversationId, id: itemId });
      return doc ? toItem(doc) : null;
    },
  };
}
