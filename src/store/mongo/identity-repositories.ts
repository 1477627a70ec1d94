import type { Filter } from 'mongodb';
import type { GroupRepository, KeyRepository, OrganizationRepository, SettingsRepository, UserRepository } from '../port';
import type { ApiKeyRecord, UserRecord } from '../types';
import { date, dateOrNull, isDuplicateKey, isoOrNull, type Collections, type KeyDoc, type UserDoc } from './collections';

function toUser(doc: UserDoc): UserRecord {
  return { id: doc._id, orgId: doc.orgId, name: doc.name, role: doc.role };
}

function toKey(doc: KeyDoc): ApiKeyRecord {
  return {
    id: doc._id,
    orgId: doc.orgId,
    userId: doc.userId,
    name: doc.name,
    hash: doc.hash,
    prefix: doc.prefix,
    source: doc.source,
    createdAt: doc.createdAt.toISOString(),
    lastUsedAt: isoOrNull(doc.lastUsedAt),
    revokedAt: isoOrNull(doc.revokedAt),
    expiresAt: isoOrNull(doc.expiresAt ?? null),
    models: doc.models ?? null,
    budgets: doc.budgets ?? [],
  };
}

export function mongoOrganizations(c: Collections): OrganizationRepository {
  return {
    async upsert(org) {
      await c.organizations.replaceOne(
        { _id: org.id },
        { name: org.name, models: org.models, rateLimit: org.rateLimit, dlp: org.dlp, updatedAt: new Date() },
        { upsert: true },
      );
    },
    async get(id) {
      const doc = await c.organizations.findOne({ _id: id });
      return doc ? { id: doc._id, name: doc.name, models: doc.models, rateLimit: doc.rateLimit, dlp: doc.dlp, updatedAt: doc.updatedAt.toISOString() } : null;
    },
    async list() {
      const docs = await c.organizations.find().sort({ _id: 1 }).toArray();
      return docs.map((doc) => ({
        id: doc._id,
        name: doc.name,
        models: doc.models,
        rateLimit: doc.rateLimit,
        dlp: doc.dlp,
        updatedAt: doc.updatedAt.toISOString(),
      }));
    },
  };
}

export function mongoUsers(c: Collections): UserRepository {
  return {
    async upsert(user) {
      await c.users.replaceOne({ _id: user.id }, { orgId: user.orgId, name: user.name, role: user.role }, { upsert: true });
    },
    async get(id) {
      const doc = await c.users.findOne({ _id: id });
      return doc ? toUser(doc) : null;
    },
    async listByOrg(orgId) {
      return (await c.users.find({ orgId }).sort({ _id: 1 }).toArray()).map(toUser);
    },
    async count() {
      return c.users.countDocuments();
    },
  };
}

export function mongoGroups(c: Collections): GroupRepository {
  return {
    async upsert(group) {
      await c.groups.replaceOne(
        { _id: `${group.orgId}/${group.id}` },
        { orgId: group.orgId, id: group.id, name: group.name, members: group.members },
        { upsert: true },
      );
    },
    async listByOrg(orgId) {
      const docs = await c.groups.find({ orgId }).sort({ id: 1 }).toArray();
      return docs.map((d) => ({ id: d.id, orgId: d.orgId, name: d.name, members: d.members }));
    },
    async groupIdsOf(orgId, userId) {
      const docs = await c.groups
        .find({ orgId, members: userId }, { projection: { id: 1 } })
        .sort({ id: 1 })
        .toArray();
      return docs.map((d) => d.id);
    },
  };
}

export function mongoKeys(c: Collections): KeyRepository {
  return {
    async create(key) {
      try {
        await c.keys.insertOne({
          _id: key.id,
          orgId: key.orgId,
          userId: key.userId,
          name: key.name,
          hash: key.hash,
          prefix: key.prefix,
          source: key.source,
          createdAt: date(key.createdAt),
          lastUsedAt: dateOrNull(key.lastUsedAt),
          revokedAt: dateOrNull(key.revokedAt),
          expiresAt: dateOrNull(key.expiresAt),
          models: key.models,
          budgets: key.budgets,
        });
        return true;
      } catch (err) {
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    },
    async resolve(hash) {
      const key = await c.keys.findOne({ hash, revokedAt: null });
      if (!key) return null;
      const user = await c.users.findOne({ _id: key.userId });
      if (!user) return null;
      const groups = await c.groups
        .find({ orgId: user.orgId, members: user._id }, { projection: { id: 1 } })
        .sort({ id: 1 })
        .toArray();
      return { key: toKey(key), user: toUser(user), groups: groups.map((g) => g.id) };
    },
    async get(id) {
      const doc = await c.keys.findOne({ _id: id });
      return doc ? toKey(doc) : null;
    },
    async revoke(id, at) {
      const result = await c.keys.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: date(at) } });
      return result.modifiedCount === 1;
    },
    async listByOrg(orgId) {
      return (await c.keys.find({ orgId }).sort({ createdAt: 1, _id: 1 }).toArray()).map(toKey);
    },
    async list(query, limit) {
      if (limit <= 0) return [];
      const filter: Filter<KeyDoc> = { orgId: query.orgId };
      if (query.userId !== null) filter.userId = query.userId;
      if (!query.includeRevoked) filter.revokedAt = null;
      return (await c.keys.find(filter).sort({ createdAt: 1, _id: 1 }).limit(limit).toArray()).map(toKey);
    },
    async touch(ids, at) {
      if (ids.length === 0) return;
      // $max keeps the latest use when batches from several processes arrive out of order.
      await c.keys.updateMany({ _id: { $in: [...ids] } }, { $max: { lastUsedAt: date(at) } });
    },
    async countActive() {
      return c.keys.countDocuments({ revokedAt: null });
    },
    async revokedSince(since) {
      const docs = await c.keys
        .find({ revokedAt: { $gte: date(since) } }, { projection: { _id: 1 } })
        .sort({ revokedAt: 1, _id: 1 })
        .toArray();
      return docs.map((d) => d._id);
    },
  };
}

export function mongoSettings(c: Collections): SettingsRepository {
  return {
    async get(key) {
      return (await c.settings.findOne({ _id: key }))?.value ?? null;
    },
    async setIfAbsent(key, value) {
      try {
        await c.settings.updateOne({ _id: key }, { $setOnInsert: { value } }, { upsert: true });
      } catch (err) {
        // Two concurrent upserts: the loser hits the unique _id; the winner's value stands.
        if (!isDuplicateKey(err)) throw err;
      }
      const doc = await c.settings.findOne({ _id: key });
      if (!doc) throw new Error(`setting ${key} vanished after insert`);
      return doc.value;
    },
  };
}
