import type { Handler } from '../types';
import { addKnowledgeDocument, deleteKnowledgeDocument, getKnowledgeDocument, listKnowledgeDocuments, searchKnowledgeStore } from './documents';
import { createKnowledgeStore, deleteKnowledgeStore, getKnowledgeStore, listKnowledgeStores } from './stores';

export const knowledgeHandlers: Readonly<Record<string, Handler>> = {
  createKnowledgeStore,
  listKnowledgeStores,
  getKnowledgeStore,
  deleteKnowledgeStore,
  addKnowledgeDocument,
  listKnowledgeDocuments,
  getKnowledgeDocument,
  deleteKnowledgeDocument,
  searchKnowledgeStore,
};
