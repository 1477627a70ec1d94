// POST/GET /v1/knowledge_stores, GET/DELETE /v1/knowledge_stores/{store_id}. Everything is scoped to
// the caller's organization: another organization's store is the 404 of one that does not exist.
import { callerOf } from '../../agents/access';
import { GatewayError } from '../../http/errors';
import { newKnowledgeStoreId } from '../../knowledge/stores';
import type { RequestContext } from '../../pipeline/context';
import type { AppServices } from '../../services';
import type { KnowledgeStoreView } from '../../store/tool-records';
import type { Handler } from '../types';
import { presentStore } from './presenters';
import { refuseNul } from './text-fields';

export async function knowledgeStoreOf(ctx: RequestContext, services: AppServices): Promise<KnowledgeStoreView> {
  const id = ctx.params['store_id'] ?? '';
  const found = await services.store.knowledge.getStore(callerOf(ctx).orgId, id);
  if (!found) throw new GatewayError('not_found', `No knowledge store found with id '${id}'.`, { param: 'store_id' });
  return found;
}

export const createKnowledgeStore: Handler = async (ctx, { store, clock }) => {
  const caller = callerOf(ctx);
  const body = ctx.body as { name: string; description?: string };
  refuseNul(body.description, 'description');
  const record = {
    id: newKnowledgeStoreId(),
    orgId: caller.orgId,
    name: body.name,
    description: body.description ?? null,
    createdBy: caller.userId,
    createdAt: clock.now().toISOString(),
  };
  if (!(await store.knowledge.createStore(record))) {
    throw new GatewayError('conflict', `A knowledge store named '${body.name}' already exists in this organization.`, { param: 'name' });
  }
  ctx.resourceIds['store_id'] = record.id;
  return { status: 201, body: presentStore({ ...record, documentCount: 0 }) };
};

export const listKnowledgeStores: Handler = async (ctx, { store }) => {
  const stores = await store.knowledge.listStores(callerOf(ctx).orgId);
  return { status: 200, body: { object: 'list', data: stores.map(presentStore) } };
};

export const getKnowledgeStore: Handler = async (ctx, services) => ({ status: 200, body: presentStore(await knowledgeStoreOf(ctx, services)) });

export const deleteKnowledgeStore: Handler = async (ctx, { store }) => {
  const id = ctx.params['store_id'] ?? '';
  if (!(await store.knowledge.deleteStore(callerOf(ctx).orgId, id))) {
    throw new GatewayError('not_found', `No knowledge store found with id '${id}'.`, { param: 'store_id' });
  }
  return { status: 200, body: { id, object: 'knowledge_store.deleted', deleted: true } };
};
