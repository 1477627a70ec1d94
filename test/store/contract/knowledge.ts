import assert from 'node:assert/strict';
import type { KnowledgeDocumentRecord } from '../../../src/store/tool-records';
import { at, T0, uid, type StoreHandle } from './fixtures';

function doc(overrides: Partial<KnowledgeDocumentRecord> & { orgId: string; storeId: string }): KnowledgeDocumentRecord {
  return {
    id: uid('kdoc'),
    title: 'Untitled',
    source: null,
    metadata: {},
    text: 'Nothing in particular.',
    createdAt: at(T0),
    ...overrides,
  };
}

export function knowledgeContract(h: StoreHandle): void {
  describe('knowledge stores', () => {
    it('creates stores with names unique per organization, lists them by name with document counts', async () => {
      const org = uid('org');
      const other = uid('org');
      const a = uid('ks');
      const b = uid('ks');
      assert.equal(await h.store.knowledge.createStore({ id: b, orgId: org, name: 'policies', description: 'HR', createdBy: 'u1', createdAt: at(T0) }), true);
      assert.equal(await h.store.knowledge.createStore({ id: a, orgId: org, name: 'handbook', description: null, createdBy: null, createdAt: at(T0) }), true);
      // The same name again in the organization is refused; in another organization it is fine.
      assert.equal(
        await h.store.knowledge.createStore({ id: uid('ks'), orgId: org, name: 'policies', description: null, createdBy: null, createdAt: at(T0) }),
        false,
      );
      assert.equal(
        await h.store.knowledge.createStore({ id: uid('ks'), orgId: other, name: 'policies', description: null, createdBy: null, createdAt: at(T0) }),
        true,
      );
      assert.equal(await h.store.knowledge.addDocument(doc({ orgId: org, storeId: b })), true);
      const stores = await h.store.knowledge.listStores(org);
      assert.deepEqual(
        stores.map((s) => [s.id, s.name, s.documentCount]),
        [
          [a, 'handbook', 0],
          [b, 'policies', 1],
        ],
      );
      assert.deepEqual(await h.store.knowledge.getStore(org, b), {
        id: b,
        orgId: org,
        name: 'policies',
        description: 'HR',
        createdBy: 'u1',
        createdAt: at(T0),
        documentCount: 1,
      });
      assert.equal((await h.store.knowledge.getStoreByName(org, 'handbook'))?.id, a);
      // Another organization's store is absent, by id and by name.
      assert.equal(await h.store.knowledge.getStore(other, b), null);
      assert.equal(await h.store.knowledge.getStoreByName(other, 'handbook'), null);
    });

    it('adds documents only to an existing store of the organization, lists them in insertion order, pages with after', async () => {
      const org = uid('org');
      const store = uid('ks');
      await h.store.knowledge.createStore({ id: store, orgId: org, name: 'n', description: null, createdBy: null, createdAt: at(T0) });
      assert.equal(await h.store.knowledge.addDocument(doc({ orgId: uid('org'), storeId: store })), false, "another organization's store");
      assert.equal(await h.store.knowledge.addDocument(doc({ orgId: org, storeId: uid('ks') })), false, 'no such store');
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const d = doc({ orgId: org, storeId: store, title: `Doc ${i}`, text: 'x'.repeat(10 + i), createdAt: at(T0 + i * 1000), metadata: { n: i, tag: 'a' } });
        ids.push(d.id);
        assert.equal(await h.store.knowledge.addDocument(d), true);
      }
      const first = await h.store.knowledge.listDocuments(org, store, { limit: 2 });
      assert.deepEqual(
        first.map((d) => [d.id, d.title, d.textLength, d.metadata]),
        [
          [ids[0], 'Doc 0', 10, { n: 0, tag: 'a' }],
          [ids[1], 'Doc 1', 11, { n: 1, tag: 'a' }],
        ],
      );
      assert.ok(!('text' in first[0]!), 'listings carry no text');
      const rest = await h.store.knowledge.listDocuments(org, store, { limit: 2, after: ids[1]! });
      assert.deepEqual(
        rest.map((d) => d.id),
        [ids[2]],
      );
      assert.equal((await h.store.knowledge.getDocument(org, store, ids[2]!))?.text, 'x'.repeat(12));
      assert.equal(await h.store.knowledge.getDocument(uid('org'), store, ids[2]!), null);
      assert.deepEqual(await h.store.knowledge.listDocuments(uid('org'), store, { limit: 10 }), []);
    });

    it('search ranks the better match first, with snippets around the terms, within the stores named', async () => {
      const org = uid('org');
      const store = uid('ks');
      const second = uid('ks');
      await h.store.knowledge.createStore({ id: store, orgId: org, name: 'main', description: null, createdBy: null, createdAt: at(T0) });
      await h.store.knowledge.createStore({ id: second, orgId: org, name: 'second', description: null, createdBy: null, createdAt: at(T0) });
      const filler = 'The quarterly report covers revenue, hiring and office moves in some detail for every region. ';
      const strong = doc({
        orgId: org,
        storeId: store,
        title: 'Expense reimbursement policy',
        source: 'https://intranet.example/expenses',
        text: `${filler.repeat(3)}Travel expenses are reimbursed within 30 days when receipts are attached. Expenses over 500 euros need approval.`,
      });
      const weak = doc({ orgId: org, storeId: store, title: 'Office moves', text: `${filler}A short note mentions expenses once.` });
      const unrelated = doc({ orgId: org, storeId: store, title: 'Cafeteria menu', text: 'Soup on Mondays, fish on Fridays.' });
      const elsewhere = doc({ orgId: org, storeId: second, title: 'Expense tips', text: 'Expenses expenses expenses.' });
      for (const d of [weak, unrelated, strong, elsewhere]) assert.equal(await h.store.knowledge.addDocument(d), true);

      const hits = await h.store.knowledge.search(org, [store], 'expenses reimbursed', 10);
      assert.equal(hits[0]?.documentId, strong.id, 'the document with both terms (one in its title) ranks first');
      assert.ok(!hits.some((x) => x.documentId === unrelated.id || x.documentId === elsewhere.id), 'no unrelated document, none of another store');
      assert.equal(hits[0]?.title, 'Expense reimbursement policy');
      assert.equal(hits[0]?.source, 'https://intranet.example/expenses');
      assert.equal(hits[0]?.storeId, store);
      assert.match(hits[0]?.snippet ?? '', /\*\*reimbursed\*\*/i);
      assert.ok((hits[0]?.snippet.length ?? 0) < 600, 'a snippet, not the document');
      if (hits.length > 1) assert.ok(hits[0]!.score > hits[1]!.score, 'scores descend');

      // Several stores at once; the limit cuts the list.
      const both = await h.store.knowledge.search(org, [store, second], 'expenses', 10);
      assert.ok(both.some((x) => x.documentId === elsewhere.id));
      assert.equal((await h.store.knowledge.search(org, [store, second], 'expenses', 1)).length, 1);
      // Another organization finds nothing, even naming the store; an empty store list finds nothing.
      assert.deepEqual(await h.store.knowledge.search(uid('org'), [store], 'expenses', 10), []);
      assert.deepEqual(await h.store.knowledge.search(org, [], 'expenses', 10), []);
      // A query of stop words only, or of no words at all, matches nothing (and is no error).
      assert.deepEqual(await h.store.knowledge.search(org, [store], 'the and of', 10), []);
      assert.deepEqual(await h.store.knowledge.search(org, [store], '!!! ***', 10), []);
    });

    it('deleting a document or a store removes it from listings and search', async () => {
      const org = uid('org');
      const store = uid('ks');
      await h.store.knowledge.createStore({ id: store, orgId: org, name: 'gone', description: null, createdBy: null, createdAt: at(T0) });
      const a = doc({ orgId: org, storeId: store, title: 'Zebra facts', text: 'Zebras have stripes.' });
      const b = doc({ orgId: org, storeId: store, title: 'More zebra facts', text: 'Zebras live in Africa.' });
      await h.store.knowledge.addDocument(a);
      await h.store.knowledge.addDocument(b);
      assert.equal(await h.store.knowledge.deleteDocument(uid('org'), store, a.id), false, "another organization's delete");
      assert.equal(await h.store.knowledge.deleteDocument(org, store, a.id), true);
      assert.equal(await h.store.knowledge.deleteDocument(org, store, a.id), false);
      assert.deepEqual(
        (await h.store.knowledge.search(org, [store], 'zebras', 10)).map((x) => x.documentId),
        [b.id],
      );
      assert.equal(await h.store.knowledge.deleteStore(uid('org'), store), false);
      assert.equal(await h.store.knowledge.deleteStore(org, store), true);
      assert.equal(await h.store.knowledge.getStore(org, store), null);
      assert.equal(await h.store.knowledge.getDocument(org, store, b.id), null);
      assert.deepEqual(await h.store.knowledge.search(org, [store], 'zebras', 10), []);
      assert.equal(await h.store.knowledge.deleteStore(org, store), false);
    });
  });
}
