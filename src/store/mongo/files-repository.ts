// Stored files on MongoDB: the record in `files`, the bytes in GridFS (bucket `file_contents`, chunks of
// 255 kB: a document holds at most 16 MB). Without multi-document transactions the order of writes
// keeps the rule that a record never names missing bytes: bytes first, record second on create;
// record first, bytes second on delete (a failure between leaves unreferenced bytes, never a record
// without them).
import { GridFSBucket, type Db, type Filter, type ObjectId } from 'mongodb';
import type { FileRepository } from '../port';
import type { FileViewer, StoredFileRecord } from '../types';
import type { Collections, StoredFileDoc } from './collections';

function toFile(doc: StoredFileDoc): StoredFileRecord {
  return {
    id: doc._id,
    orgId: doc.orgId,
    userId: doc.userId,
    filename: doc.filename,
    purpose: doc.purpose,
    bytes: doc.bytes,
    mediaType: doc.mediaType,
    createdAt: doc.createdAt.toISOString(),
  };
}

/** The visibility rule as a filter: the organization's, and the viewer's own unless an admin. */
function visible(viewer: FileViewer): Filter<StoredFileDoc> {
  return viewer.admin ? { orgId: viewer.orgId } : { orgId: viewer.orgId, userId: viewer.userId };
}

async function download(bucket: GridFSBucket, id: ObjectId): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of bucket.openDownloadStream(id)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function mongoFiles(db: Db, c: Collections): FileRepository {
  const bucket = new GridFSBucket(db, { bucketName: 'file_contents' });
  const projection = { projection: { _id: 1, orgId: 1, userId: 1, filename: 1, purpose: 1, bytes: 1, mediaType: 1, createdAt: 1, contentId: 1 } };

  const withContent = async (doc: StoredFileDoc | null): Promise<{ file: StoredFileRecord; content: Buffer } | null> =>
    doc ? { file: toFile(doc), content: await download(bucket, doc.contentId) } : null;

  return {
    async create(file, content) {
      if (content.length !== file.bytes) throw new Error(`stored file ${file.id}: ${content.length} bytes given for a record of ${file.bytes}`);
      const upload = bucket.openUploadStream(file.id, { metadata: { fileId: file.id } });
      await new Promise<void>((resolve, reject) => {
        upload.once('error', reject);
        upload.once('finish', resolve);
        upload.end(content);
      });
      try {
        await c.files.insertOne({
          _id: file.id,
          orgId: file.orgId,
          userId: file.userId,
          filename: file.filename,
          purpose: file.purpose,
          bytes: file.bytes,
          mediaType: file.mediaType,
          createdAt: new Date(file.createdAt),
          contentId: upload.id,
        });
      } catch (err) {
        await bucket.delete(upload.id).catch(() => undefined);
        throw err;
      }
    },
    async getVisible(viewer, id) {
      const doc = await c.files.findOne({ _id: id, ...visible(viewer) }, projection);
      return doc ? toFile(doc) : null;
    },
    async listVisible(viewer, query) {
      const filter: Filter<StoredFileDoc> = { ...visible(viewer), ...(query.purpose !== undefined ? { purpose: query.purpose } : {}) };
      const direction = query.order === 'asc' ? 1 : -1;
      if (query.after !== undefined) {
        const from = await c.files.findOne({ _id: query.after, ...visible(viewer) }, { projection: { createdAt: 1 } });
        // An `after` that is no visible file of the viewer's: nothing follows it.
        if (!from) return [];
        const beyond = query.order === 'asc' ? '$gt' : '$lt';
        filter.$or = [{ createdAt: { [beyond]: from.createdAt } }, { createdAt: from.createdAt, _id: { [beyond]: from._id } }];
      }
      const docs = await c.files.find(filter, projection).sort({ createdAt: direction, _id: direction }).limit(query.limit).toArray();
      return docs.map(toFile);
    },
    async readVisible(viewer, id) {
      return withContent(await c.files.findOne({ _id: id, ...visible(viewer) }));
    },
    async read(id) {
      return withContent(await c.files.findOne({ _id: id }));
    },
    async deleteVisible(viewer, id) {
      const doc = await c.files.findOneAndDelete({ _id: id, ...visible(viewer) });
      if (!doc) return false;
      await bucket.delete(doc.contentId).catch((err: unknown) => {
        // Already gone (a delete retried after the bytes went): nothing left to remove.
        if (!/^File not found for id /.test(err instanceof Error ? err.message : '')) throw err;
      });
      return true;
    },
  };
}
