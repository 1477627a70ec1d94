import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { FileViewer, StoredFileRecord } from '../../../src/store/types';
import { at, T0, uid, type StoreHandle } from './fixtures';

function fileRecord(orgId: string, userId: string | null, content: Buffer, overrides: Partial<StoredFileRecord> = {}): StoredFileRecord {
  return {
    id: `file-${randomBytes(12).toString('hex')}`,
    orgId,
    userId,
    filename: 'report.pdf',
    purpose: 'user_data',
    bytes: content.length,
    mediaType: 'application/pdf',
    createdAt: at(T0),
    ...overrides,
  };
}

const viewer = (orgId: string, userId: string | null, admin = false): FileViewer => ({ orgId, userId, admin });

/** Every byte value, so an encoding that mangles binary (UTF-8, NUL-terminated text) fails. */
const BINARY = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(300_000)]);

export function filesContract(h: StoreHandle): void {
  describe('stored files', () => {
    it('keeps the bytes exactly and the record as given; the system read needs no viewer', async () => {
      const org = uid('org');
      const file = fileRecord(org, 'ann', BINARY);
      await h.store.files.create(file, BINARY);
      assert.deepEqual(await h.store.files.getVisible(viewer(org, 'ann'), file.id), file);
      const read = await h.store.files.readVisible(viewer(org, 'ann'), file.id);
      assert.deepEqual(read?.file, file);
      assert.ok(read?.content.equals(BINARY), 'the same bytes come back');
      const system = await h.store.files.read(file.id);
      assert.ok(system?.content.equals(BINARY));
      assert.equal(await h.store.files.read(`file-${'0'.repeat(24)}`), null);

      const empty = fileRecord(org, 'ann', Buffer.alloc(0), { filename: 'empty.txt', mediaType: 'text/plain' });
      await h.store.files.create(empty, Buffer.alloc(0));
      assert.equal((await h.store.files.readVisible(viewer(org, 'ann'), empty.id))?.content.length, 0);
    });

    it('refuses bytes that do not match the record, storing nothing', async () => {
      const org = uid('org');
      const file = fileRecord(org, 'ann', Buffer.from('abc'));
      await assert.rejects(h.store.files.create(file, Buffer.from('abcd')), /4 bytes given for a record of 3/);
      assert.equal(await h.store.files.read(file.id), null);
    });

    it('is visible to its owner and the organization admins only; never to another organization', async () => {
      const org = uid('org');
      const content = Buffer.from('secret numbers');
      const file = fileRecord(org, 'ann', content);
      await h.store.files.create(file, content);
      assert.ok(await h.store.files.getVisible(viewer(org, 'ann'), file.id));
      assert.ok(await h.store.files.getVisible(viewer(org, 'boss', true), file.id), 'an org admin sees it');
      assert.equal(await h.store.files.getVisible(viewer(org, 'bob'), file.id), null, 'another member does not');
      assert.equal(await h.store.files.getVisible(viewer(uid('org'), 'ann', true), file.id), null, "another organization's admin does not");
      assert.equal(await h.store.files.getVisible(viewer(org, null), file.id), null, 'a caller with no user does not');
      assert.equal(await h.store.files.readVisible(viewer(org, 'bob'), file.id), null);
      assert.equal(await h.store.files.deleteVisible(viewer(org, 'bob'), file.id), false);
      assert.equal(await h.store.files.deleteVisible(viewer(uid('org'), 'ann', true), file.id), false);
      assert.ok(await h.store.files.read(file.id), 'refused deletes left it');

      const systemMade = fileRecord(org, null, content);
      await h.store.files.create(systemMade, content);
      assert.ok(await h.store.files.getVisible(viewer(org, null), systemMade.id), 'a file made with no user is visible to a caller with none');
      assert.equal(await h.store.files.getVisible(viewer(org, 'ann'), systemMade.id), null);
    });

    it('lists visible files by creation time both ways, by purpose, after a file id, up to a limit', async () => {
      const org = uid('org');
      const content = Buffer.from('x');
      const made: StoredFileRecord[] = [];
      for (let i = 0; i < 5; i++) {
        const file = fileRecord(org, 'ann', content, { createdAt: at(T0 + i * 1000), purpose: i % 2 === 0 ? 'user_data' : 'tool_output' });
        await h.store.files.create(file, content);
        made.push(file);
      }
      // Same time as the last one: the id breaks the tie.
      const twin = fileRecord(org, 'ann', content, { createdAt: at(T0 + 4000) });
      await h.store.files.create(twin, content);
      made.push(twin);
      await h.store.files.create(fileRecord(org, 'bob', content, { createdAt: at(T0 + 500) }), content);
      const ascending = [...made].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id)).map((f) => f.id);
      const ids = async (query: Parameters<typeof h.store.files.listVisible>[1]) =>
        (await h.store.files.listVisible(viewer(org, 'ann'), query)).map((f) => f.id);

      assert.deepEqual(await ids({ limit: 100, order: 'asc' }), ascending, "ann's files, not bob's");
      assert.deepEqual(await ids({ limit: 100, order: 'desc' }), [...ascending].reverse());
      assert.deepEqual(await ids({ limit: 2, order: 'desc' }), [...ascending].reverse().slice(0, 2));
      assert.deepEqual(await ids({ limit: 100, order: 'desc', after: ascending[4]! }), [...ascending].reverse().slice(2));
      assert.deepEqual(await ids({ limit: 100, order: 'asc', after: ascending[4]! }), ascending.slice(5));
      assert.deepEqual(await ids({ limit: 100, order: 'asc', after: ascending[0]! }), ascending.slice(1));
      assert.deepEqual(
        await ids({ limit: 100, order: 'asc', purpose: 'tool_output' }),
        made.filter((f) => f.purpose === 'tool_output').map((f) => f.id),
      );
      assert.deepEqual(await ids({ limit: 100, order: 'asc', after: `file-${'f'.repeat(24)}` }), [], 'an unknown cursor lists nothing');
      assert.equal((await h.store.files.listVisible(viewer(org, 'boss', true), { limit: 100, order: 'asc' })).length, 7, 'an admin lists everyone’s');
      assert.deepEqual(await h.store.files.listVisible(viewer(uid('org'), 'ann', true), { limit: 100, order: 'asc' }), []);
    });

    it('deletes the record and the bytes; a second delete finds nothing', async () => {
      const org = uid('org');
      const content = randomBytes(1000);
      const file = fileRecord(org, 'ann', content);
      await h.store.files.create(file, content);
      assert.equal(await h.store.files.deleteVisible(viewer(org, 'ann'), file.id), true);
      assert.equal(await h.store.files.getVisible(viewer(org, 'ann'), file.id), null);
      assert.equal(await h.store.files.read(file.id), null);
      assert.equal(await h.store.files.deleteVisible(viewer(org, 'ann'), file.id), false);

      const byAdmin = fileRecord(org, 'ann', content);
      await h.store.files.create(byAdmin, content);
      assert.equal(await h.store.files.deleteVisible(viewer(org, 'boss', true), byAdmin.id), true, 'an org admin may delete it');
    });
  });
}
