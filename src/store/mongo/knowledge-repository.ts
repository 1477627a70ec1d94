// Knowledge stores on MongoDB: ranked search with the text index of knowledge_documents ($text,
// sorted by textScore), the snippet made in code (snippet.ts) since $text returns none. No
// transactions: a store is deleted before its documents, and a document added while its store was
// being deleted is removed again, so no search ever reaches a document of a store that is gone.
import type { KnowledgeRepository } from '../port';
import { makeSnippet } from '../snippet';
import type { KnowledgeDocumentSummary, KnowledgeStoreRecord, KnowledgeStoreView } from '../tool-records';
import { isDuplicateKey, type Collections, type KnowledgeDocumentDoc, type KnowledgeStoreDoc } from './collections';

function toStore(doc: KnowledgeStoreDoc, documentCount: number): KnowledgeStoreView {
  const store: KnowledgeStoreRecord = {
    id: doc._id,
    orgId: doc.orgId,
    name: doc.name,
    description: doc.description,
    createdBy: doc.createdBy,
    createdAt: doc.createdAt.toISOString(),
  };
  return { ...store, documentCount };
}

function toSummary(doc: Omit<KnowledgeDocumentDoc, 'text'>): KnowledgeDocumentSummary {
  return {
    id: doc._id,
    orgId: doc.orgId,
    storeId: doc.storeId,
    title: doc.title,
    source: doc.source,
    metadata: doc.metadata,
    createdAt: doc.createdAt.toISOString(),
    textLength: doc.textLength,
  };
}

export function mongoKnowledge(c: Collections): KnowledgeRepository {
  async function counts(storeIds: readonly string[]): Promise<Map<string, number>> {
    const rows = await c.knowledgeDocuments
      .aggregate<{ _id: string; n: number }>([{ $match: { storeId: { $in: [...storeIds] } } }, { $group: { _id: '$storeId', n: { $sum: 1 } } }])
      .toArray();
    return new Map(rows.map((r) => [r._id, r.n]));
  }

  async function withCount(doc: KnowledgeStoreDoc | null): Promise<KnowledgeStoreView | null> {
    if (!doc) return null;
    return toStore(doc, await c.knowledgeDocuments.countDocuments({ storeId: doc._id }));
  }

  return {
    async createStore(store) {
      try {
        await c.knowledgeStores.insertOne({
          _id: store.id,
          orgId: store.orgId,
          name: store.name,
          description: store.description,
          createdBy: store.createdBy,
          createdAt: new Date(store.createdAt),
        });
        return true;
      } catch (err) {
        // The unique (orgId, name) index: the organization already has a store of that name.
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    },
    async getStore(orgId, storeId) {
      return withCount(await c.knowledgeStores.findOne({ _id: storeId, orgId }));
    },
    async getStoreByName(orgId, name) {
      return withCount(await c.knowledgeStores.findOne({ orgId, name }));
    },
    async listStores(orgId) {
      const docs = await c.knowledgeStores.find({ orgId }).sort({ name: 1 }).toArray();
      const n = await counts(docs.map((d) => d._id));
      return docs.map((doc) => toStore(doc, n.get(doc._id) ?? 0));
    },
    async deleteStore(orgId, storeId) {
      const { deletedCount } = await c.knowledgeStores.deleteOne({ _id: storeId, orgId });
      if (deletedCount === 0) return false;
      await c.knowledgeDocuments.deleteMany({ orgId, storeId });
      return true;
    },
    async addDocument(doc) {
      const exists = async (): Promise<boolean> => (await c.knowledgeStores.countDocuments({ _id: doc.storeId, orgId: doc.orgId }, { limit: 1 })) > 0;
      if (!(await exists())) return false;
      await c.knowledgeDocuments.insertOne({
        _id: doc.id,
        orgId: doc.orgId,
        storeId: doc.storeId,
        title: doc.title,
        source: doc.source,
        metadata: doc.metadata,
        text: doc.text,
        textLength: doc.text.length,
        createdAt: new Date(doc.createdAt),
      });
      // The store was deleted between the check and the insert: its deleteMany may have run before it.
      if (!(await exists())) {
        await c.knowledgeDocuments.deleteOne({ _id: doc.id });
        return false;
      }
      return true;
    },
    async getDocument(orgId, storeId, documentId) {
      const doc = await c.knowledgeDocuments.findOne({ _id: documentId, orgId, storeId });
      if (!doc) return null;
      return { ...toSummary(doc), text: doc.text };
    },
    async listDocuments(orgId, storeId, { after, limit }) {
      const filter: Record<string, unknown> = { orgId, storeId };
      if (after !== undefined) {
        const anchor = await c.knowledgeDocuments.findOne({ _id: after, storeId }, { projection: { createdAt: 1 } });
        if (!anchor) return [];
        filter['$or'] = [{ createdAt: { $gt: anchor.createdAt } }, { createdAt: anchor.createdAt, _id: { $gt: after } }];
      }
      const docs = await c.knowledgeDocuments
        .find(filter, { projection: { text: 0 } })
        .sort({ createdAt: 1, _id: 1 })
        .limit(limit)
        .toArray();
      return docs.map(toSummary);
    },
    async deleteDocument(orgId, storeId, documentId) {
      const { deletedCount } = await c.knowledgeDocuments.deleteOne({ _id: documentId, orgId, storeId });
      return deletedCount > 0;
    },
    async search(orgId, storeIds, query, limit) {
      if (storeIds.length === 0 || query.trim() === '') return [];
      const docs = await c.knowledgeDocuments
        .find({ orgId, storeId: { $in: [...storeIds] }, $text: { $search: query } }, { projection: { score: { $meta: 'textScore' } } })
        .sort({ score: { $meta: 'textScore' }, _id: 1 })
        .limit(limit)
        .toArray();
      return docs.map((doc) => ({
        documentId: doc._id,
        storeId: doc.storeId,
        title: doc.title,
        source: doc.source,
        metadata: doc.metadata,
        snippet: makeSnippet(doc.text, query),
        score: (doc as unknown as { score: number }).score,
      }));
    },
  };
}
