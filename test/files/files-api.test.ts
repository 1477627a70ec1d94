// The Files interface end to end with the official OpenAI SDK (upload, list, retrieve, download,
// delete) against a real gateway with authentication on: shapes, bytes, limits, permissions, errors.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import OpenAI, { APIError, toFile } from 'openai';
import request from 'supertest';
import { startTestGateway, TEST_KEYS, type TestGateway } from '../helpers/gateway';

const MAX_BYTES = 64 * 1024;

// Both SQL stores: the embedded one keeps the bytes in files, PostgreSQL in the row.
for (const driver of ['embedded', 'postgres'] as const) {
  describe(`Files API (OpenAI SDK), ${driver} store`, function () {
    this.timeout(60_000);
    let gw: TestGateway;
    const client = (who: keyof typeof TEST_KEYS): OpenAI => new OpenAI({ apiKey: TEST_KEYS[who], baseURL: `${gw.url}/v1`, maxRetries: 0 });

    before(async () => {
      gw = await startTestGateway({ driver, config: { plugins: { auth: { enabled: true } }, files: { maxBytes: MAX_BYTES } } });
    });
    after(async () => {
      await gw?.close();
    });

    async function apiError(promise: Promise<unknown>): Promise<APIError> {
      try {
        await promise;
      } catch (err) {
        assert.ok(err instanceof APIError, `expected an APIError, got ${String(err)}`);
        return err;
      }
      assert.fail('expected the call to fail');
    }

    it('uploads, retrieves, lists, downloads the same bytes, and deletes', async () => {
      const member = client('member');
      const bytes = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(5000)]);
      const created = await member.files.create({ file: await toFile(bytes, 'data.bin'), purpose: 'user_data' });
      assert.match(created.id, /^file-[0-9a-f]{24}$/);
      assert.deepEqual(
        { ...created, created_at: 0 },
        { id: created.id, object: 'file', bytes: bytes.length, created_at: 0, filename: 'data.bin', purpose: 'user_data', status: 'processed' },
      );
      assert.ok(Math.abs(created.created_at - Date.now() / 1000) < 60);

      assert.deepEqual(await member.files.retrieve(created.id), created);
      const listed = [];
      for await (const file of member.files.list()) listed.push(file.id);
      assert.ok(listed.includes(created.id));

      const response = await member.files.content(created.id);
      assert.ok(Buffer.from(await response.arrayBuffer()).equals(bytes), 'the downloaded bytes are the uploaded ones');
      assert.equal(response.headers.get('content-type'), 'application/octet-stream');
      assert.equal(response.headers.get('content-disposition'), 'attachment; filename="data.bin"');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');

      assert.deepEqual(await member.files.delete(created.id), { id: created.id, object: 'file', deleted: true });
      const gone = await apiError(member.files.retrieve(created.id));
      assert.equal(gone.status, 404);
      assert.deepEqual(gone.error, { message: `No file found with id '${created.id}'.`, type: 'invalid_request_error', code: null, param: 'file_id' });
      assert.equal((await apiError(member.files.delete(created.id))).status, 404);
    });

    it('keeps a non-ASCII file name and takes the media type from the part, else from the name', async () => {
      const member = client('member');
      const named = await member.files.create({ file: await toFile(Buffer.from('a,b\n1,2\n'), 'Übersicht 2024.csv'), purpose: 'assistants' });
      assert.equal(named.filename, 'Übersicht 2024.csv');
      const content = await member.files.content(named.id);
      assert.equal(content.headers.get('content-type'), 'text/csv');
      assert.equal(content.headers.get('content-disposition'), `attachment; filename="Ubersicht 2024.csv"; filename*=UTF-8''%C3%9Cbersicht%202024.csv`);

      const typed = await member.files.create({ file: await toFile(Buffer.from('{"a":1}'), 'payload', { type: 'application/json' }), purpose: 'user_data' });
      assert.equal((await member.files.content(typed.id)).headers.get('content-type'), 'application/json');
    });

    it('refuses a file over files.maxBytes with a 413 naming the limit, declared or streamed', async () => {
      const err = await apiError(client('member').files.create({ file: await toFile(randomBytes(MAX_BYTES + 1), 'big.bin'), purpose: 'user_data' }));
      assert.equal(err.status, 413);
      assert.deepEqual(err.error, {
        message: `The file is larger than the limit of ${MAX_BYTES} bytes (files.maxBytes).`,
        type: 'invalid_request_error',
        code: 'body_too_large',
        param: 'file',
      });

      // Chunked, with no Content-Length: found while reading; the rest is read and the answer is the same.
      const boundary = 'agwboundary';
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(`${gw.url}/v1/files`, {
          method: 'POST',
          headers: { ...gw.auth('member'), 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
        });
        req.on('response', (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.write(head);
        for (let i = 0; i < 4; i++) req.write(randomBytes(MAX_BYTES / 2));
        req.end(`\r\n--${boundary}--\r\n`);
      });
      assert.equal(answer.status, 413);
      assert.equal((JSON.parse(answer.body) as { error: { code: string } }).error.code, 'body_too_large');
      // Nothing was stored.
      const page = await client('member').files.list({ purpose: 'user_data' });
      assert.ok(page.data.every((f) => f.filename !== 'big.bin'));
    });

    it('another organization, and another member, get the 404 of an unknown file; an org admin sees it', async () => {
      const file = await client('member').files.create({ file: await toFile(Buffer.from('private'), 'mine.txt'), purpose: 'user_data' });
      for (const who of ['outsider', 'viewer'] as const) {
        const other = client(who);
        assert.equal((await apiError(other.files.retrieve(file.id))).status, 404, `${who} retrieve`);
        assert.equal((await apiError(other.files.content(file.id))).status, 404, `${who} content`);
        assert.equal((await apiError(other.files.delete(file.id))).status, 404, `${who} delete`);
        assert.ok(!(await other.files.list()).data.some((f) => f.id === file.id), `${who} list`);
      }
      assert.equal((await client('admin').files.retrieve(file.id)).id, file.id);
      assert.ok((await client('admin').files.list()).data.some((f) => f.id === file.id));
      assert.equal((await client('member').files.retrieve(file.id)).id, file.id, 'the refused deletes left it');
    });

    it('lists by purpose, newest first, in pages (has_more, after)', async () => {
      const member = client('member');
      const made = [];
      for (let i = 0; i < 3; i++) made.push((await member.files.create({ file: await toFile(Buffer.from(`e${i}`), `e${i}.txt`), purpose: 'evals' })).id);
      const first = await request(gw.url).get('/v1/files?purpose=evals&limit=2').set(gw.auth('member')).expect(200);
      assert.deepEqual(
        (first.body as { data: { id: string }[] }).data.map((f) => f.id),
        [made[2], made[1]],
      );
      assert.equal(first.body.has_more, true);
      assert.equal(first.body.first_id, made[2]);
      assert.equal(first.body.last_id, made[1]);
      const second = await request(gw.url).get(`/v1/files?purpose=evals&limit=2&after=${made[1]!}`).set(gw.auth('member')).expect(200);
      assert.deepEqual(second.body, {
        object: 'list',
        data: [(await member.files.retrieve(made[0]!)) as unknown],
        has_more: false,
        first_id: made[0],
        last_id: made[0],
      });
      const all = [];
      for await (const file of member.files.list({ purpose: 'evals', limit: 1 })) all.push(file.id);
      assert.deepEqual(all, [...made].reverse(), "the SDK's auto-pagination walks every page");
    });

    it('refuses a malformed upload in the nested envelope, naming the field', async () => {
      const post = () => request(gw.url).post('/v1/files').set(gw.auth('member'));
      const noPurpose = await post().attach('file', Buffer.from('x'), 'x.txt').expect(400);
      assert.deepEqual(noPurpose.body.error, {
        message: "Invalid request: the 'purpose' field is required.",
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'purpose',
      });
      const badPurpose = await post().field('purpose', 'fun').attach('file', Buffer.from('x'), 'x.txt').expect(400);
      assert.equal(badPurpose.body.error.param, 'purpose');
      assert.match(badPurpose.body.error.message, /'purpose' must be one of assistants, batch, fine-tune, vision, user_data, evals/);
      const unknown = await post().field('purpose', 'user_data').field('expires_after', 'x').attach('file', Buffer.from('x'), 'x.txt').expect(400);
      assert.equal(unknown.body.error.param, 'expires_after');
      const noFile = await post().field('purpose', 'user_data').expect(400);
      assert.equal(noFile.body.error.param, 'file');
      const json = await post().send({ purpose: 'user_data' }).expect(415);
      assert.equal(json.body.error.code, 'unsupported_media_type');
      const unauthenticated = await request(gw.url).post('/v1/files').field('purpose', 'user_data').attach('file', Buffer.from('x'), 'x.txt').expect(401);
      assert.equal(unauthenticated.body.error, 'Unauthorized');
    });
  });
}
