// Records of what hosted tools keep in the store: an organization's knowledge stores with their
// documents (searched by svc_knowledge_store_search), and dashboards (svc_dashboard_generate/update).
// Timestamps are ISO-8601 UTC strings at this boundary, as everywhere in the store.

/** Scalar metadata of a document, shown with its search results. */
export type DocumentMetadata = Record<string, string | number | boolean | null>;

export interface KnowledgeStoreRecord {
  id: string;
  orgId: string;
  /** Unique within the organization (the tool's `store` argument may name it). */
  name: string;
  description: string | null;
  createdBy: string | null;
  createdAt: string;
}

/** A knowledge store as read back: with how many documents it holds. */
export interface KnowledgeStoreView extends KnowledgeStoreRecord {
  documentCount: number;
}

export interface KnowledgeDocumentRecord {
  id: string;
  orgId: string;
  storeId: string;
  title: string;
  /** Where the text came from: a URL or a name; null when not given. */
  source: string | null;
  metadata: DocumentMetadata;
  text: string;
  createdAt: string;
}

/** A document without its text (listings). */
export interface KnowledgeDocumentSummary extends Omit<KnowledgeDocumentRecord, 'text'> {
  /** Length of the text in characters (UTF-16 code units). */
  textLength: number;
}

export interface KnowledgeSearchHit {
  documentId: string;
  storeId: string;
  title: string;
  source: string | null;
  metadata: DocumentMetadata;
  /** The passage(s) of the text around the query's terms, terms marked **like this**. */
  snippet: string;
  /** Relevance, higher is better; comparable within one search only (each backend ranks its own way). */
  score: number;
}

export interface DashboardRecord {
  id: string;
  orgId: string;
  title: string;
  /** The Vega-Lite spec without its top-level `data` (served with `data: {values: data}`). */
  spec: Record<string, unknown>;
  /** The records the chart is drawn from. */
  data: Record<string, unknown>[];
  /** 1 when created, incremented by each update (the compare-and-set guard of updates). */
  version: number;
  createdBy: string | null;
  /** The conversation whose tool call made it, when one did. */
  conversationId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A dashboard without its spec and data (listings). */
export type DashboardSummary = Omit<DashboardRecord, 'spec' | 'data'>;

/** What an update may change; absent fields are kept. */
export interface DashboardPatch {
  title?: string;
  spec?: Record<string, unknown>;
  data?: Record<string, unknown>[];
}
