// The console as the gateway serves it (/console, /console/{path}): the page with a strict CSP and no
// caching, hashed assets immutable, the page for the app's own paths, 404 for a missing asset, nothing
// outside the build reachable; and its JavaScript within 300 KB gzipped.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { CONSOLE_CSP } from '../../src/operations/meta/console';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { ensureConsoleBuilt } from './build';

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe('console: served by the gateway', function () {
  this.timeout(120_000);
  let dir: string;
  let gw: TestGateway;
  before(async () => {
    dir = ensureConsoleBuilt();
    gw = await startTestGateway({ config: { plugins: { auth: { enabled: true } } } });
  });
  after(async () => {
    await gw?.close();
  });

  it("keeps the console's JavaScript within 300 KB gzipped", () => {
    const scripts = files(dir).filter((f) => f.endsWith('.js'));
    assert.ok(scripts.length > 0, 'the build has scripts');
    const gzipped = scripts.reduce((sum, f) => sum + gzipSync(readFileSync(f), { level: 9 }).length, 0);
    assert.ok(gzipped <= 300 * 1024, `console JavaScript is ${Math.round(gzipped / 1024)} KB gzipped (limit 300 KB)`);
  });

  it('serves the page without an API key, with a strict Content-Security-Policy and no caching', async () => {
    for (const url of ['/console', '/console/']) {
      const res = await request(gw.url).get(url).expect(200);
      assert.match(res.headers['content-type'] ?? '', /^text\/html/);
      assert.equal(res.headers['content-security-policy'], CONSOLE_CSP);
      assert.equal(res.headers['cache-control'], 'no-cache');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.match(res.text, /<div id="root">/);
    }
    assert.match(CONSOLE_CSP, /script-src 'self';/);
    assert.doesNotMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval/);
    assert.match(CONSOLE_CSP, /frame-ancestors 'none'/);
  });

  it('serves every file of the build, hashed assets as immutable with their content type', async () => {
    const page = (await request(gw.url).get('/console').expect(200)).text;
    const referenced = [...page.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.ok(referenced.some((a) => a.endsWith('.js')) && referenced.some((a) => a.endsWith('.css')), page);
    for (const asset of referenced) {
      const res = await request(gw.url).get(`/console/${asset}`).expect(200);
      assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.match(res.headers['content-type'] ?? '', asset.endsWith('.js') ? /^(text|application)\/javascript/ : /^text\/css/);
      assert.deepEqual(Buffer.from(res.text ?? res.body), readFileSync(path.join(dir, asset)));
    }
  });

  it("answers the page for the app's own paths and 404 for an asset the build does not have", async () => {
    for (const url of ['/console/runs', '/console/runs/0d9b7c4e-8f1a-4a2b-9c3d-5e6f7a8b9c0d', '/console/keys?x=1']) {
      const res = await request(gw.url).get(url).expect(200);
      assert.match(res.text, /<div id="root">/, url);
      assert.equal(res.headers['cache-control'], 'no-cache');
    }
    const missing = await request(gw.url).get('/console/assets/index-00000000.js').expect(404);
    assert.equal(missing.body.error.type, 'invalid_request_error');
  });

  it('never reaches a file outside the build', async () => {
    for (const url of ['/console/..%2F..%2Fpackage.json', '/console/%2E%2E/%2E%2E/package.json', '/console/assets/..%2F..%2F..%2Fpackage.json']) {
      const res = await request(gw.url).get(url);
      assert.doesNotMatch(res.text, /"name": "agent-gateway"/, url);
      assert.ok(res.status === 200 ? /<div id="root">/.test(res.text) : res.status === 404 || res.status === 400, `${url}: ${res.status}`);
    }
  });
});
