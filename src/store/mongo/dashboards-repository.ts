import type { DashboardRepository } from '../port';
import type { DashboardRecord, DashboardSummary } from '../tool-records';
import type { Collections, DashboardDoc } from './collections';

const SUMMARY_PROJECTION = { specJson: 0, dataJson: 0 } as const;

function toSummary(doc: Omit<DashboardDoc, 'specJson' | 'dataJson'>): DashboardSummary {
  return {
    id: doc._id,
    orgId: doc.orgId,
    title: doc.title,
    version: doc.version,
    createdBy: doc.createdBy,
    conversationId: doc.conversationId,
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
  };
}

function toDashboard(doc: DashboardDoc): DashboardRecord {
  return {
    ...toSummary(doc),
    spec: JSON.parse(doc.specJson) as Record<string, unknown>,
    data: JSON.parse(doc.dataJson) as Record<string, unknown>[],
  };
}

export function mongoDashboards(c: Collections): DashboardRepository {
  return {
    async create(d) {
      await c.dashboards.insertOne({
        _id: d.id,
        orgId: d.orgId,
        title: d.title,
        specJson: JSON.stringify(d.spec),
        dataJson: JSON.stringify(d.data),
        version: d.version,
        createdBy: d.createdBy,
        conversationId: d.conversationId,
        createdAt: new Date(d.createdAt),
        updatedAt: new Date(d.updatedAt),
      });
    },
    async get(id) {
      const doc = await c.dashboards.findOne({ _id: id });
      return doc ? toDashboard(doc) : null;
    },
    async getInOrg(orgId, id) {
      const doc = await c.dashboards.findOne({ _id: id, orgId });
      return doc ? toDashboard(doc) : null;
    },
    async listByOrg(orgId, limit) {
      const docs = await c.dashboards.find({ orgId }, { projection: SUMMARY_PROJECTION }).sort({ updatedAt: -1, _id: 1 }).limit(limit).toArray();
      return docs.map(toSummary);
    },
    async update(orgId, id, patch, whenVersion, at) {
      const set: Partial<DashboardDoc> = { updatedAt: new Date(at) };
      if (patch.title !== undefined) set.title = patch.title;
      if (patch.spec !== undefined) set.specJson = JSON.stringify(patch.spec);
      if (patch.data !== undefined) set.dataJson = JSON.stringify(patch.data);
      // One document, one atomic update: the version filter makes it compare-and-set.
      const doc = await c.dashboards.findOneAndUpdate(
        { _id: id, orgId, version: whenVersion },
        { $set: set, $inc: { version: 1 } },
        { returnDocument: 'after' },
      );
      return doc ? toDashboard(doc) : null;
    },
    async delete(orgId, id) {
      const { deletedCount } = await c.dashboards.deleteOne({ _id: id, orgId });
      return deletedCount > 0;
    },
  };
}
