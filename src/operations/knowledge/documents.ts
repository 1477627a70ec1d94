// POST/GET /v1/knowledge_stores/{store_id}/documents, GET/DELETE …/documents/{document_id}, and
// POST /v1/knowledge_stores/{store_id}/search.
import { callerOf } from '../../agents/access';
import { GatewayError } from '../../http/errors';
import { newKnowledgeDocumentId } from '../../knowledge/stores';
import type { DocumentMetadata } from '../../store/tool-records';
import type { Handler } from '../types';
import { presentDocument, presentHit } from './presenters';
import { knowledgeStoreOf } from './stores';
import { refuseNul } from './text-fields';

const DEFAULT_LIMIT = 20;
const DEFAULT_SEARCH_LIMIT = 10;

const documentNotFound = (id: string): GatewayError => new GatewayError('not_found', `No document found with id '${id}'.`, { param: 'document_id' });

export const addKnowledgeDocument: Handler = async (ctx, services) => {
  const body = ctx.body as { title: string; text: string; source?: string; metadata?: DocumentMetadata };
  for (const field of ['title', 'text', 'source', 'metadata'] as const) refuseNul(body[field], field);
  const knowledgeStore = await knowledgeStoreOf(ctx, services);
  const record = {
    id: newKnowledgeDocumentId(),
    orgId: knowledgeStore.orgId,
    storeId: knowledgeStore.id,
    title: body.title,
    source: body.source ?? null,
    metadata: body.metadata ?? {},
    text: body.text,
    createdAt: services.clock.now().toISOString(),
  };
  // The store may have been deleted since it was read: the insert itself checks again.
  if (!(await services.store.knowledge.addDocument(record))) {
    throw new GatewayError('not_found', `No knowledge store found with id '${knowledgeStore.id}'.`, { param: 'store_id' });
  }
  ctx.resourceIds['document_id'] = record.id;
  const { text, ...summary } = record;
  return { status: 201, body: presentDocument({ ...summary, textLength: text.length }) };
};

export const listKnowledgeDocuments: Handler = async (ctx, services) => {
  const knowledgeStore = await knowledgeStoreOf(ctx, services);
  const limit = typeof ctx.query['limit'] === 'number' ? ctx.query['limit'] : DEFAULT_LIMIT;
  const after = typeof ctx.query['after'] === 'string' ? ctx.query['after'] : undefined;
  if (after !== undefined && !(await services.store.knowledge.getDocument(knowledgeStore.orgId, knowledgeStore.id, after))) {
    throw new GatewayError('bad_request', `Invalid request: 'after' names no document of knowledge store ${knowledgeStore.id}.`, { param: 'after' });
  }
  // One extra row tells whether another page follows.
  const rows = await services.store.knowledge.listDocuments(knowledgeStore.orgId, knowledgeStore.id, {
    limit: limit + 1,
    ...(after !== undefined ? { after } : {}),
  });
  const data = rows.slice(0, limit);
  return {
    status: 200,
    body: {
      object: 'list',
      data: data.map(presentDocument),
      first_id: data[0]?.id ?? null,
      last_id: data[data.length - 1]?.id ?? null,
      has_more: rows.length > limit,
    },
  };
};

export const getKnowledgeDocument: Handler = async (ctx, services) => {
  const knowledgeStore = await knowledgeStoreOf(ctx, services);
  const id = ctx.params['document_id'] ?? '';
  const doc = await services.store.knowledge.getDocument(knowledgeStore.orgId, knowledgeStore.id, id);
  if (!doc) throw documentNotFound(id);
  return { status: 200, body: presentDocument(doc) };
};

export const deleteKnowledgeDocument: Handler = async (ctx, { store }) => {
  const storeId = ctx.params['store_id'] ?? '';
  const id = ctx.params['document_id'] ?? '';
  if (!(await store.knowledge.deleteDocument(callerOf(ctx).orgId, storeId, id))) throw documentNotFound(id);
  return { status: 200, body: { id, object: 'knowledge_store.document.deleted', deleted: true } };
};

export const searchKnowledgeStore: Handler = async (ctx, services) => {
  const body = ctx.body as { query: string; limit?: number };
  refuseNul(body.query, 'query');
  const knowledgeStore = await knowledgeStoreOf(ctx, services);
  const hits = await services.store.knowledge.search(knowledgeStore.orgId, [knowledgeStore.id], body.query, body.limit ?? DEFAULT_SEARCH_LIMIT);
  return { status: 200, body: { object: 'list', data: hits.map(presentHit) } };
};
