import type { ToolStateRepository } from '../port';
import { date, type Collections } from './collections';

/** Documents examined per prune round trip. */
const PRUNE_BATCH = 1000;

function idOf(orgId: string, conversationId: string, key: string): string {
  return JSON.stringify([conversationId, orgId, key]);
}

export function mongoToolState(c: Collections): ToolStateRepository {
  return {
    async get(orgId, conversationId, key) {
      return (await c.toolState.findOne({ _id: idOf(orgId, conversationId, key) }))?.value ?? null;
    },
    async set(orgId, conversationId, key, value, updatedAt) {
      // One document per key: the upsert is atomic, and two writers race to last-writer-wins.
      await c.toolState.updateOne(
        { _id: idOf(orgId, conversationId, key) },
        { $set: { conversationId, orgId, key, value, updatedAt: date(updatedAt) } },
        { upsert: true },
      );
    },
    async delete(orgId, conversationId, key) {
      return (await c.toolState.deleteOne({ _id: idOf(orgId, conversationId, key) })).deletedCount > 0;
    },
    async forget(conversationId, key) {
      return (await c.toolState.deleteMany(key === undefined ? { conversationId } : { conversationId, key })).deletedCount;
    },
  };
}

/** Tool state not written since `before` whose conversation is gone (or was a stateless response's scope). */
export async function pruneToolState(c: Collections, before: Date): Promise<void> {
  let lastId = '';
  for (;;) {
    const batch = await c.toolState
      .find({ updatedAt: { $lt: before }, _id: { $gt: lastId } }, { projection: { _id: 1, conversationId: 1 } })
      .sort({ _id: 1 })
      .limit(PRUNE_BATCH)
      .toArray();
    if (batch.length === 0) return;
    lastId = batch[batch.length - 1]!._id;
    const live = new Set(
      (await c.conversations.find({ _id: { $in: [...new Set(batch.map((d) => d.conversationId))] } }, { projection: { _id: 1 } }).toArray()).map((d) => d._id),
    );
    const gone = batch.filter((d) => !live.has(d.conversationId)).map((d) => d._id);
    if (gone.length > 0) await c.toolState.deleteMany({ _id: { $in: gone }, updatedAt: { $lt: before } });
    if (batch.length < PRUNE_BATCH) return;
  }
}
