// svc_knowledge_store_search: ranked full-text search of the organization's knowledge stores (their
// documents are added through POST /v1/knowledge_stores/{id}/documents). One store by name or id, or
// all of the organization's; each result with its store, title, source, a snippet around the matching
// words and a score. The search itself is the store's (PostgreSQL full text, MongoDB's text index).
import { storesToSearch } from '../../../knowledge/stores';
import { ToolFailure, type HostedTool, type HostedToolFactory, type ToolDeps } from '../../types';

const DEFAULT_RESULTS = 5;
const MAX_RESULTS = 20;
const MAX_QUERY = 1000;
/** Store names listed when the one asked for does not exist. */
const NAMES_SHOWN = 20;

function searchTool(deps: ToolDeps): HostedTool {
  return {
    type: 'svc_knowledge_store_search',
    description:
      "Search the organization's knowledge stores (documents its users added) by full text. Returns the best-matching documents with " +
      'title, source, a snippet around the matching words (marked **like this**) and a relevance score. Query syntax: words, "exact phrases", -excluded.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', maxLength: MAX_QUERY, description: 'What to look for.' },
        store: { type: 'string', description: "A knowledge store's name or id; default: every store of the organization." },
        limit: { type: 'integer', minimum: 1, maximum: MAX_RESULTS, description: `Most results (default ${DEFAULT_RESULTS}).` },
      },
      required: ['query'],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const query = typeof args['query'] === 'string' ? args['query'].trim() : '';
      if (query === '' || query.length > MAX_QUERY || query.includes('\0')) {
        throw new ToolFailure(`Argument query must be non-empty text of at most ${MAX_QUERY} characters.`);
      }
      const ref = args['store'];
      if (ref !== undefined && (typeof ref !== 'string' || ref === '')) throw new ToolFailure("Argument store must be a knowledge store's name or id.");
      const limit = args['limit'] ?? DEFAULT_RESULTS;
      if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)
        throw new ToolFailure(`Argument limit must be an integer from 1 to ${MAX_RESULTS}.`);

      const stores = await storesToSearch(deps.store, ctx.orgId, ref);
      if (stores === null) {
        const names = (await deps.store.knowledge.listStores(ctx.orgId)).map((s) => s.name);
        const shown = names.length > 0 ? `Its stores: ${names.slice(0, NAMES_SHOWN).join(', ')}${names.length > NAMES_SHOWN ? ', …' : ''}.` : 'It has none.';
        throw new ToolFailure(`No knowledge store named or with id ${JSON.stringify(ref)} in this organization. ${shown}`);
      }
      if (stores.length === 0) throw new ToolFailure('This organization has no knowledge stores yet: nothing to search.');
      const names = new Map(stores.map((s) => [s.id, s.name]));
      const hits = await deps.store.knowledge.search(
        ctx.orgId,
        stores.map((s) => s.id),
        query,
        Math.min(limit, MAX_RESULTS),
      );
      const results = hits.map((hit) => ({
        store: names.get(hit.storeId) ?? hit.storeId,
        document_id: hit.documentId,
        title: hit.title,
        source: hit.source,
        snippet: hit.snippet,
        score: Math.round(hit.score * 10_000) / 10_000,
        ...(Object.keys(hit.metadata).length > 0 ? { metadata: hit.metadata } : {}),
      }));
      return {
        output: JSON.stringify({
          query,
          stores: stores.map((s) => s.name),
          results,
          ...(results.length === 0 ? { note: 'No document matches; try other or fewer words.' } : {}),
        }),
      };
    },
  };
}

export const knowledgeStoreTools: HostedToolFactory = (deps) => ({ tools: [searchTool(deps)] });
