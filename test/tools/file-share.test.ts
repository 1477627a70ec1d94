// svc_file_share_with_user against a real gateway (authentication on): a workspace file becomes a
// stored `tool_output` file of the call's user, the link in the output downloads it with no API key
// until it expires, and any change to the link (file id, expiry, signature) makes it an unknown file.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import OpenAI from 'openai';
import request from 'supertest';
import { checkShareLink } from '../../src/files/share-link';
import { saveFile } from '../../src/files/stored-files';
import { fileShareTools } from '../../src/tools/hosted/file-share';
import { ToolFailure, type HostedTool, type ToolCallContext } from '../../src/tools/types';
import { startTestGateway, TEST_KEYS, type TestGateway } from '../helpers/gateway';
import { toolHarness, type ToolHarness } from './stored-file-fixtures';

const MAX_BYTES = 32 * 1024;
const LINK = /^Download link: (\S+)$/m;

function linkOf(output: string): URL {
  const match = LINK.exec(output);
  assert.ok(match, output);
  return new URL(match[1]!);
}

describe('svc_file_share_with_user', function () {
  this.timeout(60_000);
  let gw: TestGateway;
  let harness: ToolHarness;
  let share: HostedTool;
  /** What the tool's clock says (the gateway checks expiry against the real time). */
  let toolNow = new Date();

  before(async () => {
    gw = await startTestGateway({
      config: { plugins: { auth: { enabled: true } }, files: { maxBytes: MAX_BYTES, shareTtlSeconds: 600, maxShareTtlSeconds: 7200 } },
    });
    harness = await toolHarness(gw.config, gw.store, () => toolNow);
    share = fileShareTools(harness.deps).tools[0]!;
  });
  beforeEach(() => {
    toolNow = new Date();
  });
  after(async () => {
    await harness?.close();
    await gw?.close();
  });

  async function workspaceFile(ctx: ToolCallContext, relative: string, content: Buffer): Promise<void> {
    const target = path.join(await ctx.workspace.ensure(), relative);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
  }

  it('stores a workspace file as a tool_output file of the user and links to it, for the user only, with no key needed', async () => {
    const ctx = harness.context({ baseUrl: gw.url });
    const bytes = randomBytes(10_000);
    await workspaceFile(ctx, 'out/chart.png', bytes);
    const outcome = await share.execute({ path: 'out/chart.png' }, ctx);
    const url = linkOf(outcome.output);
    const fileId = /^\/v1\/files\/(file-[0-9a-f]{24})\/shared$/.exec(url.pathname)?.[1];
    assert.ok(fileId, url.pathname);
    const expires = Number(url.searchParams.get('expires'));
    assert.ok(Math.abs(expires - (Math.floor(toolNow.getTime() / 1000) + 600)) <= 1, 'the default lifetime, files.shareTtlSeconds');
    assert.equal(
      outcome.output,
      `Shared chart.png (${fileId}, 10000 bytes) with the user until ${new Date(expires * 1000).toISOString()}.\n` +
        `Download link: ${url.href}\n` +
        'The user sees this link with this tool call; do not repeat it in your reply.',
    );
    assert.equal(url.origin, gw.url, "the request's address when server.publicUrl is not set");

    const downloaded = await request(gw.url)
      .get(url.pathname + url.search)
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    assert.ok((downloaded.body as Buffer).equals(bytes));
    assert.equal(downloaded.headers['content-type'], 'image/png');
    assert.equal(downloaded.headers['content-disposition'], 'attachment; filename="chart.png"');

    // The tool's output is in the store, the user's, listed with the uploads.
    const member = new OpenAI({ apiKey: TEST_KEYS.member, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const listed = await member.files.list({ purpose: 'tool_output' });
    assert.deepEqual(
      listed.data.find((f) => f.id === fileId),
      {
        id: fileId,
        object: 'file',
        bytes: 10000,
        created_at: Math.floor(toolNow.getTime() / 1000),
        filename: 'chart.png',
        purpose: 'tool_output',
        status: 'processed',
      },
    );
    const viewer = new OpenAI({ apiKey: TEST_KEYS.viewer, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    assert.ok(!(await viewer.files.list()).data.some((f) => f.id === fileId), "another user's list does not show it");
  });

  it('refuses a link whose file id, expiry or signature was changed (404), and a genuine expired one (403)', async () => {
    const ctx = harness.context({ baseUrl: gw.url });
    await workspaceFile(ctx, 'a.txt', Buffer.from('alpha'));
    await workspaceFile(ctx, 'b.txt', Buffer.from('beta'));
    const a = linkOf((await share.execute({ path: 'a.txt' }, ctx)).output);
    const b = linkOf((await share.execute({ path: 'b.txt' }, ctx)).output);
    const get = (pathname: string, params: URLSearchParams) => request(gw.url).get(`${pathname}?${params.toString()}`);
    await get(a.pathname, a.searchParams).expect(200, 'alpha');

    const otherFile = await get(b.pathname, a.searchParams).expect(404);
    assert.deepEqual(otherFile.body.error, {
      message: `No file found with id '${b.pathname.split('/')[3]!}'.`,
      type: 'invalid_request_error',
      code: null,
      param: 'file_id',
    });
    const later = new URLSearchParams(a.searchParams);
    later.set('expires', String(Number(a.searchParams.get('expires')) + 3600));
    await get(a.pathname, later).expect(404);
    const forged = new URLSearchParams(a.searchParams);
    const signature = forged.get('signature')!;
    forged.set('signature', (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1));
    await get(a.pathname, forged).expect(404);
    const unsigned = new URLSearchParams({ expires: a.searchParams.get('expires')! });
    await get(a.pathname, unsigned).expect(400);

    // Made two hours ago for one hour: genuine, and expired an hour ago.
    toolNow = new Date(Date.now() - 2 * 3600_000);
    const old = linkOf((await share.execute({ path: 'a.txt', expires_in_seconds: 3600 }, ctx)).output);
    const expired = await get(old.pathname, old.searchParams).expect(403);
    assert.deepEqual(expired.body.error, {
      message: 'This share link has expired; ask for a new one.',
      type: 'permission_error',
      code: 'forbidden',
      param: null,
    });
  });

  it('shares a stored file of the user by id; its deletion ends the link; other users’ files are no such file', async () => {
    const ctx = harness.context({ baseUrl: gw.url });
    const mine = await saveFile(gw.store, {
      orgId: 'acme',
      userId: 'u-member',
      filename: 'up.txt',
      purpose: 'user_data',
      content: Buffer.from('uploaded'),
      now: new Date(),
    });
    const link = linkOf((await share.execute({ file_id: mine.id, expires_in_seconds: 60 }, ctx)).output);
    assert.equal(link.pathname, `/v1/files/${mine.id}/shared`);
    await request(gw.url)
      .get(link.pathname + link.search)
      .expect(200, 'uploaded');
    await request(gw.url).delete(`/v1/files/${mine.id}`).set(gw.auth('member')).expect(200);
    await request(gw.url)
      .get(link.pathname + link.search)
      .expect(404);

    const theirs = await saveFile(gw.store, {
      orgId: 'acme',
      userId: 'u-viewer',
      filename: 't.txt',
      purpose: 'user_data',
      content: Buffer.from('t'),
      now: new Date(),
    });
    await assert.rejects(
      share.execute({ file_id: theirs.id }, ctx),
      (err: unknown) => err instanceof ToolFailure && err.message === `No stored file with id "${theirs.id}".`,
    );
  });

  it('refuses what it cannot share: too large, missing, a directory, out of the workspace, both or neither source, a lifetime past the longest', async () => {
    const ctx = harness.context({ baseUrl: gw.url });
    await workspaceFile(ctx, 'big.bin', randomBytes(MAX_BYTES + 1));
    await workspaceFile(ctx, 'dir/x.txt', Buffer.from('x'));
    const refused = async (args: Record<string, unknown>, message: RegExp): Promise<void> => {
      await assert.rejects(share.execute(args, ctx), (err: unknown) => err instanceof ToolFailure && message.test(err.message));
    };
    await refused(
      { path: 'big.bin' },
      new RegExp(`^big\\.bin is ${MAX_BYTES + 1} bytes; files of at most ${MAX_BYTES} bytes can be shared \\(files\\.maxBytes\\)\\.$`),
    );
    await refused({ path: 'missing.txt' }, /^No such file in the workspace: missing\.txt$/);
    await refused({ path: 'dir' }, /^dir is not a file\.$/);
    await refused({ path: '../../etc/passwd' }, /leaves the workspace/);
    await refused({ path: 'dir/x.txt', file_id: 'file-1' }, /^Give either path .+ or file_id .+, not both\.$/);
    await refused({}, /^Give either path/);
    await refused({ path: 'dir/x.txt', expires_in_seconds: 7201 }, /^expires_in_seconds must be a whole number from 1 to 7200\.$/);
    await refused({ path: 'dir/x.txt', expires_in_seconds: 1.5 }, /^expires_in_seconds must be a whole number/);
  });

  it('signs with a key generated once and kept in the store settings, or with files.shareSecret', async () => {
    const ctx = harness.context({ baseUrl: gw.url });
    await workspaceFile(ctx, 'k.txt', Buffer.from('k'));
    const link = linkOf((await share.execute({ path: 'k.txt' }, ctx)).output);
    const stored = await gw.store.settings.get('file-share-secret');
    assert.ok(stored, 'the generated key is in the settings');
    const fileId = link.pathname.split('/')[3]!;
    const check = (key: Buffer, url: URL) => checkShareLink(key, fileId, url.searchParams.get('expires'), url.searchParams.get('signature'), new Date());
    assert.equal(check(Buffer.from(stored, 'base64url'), link), 'valid');
    assert.equal(check(randomBytes(32), link), 'invalid');

    const secret = 'a-configured-share-secret-of-32-chars-or-more';
    const configured = await toolHarness(
      { ...gw.config, files: { ...gw.config.files, shareSecret: secret }, server: { ...gw.config.server, publicUrl: 'https://files.example.com/' } },
      gw.store,
    );
    try {
      const configuredCtx = configured.context({ baseUrl: gw.url });
      await workspaceFile(configuredCtx, 'k.txt', Buffer.from('k'));
      const other = linkOf((await fileShareTools(configured.deps).tools[0]!.execute({ path: 'k.txt' }, configuredCtx)).output);
      assert.equal(other.origin, 'https://files.example.com', 'server.publicUrl wins over the request address');
      const otherId = other.pathname.split('/')[3]!;
      assert.equal(checkShareLink(Buffer.from(secret), otherId, other.searchParams.get('expires'), other.searchParams.get('signature'), new Date()), 'valid');
    } finally {
      await configured.close();
    }
  });
});
