// svc_knowledge_store_search on a real store: one store by name or id, or all the organization's;
// results ranked with store, title, source, snippet and score; another organization's stores never
// searched; failures the model can act on (unknown store, no stores, bad arguments).
import assert from 'node:assert/strict';
import { createLogger } from '../../src/log/logger';
import { HOSTED_TOOL_FACTORIES } from '../../src/tools/catalog';
import { knowledgeStoreTools } from '../../src/tools/hosted/knowledge';
import { ToolRegistry } from '../../src/tools/registry';
import { ToolFailure } from '../../src/tools/types';
import { testConfig } from '../helpers/config';
import { openTestStore, type TestStore } from '../helpers/store';
import { storeToolHarness, type StoreToolHarness } from './store-tool-deps';

interface Result {
  store: string;
  document_id: string;
  title: string;
  source: string | null;
  snippet: string;
  score: number;
  metadata?: Record<string, unknown>;
}
interface Output {
  query: string;
  stores: string[];
  results: Result[];
  note?: string;
}

describe('svc_knowledge_store_search', function () {
  this.timeout(60_000);
  let store: TestStore;
  let h: StoreToolHarness;

  before(async () => {
    store = await openTestStore('embedded');
    h = await storeToolHarness(knowledgeStoreTools, store.store, testConfig());
    const at = new Date().toISOString();
    for (const [id, orgId, name] of [
      ['ks_hr', 'acme', 'hr'],
      ['ks_eng', 'acme', 'engineering'],
      ['ks_other', 'other', 'hr'],
    ] as const) {
      await store.store.knowledge.createStore({ id, orgId, name, description: null, createdBy: null, createdAt: at });
    }
    const add = async (id: string, orgId: string, storeId: string, title: string, text: string, source: string | null = null) => {
      assert.ok(
        await store.store.knowledge.addDocument({ id, orgId, storeId, title, text, source, metadata: id === 'vacation' ? { owner: 'HR' } : {}, createdAt: at }),
      );
    };
    await add(
      'vacation',
      'acme',
      'ks_hr',
      'Vacation policy',
      'Employees get 25 vacation days a year. Unused vacation days carry over until March.',
      'https://intranet.example/vacation',
    );
    await add('sick', 'acme', 'ks_hr', 'Sick leave', 'Report sick leave to your manager. A vacation day cannot be turned into a sick day.');
    await add('deploy', 'acme', 'ks_eng', 'Deploying', 'Deploys happen on weekdays; no deploys before a vacation week.', 'deploy-runbook.md');
    await add('theirs', 'other', 'ks_other', 'Vacation at Other Inc.', 'Vacation days at Other Inc. are unlimited.');
  });
  after(async () => {
    await h?.close();
    await store?.cleanup();
  });

  const search = async (args: Record<string, unknown>, orgId = 'acme'): Promise<Output> =>
    JSON.parse((await h.tool('svc_knowledge_store_search').execute(args, h.ctx(orgId))).output) as Output;

  it('searches one store by name, best match first, with store, title, source, snippet and score', async () => {
    const out = await search({ query: 'vacation days', store: 'hr' });
    assert.deepEqual(out.stores, ['hr']);
    assert.deepEqual(
      out.results.map((r) => r.document_id),
      ['vacation', 'sick'],
    );
    const [best, next] = out.results as [Result, Result];
    assert.equal(best.store, 'hr');
    assert.equal(best.title, 'Vacation policy');
    assert.equal(best.source, 'https://intranet.example/vacation');
    assert.deepEqual(best.metadata, { owner: 'HR' });
    assert.match(best.snippet, /\*\*vacation\*\* \*\*days\*\*/);
    assert.ok(best.score > next.score && next.score > 0);
    assert.equal(next.metadata, undefined, 'no empty metadata shown');
  });

  it('takes a store id too, and searches every store of the organization when none is named', async () => {
    assert.deepEqual(
      (await search({ query: 'deploys', store: 'ks_eng' })).results.map((r) => r.document_id),
      ['deploy'],
    );
    const all = await search({ query: 'vacation' });
    assert.deepEqual([...all.stores].sort(), ['engineering', 'hr']);
    assert.deepEqual([...all.results.map((r) => r.document_id)].sort(), ['deploy', 'sick', 'vacation']);
    assert.ok(!all.results.some((r) => r.document_id === 'theirs'), "another organization's documents are never found");
    assert.equal((await search({ query: 'vacation', limit: 1 })).results.length, 1);
  });

  it("searches only the caller's organization: its own store of the same name, never another's by id", async () => {
    const theirs = await search({ query: 'vacation', store: 'hr' }, 'other');
    assert.deepEqual(
      theirs.results.map((r) => r.document_id),
      ['theirs'],
    );
    await assert.rejects(search({ query: 'vacation', store: 'ks_hr' }, 'other'), (err: unknown) => {
      assert.ok(err instanceof ToolFailure);
      assert.equal(err.message, 'No knowledge store named or with id "ks_hr" in this organization. Its stores: hr.');
      return true;
    });
  });

  it('says when nothing matches, when a store does not exist, and when the organization has none', async () => {
    const none = await search({ query: 'zebra' });
    assert.deepEqual(none.results, []);
    assert.match(none.note ?? '', /No document matches/);
    await assert.rejects(
      search({ query: 'x', store: 'finance' }),
      /No knowledge store named or with id "finance" in this organization\. Its stores: engineering, hr\./,
    );
    await assert.rejects(search({ query: 'x' }, 'org-without-stores'), /This organization has no knowledge stores yet/);
  });

  it('refuses bad arguments as failures the model sees', async () => {
    for (const [args, pattern] of [
      [{ query: '   ' }, /query must be non-empty/],
      [{ query: 'q'.repeat(1001) }, /at most 1000 characters/],
      [{ query: 'x', store: 3 }, /store must be/],
      [{ query: 'x', limit: 0 }, /limit must be an integer/],
    ] as const) {
      await assert.rejects(search(args), (err: unknown) => err instanceof ToolFailure && pattern.test(err.message));
    }
  });

  it('is in the hosted catalog', async () => {
    const registry = await ToolRegistry.create({ ...h.deps, logger: createLogger({ level: 'error', silent: true }) }, HOSTED_TOOL_FACTORIES);
    try {
      assert.ok(registry.get('acme', 'svc_knowledge_store_search'));
    } finally {
      await registry.close();
    }
  });
});
