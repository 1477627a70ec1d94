import type { Document } from 'mongodb';
import type { Permission } from '../../config/types';
import type { AgentRepository } from '../port';
import type { AgentRecord, AgentUpsert, VisibleAgent } from '../types';
import { definitionOf } from '../sql/agents-repository';
import { date, isDuplicateKey, isoOrNull, type AgentDoc, type Collections } from './collections';
import { agentModelsExpr, agentPermissionsExpr } from './permissions';

function toAgent(doc: AgentDoc): AgentRecord {
  return {
    ...definitionOf(doc.definition),
    id: doc._id,
    orgId: doc.orgId,
    version: doc.version,
    createdBy: doc.createdBy,
    creatorName: doc.creatorName,
    definitionHash: doc.definitionHash,
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
    deletedAt: isoOrNull(doc.deletedAt),
  };
}

/** Optimistic retries of an upsert that lost a race to another process; a handful is plenty. */
const MAX_ATTEMPTS = 20;

export function mongoAgents(c: Collections): AgentRepository {
  async function writeVersion(agent: AgentUpsert, version: number, at: Date): Promise<void> {
    // $setOnInsert: re-running after a crash between the agent write and this one is harmless.
    await c.agentVersions.updateOne(
      { _id: `${agent.id}#${version}` },
      { $setOnInsert: { agentId: agent.id, version, definition: definitionOf(agent), definitionHash: agent.definitionHash, createdAt: at } },
      { upsert: true },
    );
  }

  async function visible(principal: Parameters<AgentRepository['listVisible']>[0], match: Document, limit: number): Promise<VisibleAgent[]> {
    if (limit <= 0) return []; // $limit 0 is an error in MongoDB, and find().limit(0) means "no limit"
    const models = agentModelsExpr(principal, '$$ROOT');
    const docs = await c.agents
      .aggregate<AgentDoc & { permissions: Permission[] }>([
        { $match: { ...match, orgId: principal.orgId, deletedAt: null } },
        ...(models ? [{ $match: { $expr: models } }] : []),
        { $addFields: { permissions: agentPermissionsExpr(principal, '$$ROOT') } },
        { $match: { 'permissions.0': { $exists: true } } },
        { $sort: { createdAt: -1, _id: -1 } },
        { $limit: limit },
      ])
      .toArray();
    return docs.map((doc) => ({ ...toAgent(doc), permissions: doc.permissions }));
  }

  return {
    async upsert(agent) {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const now = new Date();
        const current = await c.agents.findOne({ _id: agent.id });
        if (!current) {
          try {
            const doc: AgentDoc = {
              _id: agent.id,
              orgId: agent.orgId,
              version: 1,
              createdBy: agent.createdBy,
              creatorName: agent.creatorName,
              definition: definitionOf(agent),
              definitionHash: agent.definitionHash,
              sharedWith: agent.sharedWith,
              createdAt: now,
              updatedAt: now,
              deletedAt: null,
            };
            await c.agents.insertOne(doc);
            await writeVersion(agent, 1, now);
            return { agent: toAgent(doc), changed: true };
          } catch (err) {
            if (isDuplicateKey(err)) continue; // created meanwhile by another process: re-read
            throw err;
          }
        }
        if (current.definitionHash === agent.definitionHash) {
          const same =
            current.deletedAt === null && current.orgId === agent.orgId && current.createdBy === agent.createdBy && current.creatorName === agent.creatorName;
          const updated = same
            ? current
            : await c.agents.findOneAndUpdate(
                { _id: agent.id, version: current.version },
                { $set: { deletedAt: null, orgId: agent.orgId, createdBy: agent.createdBy, creatorName: agent.creatorName, updatedAt: now } },
                { returnDocument: 'after' },
              );
          if (!updated) continue;
          return { agent: toAgent(updated), changed: false };
        }
        // Compare-and-set on (version, hash): of concurrent upserts only one makes version n+1.
        const version = current.version + 1;
        const updated = await c.agents.findOneAndUpdate(
          { _id: agent.id, version: current.version, definitionHash: current.definitionHash },
          {
            $set: {
              version,
              orgId: agent.orgId,
              createdBy: agent.createdBy,
              creatorName: agent.creatorName,
              definition: definitionOf(agent),
              definitionHash: agent.definitionHash,
              sharedWith: agent.sharedWith,
              updatedAt: now,
              deletedAt: null,
            },
          },
          { returnDocument: 'after' },
        );
        if (!updated) continue;
        await writeVersion(agent, version, now);
        return { agent: toAgent(updated), changed: true };
      }
      throw new Error(`agent ${agent.id}: upsert kept losing to concurrent writers`);
    },
    async softDeleteExcept(keep, at) {
      const filter = { deletedAt: null, _id: { $nin: [...keep] } };
      const ids = (await c.agents.find(filter, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
      if (ids.length === 0) return [];
      await c.agents.updateMany({ _id: { $in: ids }, deletedAt: null }, { $set: { deletedAt: date(at), updatedAt: date(at) } });
      return ids.sort();
    },
    async listVisible(principal, limit) {
      return visible(principal, {}, limit);
    },
    async getVisible(principal, agentId) {
      return (await visible(principal, { _id: agentId }, 1))[0] ?? null;
    },
    async get(agentId) {
      const doc = await c.agents.findOne({ _id: agentId });
      return doc ? toAgent(doc) : null;
    },
    async getVersion(agentId, version) {
      const doc = await c.agentVersions.findOne({ _id: `${agentId}#${version}` });
      return doc
        ? {
            agentId: doc.agentId,
            version: doc.version,
            definition: definitionOf(doc.definition),
            definitionHash: doc.definitionHash,
            createdAt: doc.createdAt.toISOString(),
          }
        : null;
    },
    async listActive() {
      return (await c.agents.find({ deletedAt: null }).sort({ createdAt: 1, _id: 1 }).toArray()).map(toAgent);
    },
  };
}
