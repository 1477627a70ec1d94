// Knowledge stores as the API and svc_knowledge_store_search see them: ids, and which stores a search
// covers. The store port does the searching (PostgreSQL full text, or MongoDB's text index).
import { randomUUID } from 'node:crypto';
import type { Store } from '../store/port';
import type { KnowledgeStoreView } from '../store/tool-records';

export const newKnowledgeStoreId = (): string => `ks_${randomUUID().replaceAll('-', '')}`;
export const newKnowledgeDocumentId = (): string => `kdoc_${randomUUID().replaceAll('-', '')}`;

/**
 * The organization's stores a search covers: the one named by `ref` (its id, else its name), or
 * every store of the organization when `ref` is absent. Null when `ref` names none of them.
 */
export async function storesToSearch(store: Store, orgId: string, ref: string | undefined): Promise<KnowledgeStoreView[] | null> {
  if (ref === undefined) return store.knowledge.listStores(orgId);
  const found = (await store.knowledge.getStore(orgId, ref)) ?? (await store.knowledge.getStoreByName(orgId, ref));
  return found ? [found] : null;
}
