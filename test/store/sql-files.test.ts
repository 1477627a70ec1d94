// Where the SQL stores keep a stored file's bytes: the embedded store in a file under
// <store.path>/files (never in PGlite's memory), PostgreSQL in the row's bytea column.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { StoredFileRecord } from '../../src/store/types';
import { openTestStore, type TestStore } from '../helpers/store';

function record(content: Buffer): StoredFileRecord {
  return {
    id: `file-${randomBytes(12).toString('hex')}`,
    orgId: 'acme',
    userId: 'ann',
    filename: 'data.bin',
    purpose: 'user_data',
    bytes: content.length,
    mediaType: 'application/octet-stream',
    createdAt: new Date().toISOString(),
  };
}

describe('SQL stores: where stored file bytes live', function () {
  this.timeout(60_000);
  let current: TestStore | null = null;
  afterEach(async () => {
    await current?.cleanup();
    current = null;
  });

  it('embedded: in <store.path>/files/<id>, removed with the record', async () => {
    current = await openTestStore('embedded');
    const content = randomBytes(4096);
    const file = record(content);
    await current.store.files.create(file, content);
    const onDisk = path.join(current.config.path, 'files', file.id);
    assert.ok((await readFile(onDisk)).equals(content));
    assert.equal(await current.store.files.deleteVisible({ orgId: 'acme', userId: 'ann', admin: false }, file.id), true);
    await assert.rejects(access(onDisk), { code: 'ENOENT' });
  });

  it('postgres: in the row, no directory needed', async () => {
    current = await openTestStore('postgres');
    const content = randomBytes(4096);
    const file = record(content);
    await current.store.files.create(file, content);
    const client = new pg.Client({ connectionString: current.config.url! });
    await client.connect();
    try {
      const { rows } = await client.query<{ content: Buffer }>('SELECT content FROM files WHERE id = $1', [file.id]);
      assert.ok(rows[0]?.content.equals(content));
    } finally {
      await client.end();
    }
  });
});
