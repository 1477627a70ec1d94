import type { ConsoleSessionRepository } from '../port';
import type { ConsoleSessionRecord } from '../types';
import { date, dateOrNull, isoOrNull, type Collections, type ConsoleSessionDoc } from './collections';

function toSession(doc: ConsoleSessionDoc): ConsoleSessionRecord {
  return {
    id: doc._id,
    orgId: doc.orgId,
    userId: doc.userId,
    tokenHash: doc.tokenHash ?? null,
    ticketHash: doc.ticketHash ?? null,
    ticketExpiresAt: doc.ticketExpiresAt.toISOString(),
    subject: doc.subject,
    createdAt: doc.createdAt.toISOString(),
    expiresAt: doc.expiresAt.toISOString(),
    revokedAt: isoOrNull(doc.revokedAt),
  };
}

export function mongoConsoleSessions(c: Collections): ConsoleSessionRepository {
  return {
    async create(session) {
      await c.consoleSessions.insertOne({
        _id: session.id,
        orgId: session.orgId,
        userId: session.userId,
        ...(session.tokenHash === null ? {} : { tokenHash: session.tokenHash }),
        ...(session.ticketHash === null ? {} : { ticketHash: session.ticketHash }),
        ticketExpiresAt: date(session.ticketExpiresAt),
        subject: session.subject,
        createdAt: date(session.createdAt),
        expiresAt: date(session.expiresAt),
        revokedAt: dateOrNull(session.revokedAt),
      });
    },
    async redeemTicket(ticketHash, tokenHash, now) {
      // One single-document conditional update: of two concurrent redemptions, the second matches nothing.
      const at = date(now);
      const doc = await c.consoleSessions.findOneAndUpdate(
        { ticketHash, ticketExpiresAt: { $gt: at }, expiresAt: { $gt: at }, revokedAt: null },
        { $set: { tokenHash }, $unset: { ticketHash: '' } },
        { returnDocument: 'after' },
      );
      return doc ? toSession(doc) : null;
    },
    async resolve(tokenHash, now) {
      const session = await c.consoleSessions.findOne({ tokenHash, revokedAt: null, expiresAt: { $gt: date(now) } });
      if (!session) return null;
      const user = await c.users.findOne({ _id: session.userId, orgId: session.orgId });
      if (!user) return null;
      const groups = await c.groups
        .find({ orgId: user.orgId, members: user._id }, { projection: { id: 1 } })
        .sort({ id: 1 })
        .toArray();
      return {
        session: toSession(session),
        user: { id: user._id, orgId: user.orgId, name: user.name, role: user.role },
        groups: groups.map((g) => g.id),
      };
    },
    async get(id) {
      const doc = await c.consoleSessions.findOne({ _id: id });
      return doc ? toSession(doc) : null;
    },
    async revoke(id, at) {
      const result = await c.consoleSessions.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: date(at) }, $unset: { ticketHash: '' } });
      return result.modifiedCount === 1;
    },
    async revokedSince(since) {
      const docs = await c.consoleSessions
        .find({ revokedAt: { $gte: date(since) } }, { projection: { _id: 1 } })
        .sort({ revokedAt: 1, _id: 1 })
        .toArray();
      return docs.map((d) => d._id);
    },
    async prune(before, limit) {
      const cutoff = date(before);
      const ids = (
        await c.consoleSessions
          .find({ $or: [{ expiresAt: { $lt: cutoff } }, { revokedAt: { $lt: cutoff } }] }, { projection: { _id: 1 } })
          .limit(limit)
          .toArray()
      ).map((d) => d._id);
      if (ids.length === 0) return 0;
      return (await c.consoleSessions.deleteMany({ _id: { $in: ids } })).deletedCount;
    },
  };
}
