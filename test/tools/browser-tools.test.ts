// The browser tools on a real headless Chromium against local servers. One tool set (one browser)
// serves most of the file; the idle and bound tests need other settings and use a second one.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { browserTools, buildBrowserTools } from '../../src/tools/hosted/browser';
import { MAX_PAGES } from '../../src/tools/hosted/browser/session';
import type { BrowserPool } from '../../src/tools/hosted/browser/pool';
import { ToolFailure, type HostedToolSet, type ToolOutcome } from '../../src/tools/types';
import { browserDeps, caller, startEgressProxy, startPrivateServer, startSite, type BrowserTestDeps } from './browser-fixtures';

const run = promisify(execFile);

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngSize(png: Buffer): { width: number; height: number } {
  assert.deepEqual(png.subarray(0, 8), PNG_SIGNATURE, 'a PNG signature');
  assert.equal(png.subarray(12, 16).toString('latin1'), 'IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

async function refused(promise: Promise<ToolOutcome>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ToolFailure, `a ToolFailure, not ${String(err)}`);
    assert.match(err.message, pattern);
    return true;
  });
}

describe('browser tools (headless Chromium)', function () {
  this.timeout(120_000);
  let site: Awaited<ReturnType<typeof startSite>>;
  let hidden: Awaited<ReturnType<typeof startPrivateServer>>;
  let env: BrowserTestDeps;
  let set: HostedToolSet;
  let pool: BrowserPool;
  let call: ReturnType<typeof caller>;

  before(async () => {
    hidden = await startPrivateServer();
    site = await startSite(hidden.port);
    // Only the site's own host:port is trusted; the private server on the same address is not.
    env = await browserDeps([`127.0.0.1:${site.port}`], { actionTimeoutMs: 4000, maxScreenshotHeight: 3000, maxTextChars: 2000, maxPostDataBytes: 4096 });
    ({ set, pool } = buildBrowserTools(env.deps));
    call = caller(set, env.deps);
  });

  after(async () => {
    await set?.close?.();
    await env?.cleanup();
    await site?.close();
    await hidden?.close();
  });

  it('start-up check: Chromium is there and starts', async () => {
    assert.equal(await set.check?.(), null);
  });

  it('navigates and returns the title, URL and visible text (hidden text left out)', async () => {
    const { output } = await call('svc_browser_control', 'conv-nav', { action: 'navigate', url: `${site.origin}/` });
    assert.match(output, /^Title: Home\nURL: http:\/\/127\.0\.0\.1:\d+\/\n/);
    assert.match(output, /Welcome home/);
    assert.match(output, /Next page/);
    assert.doesNotMatch(output, /hidden-words/);
  });

  it('clicks a link (the next page is shown) and a button (the page changes)', async () => {
    await call('svc_browser_control', 'conv-click', { action: 'navigate', url: `${site.origin}/` });
    const button = await call('svc_browser_control', 'conv-click', { action: 'click', selector: '#reveal' });
    assert.match(button.output, /Revealed by click/);
    const link = await call('svc_browser_control', 'conv-click', { action: 'click', selector: 'text=Next page' });
    assert.match(link.output, /^Title: Second\nURL: .*\/second\n/);
    assert.match(link.output, /You reached the second page/);
    const back = await call('svc_browser_control', 'conv-click', { action: 'back' });
    assert.match(back.output, /^Title: Home/);
  });

  it('a link that opens a new tab: the new page is the one shown and acted on', async () => {
    await call('svc_browser_control', 'conv-popup', { action: 'navigate', url: `${site.origin}/` });
    const opened = await call('svc_browser_control', 'conv-popup', { action: 'click', selector: '#popup' });
    assert.match(opened.output, /^Title: Second\nURL: .*\/second\n/);
    const text = await call('svc_browser_control', 'conv-popup', { action: 'get_text', selector: 'p' });
    assert.match(text.output, /You reached the second page/);
  });

  it(`a page that opens windows in a loop keeps at most ${MAX_PAGES} tabs`, async () => {
    await call('svc_browser_control', 'conv-popups', { action: 'navigate', url: `${site.origin}/popups` });
    const context = pool.existing('conv-popups')!.context;
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(context.pages().length <= MAX_PAGES, `${context.pages().length} tabs open`);
    await set.forget?.('conv-popups');
  });

  it('a page whose script never yields fails the call after actionTimeoutMs instead of holding the session', async () => {
    try {
      // The page starts spinning 50 ms after it loaded: the navigation itself may or may not have read
      // it by then, so the read that must give up is the one made once it surely spins.
      await call('svc_browser_control', 'conv-busy', { action: 'navigate', url: `${site.origin}/busy` }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = Date.now();
      await refused(call('svc_browser_control', 'conv-busy', { action: 'get_text' }), /Reading the page took longer than 4000 ms: the page's script is busy/);
      assert.ok(Date.now() - started < 15_000);
    } finally {
      await set.forget?.('conv-busy');
    }
  });

  it('types into a form and submits it: the POST is captured and exported as a curl command that reproduces it', async () => {
    await call('svc_browser_control', 'conv-form', { action: 'navigate', url: `${site.origin}/set-cookie` });
    await call('svc_browser_control', 'conv-form', { action: 'navigate', url: `${site.origin}/` });
    await call('svc_browser_control', 'conv-form', { action: 'type', selector: '#q', text: "it's a test & more" });
    const submitted = await call('svc_browser_control', 'conv-form', { action: 'press', selector: '#q', key: 'Enter' });
    assert.match(submitted.output, /^Title: Submitted/);
    assert.match(submitted.output, /Got: q=it%27s\+a\+test\+%26\+more/);

    const listing = await call('svc_browser_list_network_requests', 'conv-form', { method: 'post' });
    const line = listing.output.split('\n').find((l) => l.includes('/submit'));
    assert.ok(line, listing.output);
    assert.match(line, /^#(\d+) POST 200 document http:\/\/127\.0\.0\.1:\d+\/submit \(body \d+ bytes\)$/);
    const id = Number(/^#(\d+)/.exec(line)![1]);

    const { output: command } = await call('svc_browser_export_request_as_curl', 'conv-form', { id: `#${id}` });
    assert.match(command, /^curl /);
    assert.match(command, /-H 'cookie: session=conv-secret'/, 'the cookie is part of the request');
    const before = site.requests.length;
    await run('sh', ['-c', command], { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } });
    const replayed = site.requests.slice(before);
    assert.equal(replayed.length, 1);
    assert.equal(replayed[0]!.method, 'POST');
    assert.equal(replayed[0]!.url, '/submit');
    assert.equal(replayed[0]!.body, 'q=it%27s+a+test+%26+more');
    assert.equal(replayed[0]!.headers['cookie'], 'session=conv-secret');
    assert.equal(replayed[0]!.headers['content-type'], 'application/x-www-form-urlencoded');
  });

  it('exports a script request whose method, URL, header and body a shell would mangle unquoted', async () => {
    const page = await call('svc_browser_control', 'conv-api', { action: 'navigate', url: `${site.origin}/app` });
    if (!/api said ok/.test(page.output)) await call('svc_browser_control', 'conv-api', { action: 'wait_for', selector: 'text=api said ok' });
    const original = site.requests.find((r) => r.url.startsWith('/api/items'));
    assert.ok(original);
    const listing = await call('svc_browser_list_network_requests', 'conv-api', { filter: 'API/ITEMS' });
    const lines = listing.output.split('\n');
    assert.match(lines[0]!, /requests kept, 1 matching\.$/);
    const id = Number(/^#(\d+) PUT 200 fetch /.exec(lines[1]!)![1]);
    const { output: command } = await call('svc_browser_export_request_as_curl', 'conv-api', { id });
    const before = site.requests.length;
    await run('sh', ['-c', command], { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: '/nonexistent' } });
    const replayed = site.requests.slice(before);
    assert.equal(replayed.length, 1, command);
    assert.equal(replayed[0]!.method, 'PUT');
    assert.equal(replayed[0]!.url, original.url);
    assert.equal(replayed[0]!.body, original.body);
    assert.equal(replayed[0]!.headers['x-note'], `it's "quoted" $HOME`);
    assert.equal(replayed[0]!.headers['content-type'], 'application/json');
  });

  it('exports a binary body through a workspace file; a body larger than maxPostDataBytes is refused', async () => {
    const page = await call('svc_browser_control', 'conv-upload', { action: 'navigate', url: `${site.origin}/binary-app` });
    if (!/uploaded/.test(page.output)) await call('svc_browser_control', 'conv-upload', { action: 'wait_for', selector: 'text=uploaded' });
    const listing = await call('svc_browser_list_network_requests', 'conv-upload', { filter: '/api/upload' });
    const [small, big] = listing.output
      .split('\n')
      .slice(1)
      .map((line) => Number(/^#(\d+) POST 200 fetch /.exec(line)![1]));
    const { output } = await call('svc_browser_export_request_as_curl', 'conv-upload', { id: small });
    const [command, note] = output.split('\n\n');
    assert.match(command!, / --data-binary @browser\/request-\d+\.body$/);
    assert.match(note!, /run the command in the workspace directory/);
    const before = site.requests.length;
    await run('sh', ['-c', command!], { cwd: path.join(env.workspaceRoot, 'acme', 'conv-upload'), env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } });
    const replayed = site.requests.slice(before);
    assert.equal(replayed.length, 1);
    assert.deepEqual([...replayed[0]!.raw], [...Array(256).keys()]);
    assert.equal(replayed[0]!.headers['content-type'], 'application/octet-stream');
    await refused(call('svc_browser_export_request_as_curl', 'conv-upload', { id: big }), /had a 5000-byte body, larger than tools\.browser\.maxPostDataBytes/);
  });

  it('an unknown or dropped request id is refused, saying which', async () => {
    await refused(call('svc_browser_export_request_as_curl', 'conv-api', { id: 99_999 }), /no captured request #99999: no request has that id/);
    await refused(call('svc_browser_export_request_as_curl', 'conv-api', { id: 'x' }), /must be a request id/);
  });

  it('takes a screenshot: a PNG of the viewport in the workspace and as an image; full_page is cut at maxScreenshotHeight', async () => {
    await call('svc_browser_control', 'conv-shot', { action: 'navigate', url: `${site.origin}/` });
    const shot = await call('svc_browser_screenshot', 'conv-shot', {});
    const file = /saved to (browser\/screenshot-[^ ]+\.png)\.$/.exec(shot.output)?.[1];
    assert.ok(file, shot.output);
    const image = shot.images?.[0];
    assert.equal(image?.mediaType, 'image/png');
    const png = Buffer.from(image!.data, 'base64');
    assert.deepEqual(pngSize(png), { width: 1280, height: 800 });
    const stored = await readFile(path.join(env.workspaceRoot, 'acme', 'conv-shot', file));
    assert.ok(stored.equals(png), 'the stored file is the image shown');

    await call('svc_browser_control', 'conv-shot', { action: 'navigate', url: `${site.origin}/tall` });
    const tall = await call('svc_browser_screenshot', 'conv-shot', { full_page: true });
    assert.deepEqual(pngSize(Buffer.from(tall.images![0]!.data, 'base64')), { width: 1280, height: 3000 });
  });

  it('a screenshot or request listing with no session open is refused without opening one', async () => {
    await refused(call('svc_browser_screenshot', 'conv-none', {}), /No browser session is open in this conversation/);
    await refused(call('svc_browser_list_network_requests', 'conv-none', {}), /No browser session is open/);
  });

  it('keeps conversations apart: a cookie set in one is not sent in another', async () => {
    await call('svc_browser_control', 'conv-a', { action: 'navigate', url: `${site.origin}/set-cookie` });
    const mine = await call('svc_browser_control', 'conv-a', { action: 'navigate', url: `${site.origin}/echo-cookie` });
    assert.match(mine.output, /Cookie: session=conv-secret/);
    const theirs = await call('svc_browser_control', 'conv-b', { action: 'navigate', url: `${site.origin}/echo-cookie` });
    assert.match(theirs.output, /Cookie: none/);
    const listing = await call('svc_browser_list_network_requests', 'conv-b', {});
    assert.doesNotMatch(listing.output, /set-cookie/, 'and so are their captured requests');
  });

  describe('SSRF guard', () => {
    it('refuses a navigation to a private address that is not allow-listed (literal, and a name resolving to loopback)', async () => {
      const connections = hidden.connections();
      await refused(call('svc_browser_control', 'conv-ssrf', { action: 'navigate', url: `http://127.0.0.1:${hidden.port}/` }), /was refused: .*127\.0\.0\.1/);
      await refused(
        call('svc_browser_control', 'conv-ssrf', { action: 'navigate', url: `http://localhost:${hidden.port}/` }),
        /The navigation to http:\/\/localhost:\d+\/ was refused: localhost is not reachable from this gateway/,
      );
      await refused(call('svc_browser_control', 'conv-ssrf', { action: 'navigate', url: 'http://169.254.169.254/latest/meta-data/' }), /was refused/);
      assert.equal(hidden.connections(), connections);
    });

    it('refuses other schemes: file:, data: and javascript: navigations', async () => {
      await refused(
        call('svc_browser_control', 'conv-ssrf', { action: 'navigate', url: 'file:///etc/passwd' }),
        /Only http and https URLs can be fetched, not file:/,
      );
      await refused(call('svc_browser_control', 'conv-ssrf', { action: 'navigate', url: 'data:text/html,<p>x</p>' }), /not data:/);
      await refused(call('svc_browser_control', 'conv-ssrf', { action: 'navigate', url: 'javascript:alert(1)' }), /not javascript:/);
    });

    it('aborts the subrequests of an allowed page that point at a private address (images, a WebSocket)', async () => {
      const connections = hidden.connections();
      const page = await call('svc_browser_control', 'conv-img', { action: 'navigate', url: `${site.origin}/private-img` });
      assert.match(page.output, /^Title: Public page/);
      const listing = await call('svc_browser_list_network_requests', 'conv-img', { resource_type: 'image' });
      assert.match(listing.output, /GET failed image http:\/\/127\.0\.0\.1:\d+\/literal\.png — refused: .*127\.0\.0\.1/);
      assert.match(listing.output, /GET failed image http:\/\/localhost:\d+\/named\.png — refused: localhost is not reachable/);
      assert.equal(hidden.connections(), connections, 'no connection reached the private server');
    });

    it('a click that leads to a private address is refused, saying so', async () => {
      const connections = hidden.connections();
      await call('svc_browser_control', 'conv-inside', { action: 'navigate', url: `${site.origin}/private-img` });
      await refused(
        call('svc_browser_control', 'conv-inside', { action: 'click', selector: '#inside' }),
        /^The navigation to http:\/\/localhost:\d+\/inside was refused: localhost is not reachable from this gateway/,
      );
      assert.equal(hidden.connections(), connections);
    });

    it('refuses a redirect to a private address (a hop the route handler never sees: the guard proxy stops it)', async () => {
      const connections = hidden.connections();
      await refused(
        call('svc_browser_control', 'conv-redirect', { action: 'navigate', url: `${site.origin}/redirect-private` }),
        /The navigation to http:\/\/localhost:\d+\/after-redirect was refused: localhost is not reachable from this gateway/,
      );
      assert.equal(hidden.connections(), connections);
    });

    it("a site cannot pose as the guard's refusal", async () => {
      const page = await call('svc_browser_control', 'conv-spoof', { action: 'navigate', url: `${site.origin}/spoof` });
      assert.match(page.output, /an ordinary page/);
    });

    it('with an empty allow list, 127.0.0.1 itself is refused', async () => {
      const strict = await browserDeps([]);
      const strictSet = browserTools(strict.deps);
      try {
        const before = site.requests.length;
        await refused(caller(strictSet, strict.deps)('svc_browser_control', 'conv-strict', { action: 'navigate', url: `${site.origin}/` }), /was refused/);
        assert.equal(site.requests.length, before);
      } finally {
        await strictSet.close?.();
        await strict.cleanup();
      }
    });
  });

  it("goes out through the conversation's egress proxy when one is connected", async () => {
    const egress = await startEgressProxy();
    try {
      env.egressFor.set('conv-egress', egress.url);
      const page = await call('svc_browser_control', 'conv-egress', { action: 'navigate', url: `${site.origin}/second` });
      assert.match(page.output, /You reached the second page/);
      assert.ok(egress.targets.includes(`GET ${site.origin}/second`), egress.targets.join('\n'));
      // Disconnected: the next request goes direct again.
      env.egressFor.delete('conv-egress');
      const seen = egress.targets.length;
      await call('svc_browser_control', 'conv-egress', { action: 'navigate', url: `${site.origin}/` });
      assert.equal(egress.targets.length, seen);
    } finally {
      env.egressFor.delete('conv-egress');
      await egress.close();
    }
  });

  it('cuts long page text at maxTextChars, saying so; get_text reads one element', async () => {
    const { output } = await call('svc_browser_control', 'conv-text', { action: 'navigate', url: `${site.origin}/long` });
    const text = output.split('\n\n').slice(1).join('\n\n');
    assert.match(text, /^(lorem ){333}lo\n\[… \d+ more characters; use get_text with a selector to read a part\]$/);
    const part = await call('svc_browser_control', 'conv-text', { action: 'get_text', selector: '#short' });
    assert.match(part.output, /^Title: Long\nURL: .*\/long\n\nthe short part$/);
  });

  it('a failing action is a ToolFailure with the reason, and the session goes on', async () => {
    await call('svc_browser_control', 'conv-fail', { action: 'navigate', url: `${site.origin}/` });
    await refused(call('svc_browser_control', 'conv-fail', { action: 'click', selector: '#does-not-exist' }), /Timeout 4000ms exceeded/);
    await refused(call('svc_browser_control', 'conv-fail', { action: 'fly' }), /Argument action must be one of navigate, click/);
    const again = await call('svc_browser_control', 'conv-fail', { action: 'click', selector: '#next' });
    assert.match(again.output, /^Title: Second/);
  });

  it('a stopped call returns at once; the next call of the conversation still works', async () => {
    await call('svc_browser_control', 'conv-abort', { action: 'navigate', url: `${site.origin}/` });
    const controller = new AbortController();
    const started = Date.now();
    const waiting = call('svc_browser_control', 'conv-abort', { action: 'wait_for', selector: '#never' }, controller.signal);
    setTimeout(() => controller.abort(), 200);
    await refused(waiting, /stopped/);
    assert.ok(Date.now() - started < 3000, 'well before the 4 s action timeout');
    const next = await call('svc_browser_control', 'conv-abort', { action: 'get_text', selector: 'h1' });
    assert.match(next.output, /Welcome home/);
  });

  it('forget() closes the conversation’s context: its cookies and requests are gone', async () => {
    await call('svc_browser_control', 'conv-forget', { action: 'navigate', url: `${site.origin}/set-cookie` });
    await set.forget?.('conv-forget');
    await refused(call('svc_browser_list_network_requests', 'conv-forget', {}), /No browser session is open/);
    const fresh = await call('svc_browser_control', 'conv-forget', { action: 'navigate', url: `${site.origin}/echo-cookie` });
    assert.match(fresh.output, /Cookie: none/);
  });
});

describe('browser tools: idle close and the bound on contexts', function () {
  this.timeout(120_000);
  let site: Awaited<ReturnType<typeof startSite>>;
  let env: BrowserTestDeps;
  let set: HostedToolSet;
  let call: ReturnType<typeof caller>;

  before(async () => {
    site = await startSite(9);
    env = await browserDeps([`127.0.0.1:${site.port}`], { idleTimeoutMs: 600, maxContexts: 1, actionTimeoutMs: 3000 });
    set = browserTools(env.deps);
    call = caller(set, env.deps);
  });

  after(async () => {
    await set?.close?.();
    await env?.cleanup();
    await site?.close();
  });

  it('closes a context after idleTimeoutMs without a call', async () => {
    await call('svc_browser_control', 'conv-idle', { action: 'navigate', url: `${site.origin}/set-cookie` });
    const kept = await call('svc_browser_list_network_requests', 'conv-idle', {});
    assert.match(kept.output, /set-cookie/);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    await refused(call('svc_browser_list_network_requests', 'conv-idle', {}), /No browser session is open/);
    const fresh = await call('svc_browser_control', 'conv-idle', { action: 'navigate', url: `${site.origin}/echo-cookie` });
    assert.match(fresh.output, /Cookie: none/);
  });

  it('at maxContexts, a new conversation closes the least recently used idle one; when all are busy it is refused', async () => {
    await call('svc_browser_control', 'conv-first', { action: 'navigate', url: `${site.origin}/` });
    await call('svc_browser_control', 'conv-second', { action: 'navigate', url: `${site.origin}/` });
    await refused(call('svc_browser_list_network_requests', 'conv-first', {}), /No browser session is open/);

    const busy = call('svc_browser_control', 'conv-second', { action: 'wait_for', selector: '#never' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await refused(
      call('svc_browser_control', 'conv-third', { action: 'navigate', url: `${site.origin}/` }),
      /The browser is busy: 1 conversations are using it/,
    );
    await refused(busy, /Timeout 3000ms exceeded/);
  });

  it('start-up check: a success is found out once per process, a failure again on the next check', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'agw-chromium-'));
    const executable = path.join(dir, 'chromium');
    const later = await browserDeps([], { executablePath: executable });
    try {
      const check = (): Promise<string | null> | undefined => browserTools(later.deps).check?.();
      assert.match((await check()) ?? '', /^no Chromium executable at /);
      await symlink('/usr/bin/chromium', executable);
      assert.equal(await check(), null, 'installed since: seen');
      await rm(executable);
      assert.equal(await check(), null, 'the success was kept: no second launch');
    } finally {
      await later.cleanup();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('start-up check: a missing executable, or one that is not Chromium, disables the tools with the reason', async () => {
    const missing = await browserDeps([], { executablePath: '/nonexistent/chromium' });
    const notChromium = await browserDeps([], { executablePath: '/bin/false' });
    try {
      assert.equal(
        await browserTools(missing.deps).check?.(),
        "no Chromium executable at /nonexistent/chromium (install Debian's chromium, or set tools.browser.executablePath)",
      );
      assert.match((await browserTools(notChromium.deps).check?.()) ?? '', /^Chromium at \/bin\/false does not start: /);
    } finally {
      await missing.cleanup();
      await notChromium.cleanup();
    }
  });
});
