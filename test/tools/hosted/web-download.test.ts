// svc_web_download on its real backend: the SSRF-guarded fetch into a real workspace, against a fake
// web server on 127.0.0.1 (allow-listed by host:port, so every other local address stays private).
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { webDownloadTool } from '../../../src/tools/hosted/web-download';
import { ToolFailure, type HostedTool } from '../../../src/tools/types';
import { listenOnLoopback, type LoopbackServer } from '../../fixtures/upstreams/loopback-server';
import { conversationId, openToolBed, type ToolBed } from './tool-bed';

const LIMIT = 2048;

async function rejectsWith(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ToolFailure, `expected a ToolFailure, got ${String(err)}`);
    assert.match(err.message, pattern);
    return true;
  });
}

describe('svc_web_download', function () {
  this.timeout(60_000);
  let site: LoopbackServer;
  let elsewhere: LoopbackServer;
  let elsewhereHits = 0;
  let bed: ToolBed;
  let download: HostedTool;

  before(async () => {
    // A second local server that nothing may reach: not allow-listed, so private like any other.
    elsewhere = await listenOnLoopback(async (_req, res) => {
      elsewhereHits += 1;
      res.end('internal secret');
    });
    site = await listenOnLoopback(async (req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      switch (url.pathname) {
        case '/report.csv':
          res.writeHead(200, { 'content-type': 'text/csv' }).end('a,b\n1,2\n');
          return;
        case '/attachment':
          res
            .writeHead(200, { 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="../../etc/quarterly report.pdf"' })
            .end('%PDF-1.4');
          return;
        case '/exact':
          res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(LIMIT, 1));
          return;
        case '/too-big':
          res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(LIMIT + 1, 1));
          return;
        case '/too-big-chunked':
          // No Content-Length: the limit holds while the body streams.
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          for (let i = 0; i < 8; i += 1) res.write(Buffer.alloc(1024, 2));
          res.end();
          return;
        case '/moved':
          res.writeHead(302, { location: '/report.csv' }).end();
          return;
        case '/to-private':
          res.writeHead(302, { location: `${elsewhere.origin}/secret` }).end();
          return;
        case '/to-localhost':
          res.writeHead(301, { location: `http://localhost:${new URL(elsewhere.origin).port}/secret` }).end();
          return;
        case '/slow':
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('first bytes');
          await new Promise((resolve) => setTimeout(resolve, 3000));
          res.end('late');
          return;
        case '/missing':
          res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
          return;
        default:
          res.writeHead(500).end();
      }
    });
    bed = await openToolBed({
      config: { tools: { webDownload: { maxBytes: LIMIT, timeoutMs: 1000 } } },
      allowHosts: [new URL(site.origin).host],
    });
    download = bed.tool(webDownloadTool, 'svc_web_download');
  });

  after(async () => {
    await bed?.close();
    await site?.close();
    await elsewhere?.close();
  });

  it('saves the URL under downloads/ by its name and says where, how big and what type', async () => {
    const ctx = bed.ctx(conversationId());
    const first = await download.execute({ url: `${site.origin}/report.csv` }, ctx);
    assert.equal(first.output, `Saved downloads/report.csv (8 bytes, text/csv) from ${site.origin}/report.csv.`);
    assert.equal(await readFile(path.join(await ctx.workspace.ensure(), 'downloads/report.csv'), 'utf8'), 'a,b\n1,2\n');
    // A second download of the same name does not replace the first.
    const second = await download.execute({ url: `${site.origin}/report.csv` }, ctx);
    assert.match(second.output, /^Saved downloads\/report-1\.csv /);
  });

  it('saves to the path given (a file, or into a directory ending in /); follows a public redirect', async () => {
    const ctx = bed.ctx(conversationId());
    assert.match(
      (await download.execute({ url: `${site.origin}/moved`, path: 'data/q1.csv' }, ctx)).output,
      /^Saved data\/q1\.csv \(8 bytes, text\/csv\) from .*\/report\.csv\.$/,
    );
    assert.match((await download.execute({ url: `${site.origin}/report.csv`, path: 'inbox/' }, ctx)).output, /^Saved inbox\/report\.csv /);
  });

  it("takes the server's file name, reduced to its last component and safe characters", async () => {
    const ctx = bed.ctx(conversationId());
    const { output } = await download.execute({ url: `${site.origin}/attachment` }, ctx);
    assert.equal(output, `Saved downloads/quarterly_report.pdf (8 bytes, application/pdf) from ${site.origin}/attachment.`);
  });

  it('refuses to replace a directory by a download', async () => {
    const ctx = bed.ctx(conversationId());
    await mkdir(path.join(await ctx.workspace.ensure(), 'inbox', 'report.csv'), { recursive: true });
    await rejectsWith(download.execute({ url: `${site.origin}/report.csv`, path: 'inbox/' }, ctx), /^inbox\/report\.csv is a directory\.$/);
  });

  it('refuses paths that leave the workspace, before downloading', async () => {
    const ctx = bed.ctx(conversationId());
    await rejectsWith(download.execute({ url: `${site.origin}/report.csv`, path: '../outside.csv' }, ctx), /leaves the workspace/);
    await rejectsWith(download.execute({ url: `${site.origin}/report.csv`, path: '/tmp/x.csv' }, ctx), /is absolute/);
  });

  describe('the SSRF guard', () => {
    it('refuses private addresses: an IP literal, and a name that resolves to one', async () => {
      const ctx = bed.ctx(conversationId());
      await rejectsWith(download.execute({ url: `${elsewhere.origin}/secret` }, ctx), /not reachable from this gateway/);
      await rejectsWith(download.execute({ url: `http://localhost:${new URL(elsewhere.origin).port}/secret` }, ctx), /localhost is not reachable/);
      assert.equal(elsewhereHits, 0);
    });

    it('refuses a redirect to a private address, by literal or by name', async () => {
      const ctx = bed.ctx(conversationId());
      await rejectsWith(download.execute({ url: `${site.origin}/to-private` }, ctx), /not reachable from this gateway/);
      await rejectsWith(download.execute({ url: `${site.origin}/to-localhost` }, ctx), /localhost is not reachable/);
      assert.equal(elsewhereHits, 0);
      assert.deepEqual(await readdir(await ctx.workspace.ensure()), [], 'nothing saved');
    });

    it('refuses schemes other than http and https, and URLs with credentials', async () => {
      const ctx = bed.ctx(conversationId());
      await rejectsWith(download.execute({ url: 'file:///etc/passwd' }, ctx), /Only http and https URLs can be fetched, not file:/);
      await rejectsWith(download.execute({ url: 'ftp://example.org/x' }, ctx), /not ftp:/);
      await rejectsWith(download.execute({ url: `http://user:pw@${new URL(site.origin).host}/report.csv` }, ctx), /credentials/);
      await rejectsWith(download.execute({ url: 'not a url' }, ctx), /Not a valid URL/);
    });
  });

  describe('limits', () => {
    it('keeps a body of exactly the size limit; refuses one byte more and saves nothing', async () => {
      const ctx = bed.ctx(conversationId());
      assert.match((await download.execute({ url: `${site.origin}/exact` }, ctx)).output, new RegExp(`^Saved downloads/exact \\(${LIMIT} bytes`));
      await rejectsWith(download.execute({ url: `${site.origin}/too-big` }, ctx), new RegExp(`larger than the limit of ${LIMIT} bytes; nothing was saved`));
      await rejectsWith(download.execute({ url: `${site.origin}/too-big-chunked` }, ctx), /larger than the limit/);
      assert.deepEqual(await readdir(path.join(await ctx.workspace.ensure(), 'downloads')), ['exact']);
    });

    it('stops a download past its time limit and saves nothing', async () => {
      const ctx = bed.ctx(conversationId());
      const started = Date.now();
      await rejectsWith(download.execute({ url: `${site.origin}/slow` }, ctx), /took (longer than 1000 ms|too long)/);
      assert.ok(Date.now() - started < 2500, 'stopped at the limit, not when the server finished');
      assert.deepEqual(await readdir(await ctx.workspace.ensure()), []);
    });

    it('stops when the call is aborted', async () => {
      const controller = new AbortController();
      const ctx = bed.ctx(conversationId(), 'acme', controller.signal);
      setTimeout(() => controller.abort(), 100);
      await rejectsWith(download.execute({ url: `${site.origin}/slow` }, ctx), /stopped|failed/);
    });

    it('sets its call limit above the download limit, so its own message comes first', () => {
      assert.equal(download.limits?.timeoutMs, 1000 + 5000);
    });
  });

  it('says what an error status was, and saves nothing', async () => {
    const ctx = bed.ctx(conversationId());
    await rejectsWith(download.execute({ url: `${site.origin}/missing` }, ctx), /^The server answered HTTP 404; nothing was saved\.$/);
    assert.deepEqual(await readdir(await ctx.workspace.ensure()), []);
  });
});
