// Knowledge stores and documents on the wire: snake_case, Unix-second timestamps, `object` names in
// OpenAI's style (the nested-envelope family these paths belong to).
import type { KnowledgeDocumentRecord, KnowledgeDocumentSummary, KnowledgeSearchHit, KnowledgeStoreView } from '../../store/tool-records';

export const unixSeconds = (iso: string): number => Math.floor(Date.parse(iso) / 1000);

export function presentStore(store: KnowledgeStoreView): Record<string, unknown> {
  return {
    id: store.id,
    object: 'knowledge_store',
    name: store.name,
    description: store.description,
    document_count: store.documentCount,
    created_by: store.createdBy,
    created_at: unixSeconds(store.createdAt),
  };
}

export function presentDocument(doc: KnowledgeDocumentSummary | KnowledgeDocumentRecord): Record<string, unknown> {
  return {
    id: doc.id,
    object: 'knowledge_store.document',
    store_id: doc.storeId,
    title: doc.title,
    source: doc.source,
    metadata: doc.metadata,
    text_length: 'text' in doc ? doc.text.length : doc.textLength,
    ...('text' in doc ? { text: doc.text } : {}),
    created_at: unixSeconds(doc.createdAt),
  };
}

export function presentHit(hit: KnowledgeSearchHit): Record<string, unknown> {
  return {
    document_id: hit.documentId,
    store_id: hit.storeId,
    title: hit.title,
    source: hit.source,
    metadata: hit.metadata,
    snippet: hit.snippet,
    score: hit.score,
  };
}
