// Knowledge stores on SQL (embedded PGlite and PostgreSQL, one code path): ranked full-text search
// over a stored tsvector (migration 12) with websearch_to_tsquery, ts_rank and ts_headline.
import type { KnowledgeRepository } from '../port';
import type { DocumentMetadata, KnowledgeDocumentRecord, KnowledgeDocumentSummary, KnowledgeStoreView } from '../tool-records';
import type { SqlDatabase } from './database';
import { iso, json, type Timestamp } from './rows';

interface StoreRow {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  created_by: string | null;
  created_at: Timestamp;
  document_count: number;
}

interface DocumentRow {
  id: string;
  org_id: string;
  store_id: string;
  title: string;
  source: string | null;
  metadata: DocumentMetadata;
  created_at: Timestamp;
}

interface HitRow {
  id: string;
  store_id: string;
  title: string;
  source: string | null;
  metadata: DocumentMetadata;
  snippet: string;
  score: number;
}

const STORE_COLUMNS = `s.id, s.org_id, s.name, s.description, s.created_by, s.created_at,
  (SELECT count(*)::int FROM knowledge_documents d WHERE d.store_id = s.id) AS document_count`;

/**
 * ts_headline options: up to two passages of about 12 to 30 words around the query's terms, terms
 * marked as Markdown bold (the snippet is read by models and people alike, never as HTML).
 */
const HEADLINE_OPTIONS = 'MaxFragments=2, MaxWords=30, MinWords=12, StartSel=**, StopSel=**, FragmentDelimiter=" … "';

function toStore(row: StoreRow): KnowledgeStoreView {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    description: row.description,
    createdBy: row.created_by,
    createdAt: iso(row.created_at),
    documentCount: row.document_count,
  };
}

function toSummary(row: DocumentRow & { text_length: number }): KnowledgeDocumentSummary {
  return {
    id: row.id,
    orgId: row.org_id,
    storeId: row.store_id,
    title: row.title,
    source: row.source,
    metadata: row.metadata,
    createdAt: iso(row.created_at),
    textLength: row.text_length,
  };
}

export function sqlKnowledge(db: SqlDatabase): KnowledgeRepository {
  return {
    async createStore(store) {
      const rows = await db.query<{ id: string }>(
        `INSERT INTO knowledge_stores (id, org_id, name, description, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6::timestamptz)
         ON CONFLICT (org_id, name) DO NOTHING RETURNING id`,
        [store.id, store.orgId, store.name, store.description, store.createdBy, store.createdAt],
      );
      return rows.length > 0;
    },
    async getStore(orgId, storeId) {
      const [row] = await db.query<StoreRow>(`SELECT ${STORE_COLUMNS} FROM knowledge_stores s WHERE s.org_id = $1 AND s.id = $2`, [orgId, storeId]);
      return row ? toStore(row) : null;
    },
    async getStoreByName(orgId, name) {
      const [row] = await db.query<StoreRow>(`SELECT ${STORE_COLUMNS} FROM knowledge_stores s WHERE s.org_id = $1 AND s.name = $2`, [orgId, name]);
      return row ? toStore(row) : null;
    },
    async listStores(orgId) {
      const rows = await db.query<StoreRow>(`SELECT ${STORE_COLUMNS} FROM knowledge_stores s WHERE s.org_id = $1 ORDER BY s.name`, [orgId]);
      return rows.map(toStore);
    },
    async deleteStore(orgId, storeId) {
      // The documents go with it (ON DELETE CASCADE), in the same statement.
      const rows = await db.query<{ id: string }>('DELETE FROM knowledge_stores WHERE org_id = $1 AND id = $2 RETURNING id', [orgId, storeId]);
      return rows.length > 0;
    },
    async addDocument(doc) {
      // Inserted only while the store exists in the organization: one statement, no window between check and write.
      const rows = await db.query<{ id: string }>(
        `INSERT INTO knowledge_documents (id, org_id, store_id, title, source, metadata, text, created_at)
         SELECT $1, $2, s.id, $4, $5, $6::jsonb, $7, $8::timestamptz FROM knowledge_stores s WHERE s.org_id = $2 AND s.id = $3
         RETURNING id`,
        [doc.id, doc.orgId, doc.storeId, doc.title, doc.source, json(doc.metadata), doc.text, doc.createdAt],
      );
      return rows.length > 0;
    },
    async getDocument(orgId, storeId, documentId) {
      const [row] = await db.query<DocumentRow & { text: string }>(
        `SELECT id, org_id, store_id, title, source, metadata, text, created_at FROM knowledge_documents WHERE org_id = $1 AND store_id = $2 AND id = $3`,
        [orgId, storeId, documentId],
      );
      if (!row) return null;
      const record: KnowledgeDocumentRecord = {
        id: row.id,
        orgId: row.org_id,
        storeId: row.store_id,
        title: row.title,
        source: row.source,
        metadata: row.metadata,
        text: row.text,
        createdAt: iso(row.created_at),
      };
      return record;
    },
    async listDocuments(orgId, storeId, { after, limit }) {
      const rows = await db.query<DocumentRow & { text_length: number }>(
        `SELECT d.id, d.org_id, d.store_id, d.title, d.source, d.metadata, d.created_at, length(d.text) AS text_length
         FROM knowledge_documents d
         WHERE d.org_id = $1 AND d.store_id = $2
           AND ($3::text IS NULL OR (d.created_at, d.id) > (SELECT a.created_at, a.id FROM knowledge_documents a WHERE a.store_id = $2 AND a.id = $3))
         ORDER BY d.created_at, d.id
         LIMIT $4`,
        [orgId, storeId, after ?? null, limit],
      );
      return rows.map(toSummary);
    },
    async deleteDocument(orgId, storeId, documentId) {
      const rows = await db.query<{ id: string }>('DELETE FROM knowledge_documents WHERE org_id = $1 AND store_id = $2 AND id = $3 RETURNING id', [
        orgId,
        storeId,
        documentId,
      ]);
      return rows.length > 0;
    },
    async search(orgId, storeIds, query, limit) {
      if (storeIds.length === 0) return [];
      // Ranked and cut to `limit` first: ts_headline re-parses a document's whole text, so only the
      // hits returned pay for it.
      const rows = await db.query<HitRow>(
        `WITH q AS (SELECT websearch_to_tsquery('english', $3) AS query),
         hits AS (
           SELECT d.id, d.store_id, d.title, d.source, d.metadata, d.text, ts_rank(d.search_vector, q.query) AS score
           FROM knowledge_documents d, q
           WHERE d.org_id = $1 AND d.store_id = ANY($2::text[]) AND d.search_vector @@ q.query
           ORDER BY score DESC, d.id
           LIMIT $4
         )
         SELECT hits.id, hits.store_id, hits.title, hits.source, hits.metadata, hits.score::float8 AS score,
           ts_headline('english', hits.text, q.query, '${HEADLINE_OPTIONS}') AS snippet
         FROM hits, q
         ORDER BY hits.score DESC, hits.id`,
        [orgId, storeIds, query, limit],
      );
      return rows.map((row) => ({
        documentId: row.id,
        storeId: row.store_id,
        title: row.title,
        source: row.source,
        metadata: row.metadata,
        snippet: row.snippet,
        score: Number(row.score),
      }));
    },
  };
}
