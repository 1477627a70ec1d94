// svc_vpn_connect / svc_vpn_disconnect and the conversation egress they set: svc_web_download goes out
// through the connected profile's proxy (a real HTTP proxy and a real SOCKS5 proxy on 127.0.0.1, each
// counting what it forwards) and directly again after disconnect; the choice is per conversation, kept
// in the store across a restart and seen at once by another store instance; the proxy URL's password
// never reaches an output or a log line.
import assert from 'node:assert/strict';
import { createLogger } from '../../../src/log/logger';
import { createStore } from '../../../src/store/index';
import type { Store } from '../../../src/store/port';
import { ConversationEgress } from '../../../src/tools/conversation-egress';
import { vpnTools } from '../../../src/tools/hosted/vpn';
import { webDownloadTool } from '../../../src/tools/hosted/web-download';
import { ToolFailure, type HostedTool } from '../../../src/tools/types';
import { testConfig } from '../../helpers/config';
import { openTestStore } from '../../helpers/store';
import { listenOnLoopback, type LoopbackServer } from '../../fixtures/upstreams/loopback-server';
import { startHttpProxy, startSocksProxy, type FakeProxy } from './proxies';
import { conversationId, openToolBed, type ToolBed } from './tool-bed';

const PROXY_PASSWORD = 's3cr3t-proxy-pass';
const SOCKS_PASSWORD = 'socks-s3cr3t';

async function rejectsWith(promise: Promise<unknown>, pattern: RegExp): Promise<string> {
  let message = '';
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ToolFailure, `expected a ToolFailure, got ${String(err)}`);
    assert.match(err.message, pattern);
    message = err.message;
    return true;
  });
  return message;
}

function profilesDocument(proxy: FakeProxy, socks: FakeProxy): Record<string, unknown> {
  return {
    office: { url: `http://agent:${PROXY_PASSWORD}@${proxy.hostPort}`, description: 'Head office VPN' },
    wrongpass: { url: `http://agent:not-the-${PROXY_PASSWORD}@${proxy.hostPort}` },
    socks: { url: `socks5://agent:${SOCKS_PASSWORD}@${socks.hostPort}` },
  };
}

describe('egress profiles: svc_vpn_connect, svc_vpn_disconnect, and the web tools going through them', function () {
  this.timeout(60_000);
  let site: LoopbackServer;
  /** How each request reached the site: by the HTTP proxy's connection, the SOCKS proxy's, or directly. */
  const arrivals: Array<'http-proxy' | 'socks' | 'direct'> = [];
  let elsewhere: LoopbackServer;
  let proxy: FakeProxy;
  let socks: FakeProxy;
  let bed: ToolBed;
  let connect: HostedTool;
  let disconnect: HostedTool;
  let download: HostedTool;

  before(async () => {
    site = await listenOnLoopback(async (req, res) => {
      const port = req.socket.remotePort;
      arrivals.push(proxy.carries(port) ? 'http-proxy' : socks.carries(port) ? 'socks' : 'direct');
      res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
    });
    elsewhere = await listenOnLoopback(async (_req, res) => {
      res.end('internal');
    });
    proxy = await startHttpProxy('agent', PROXY_PASSWORD);
    socks = await startSocksProxy('agent', SOCKS_PASSWORD);
    const organizations = testConfig().organizations.map((org) => ({ id: org.id, name: org.name, models: org.models }));
    bed = await openToolBed({
      config: {
        organizations: [
          {
            ...organizations[0],
            users: [{ id: 'u-member', name: 'Member', role: 'member', keys: [] }],
            tools: { egressProfiles: profilesDocument(proxy, socks) },
          },
          { ...organizations[1], users: [] },
        ],
      },
      allowHosts: [new URL(site.origin).host],
    });
    connect = bed.tool(vpnTools, 'svc_vpn_connect');
    disconnect = bed.tool(vpnTools, 'svc_vpn_disconnect');
    download = bed.tool(webDownloadTool, 'svc_web_download');
  });

  after(async () => {
    await bed?.close();
    await Promise.all([site?.close(), elsewhere?.close(), proxy?.close(), socks?.close()]);
  });

  it('downloads through the HTTP proxy after svc_vpn_connect, and directly after svc_vpn_disconnect', async () => {
    const ctx = bed.ctx(conversationId());
    const from = arrivals.length;

    const connected = await connect.execute({ profile: 'office' }, ctx);
    assert.equal(connected.output, `Connected to egress profile "office" (Head office VPN): this conversation's web traffic now goes out through it.`);
    await download.execute({ url: `${site.origin}/a.txt` }, ctx);
    // A second download reuses the proxy's kept-alive tunnel: still through the proxy.
    await download.execute({ url: `${site.origin}/a2.txt` }, ctx);
    assert.match(proxy.forwarded.at(-1) ?? '', new RegExp(`^CONNECT ${new URL(site.origin).host}$`));

    assert.equal((await disconnect.execute({}, ctx)).output, 'Disconnected from egress profile "office": web traffic now goes out directly.');
    await download.execute({ url: `${site.origin}/b.txt` }, ctx);
    assert.deepEqual(arrivals.slice(from), ['http-proxy', 'http-proxy', 'direct']);
  });

  it('goes through a SOCKS5 proxy (username/password) the same way', async () => {
    const ctx = bed.ctx(conversationId());
    const before = socks.forwarded.length;
    const from = arrivals.length;
    await connect.execute({ profile: 'socks' }, ctx);
    const { output } = await download.execute({ url: `${site.origin}/c.txt` }, ctx);
    assert.match(output, /^Saved downloads\/c\.txt \(5 bytes, text\/plain\)/);
    assert.deepEqual(socks.forwarded.slice(before), [`CONNECT ${new URL(site.origin).host}`]);
    await disconnect.execute({}, ctx);
    await download.execute({ url: `${site.origin}/c2.txt` }, ctx);
    assert.deepEqual(arrivals.slice(from), ['socks', 'direct']);
  });

  it('is per conversation: another conversation of the organization still goes out directly', async () => {
    const connected = bed.ctx(conversationId());
    const other = bed.ctx(conversationId());
    await connect.execute({ profile: 'office' }, connected);
    const from = arrivals.length;
    await download.execute({ url: `${site.origin}/d.txt` }, other);
    await download.execute({ url: `${site.origin}/d.txt` }, connected);
    assert.deepEqual(arrivals.slice(from), ['direct', 'http-proxy']);
    assert.equal(await bed.deps.egress.proxyFor('acme', other.conversationId), null);
  });

  it('still refuses a private target through the proxy: the target is checked before the proxy sees it', async () => {
    const ctx = bed.ctx(conversationId());
    await connect.execute({ profile: 'office' }, ctx);
    const before = proxy.forwarded.length;
    await rejectsWith(download.execute({ url: `http://localhost:${new URL(elsewhere.origin).port}/` }, ctx), /localhost is not reachable/);
    await rejectsWith(download.execute({ url: `${elsewhere.origin}/` }, ctx), /not reachable from this gateway/);
    assert.equal(proxy.forwarded.length, before, 'the proxy was never asked');
  });

  it('never shows the proxy URL or its password: not in outputs, failures, or log lines', async () => {
    const ctx = bed.ctx(conversationId());
    const outputs: string[] = [];
    outputs.push((await connect.execute({ profile: 'office' }, ctx)).output);
    outputs.push((await download.execute({ url: `${site.origin}/e.txt` }, ctx)).output);
    outputs.push((await connect.execute({ profile: 'wrongpass' }, ctx)).output);
    const refusedBefore = proxy.refused;
    // The proxy refuses the wrong password (407): the failure says so without the URL.
    outputs.push(await rejectsWith(download.execute({ url: `${site.origin}/f.txt` }, ctx), /failed: Proxy response \(407\)/));
    assert.ok(proxy.refused > refusedBefore, 'the proxy saw (and refused) the request');
    outputs.push((await disconnect.execute({}, ctx)).output);
    const everything = [...outputs, ...bed.logs].join('\n');
    for (const secret of [PROXY_PASSWORD, SOCKS_PASSWORD, proxy.hostPort, 'agent:']) assert.ok(!everything.includes(secret), `${secret} leaked: ${everything}`);
    assert.ok(
      bed.logs.some((line) => line.includes('"profile":"office"')),
      'the log names the profile',
    );
  });

  it('answers an unknown profile with the list of profiles; an organization without any says so', async () => {
    const message = await rejectsWith(connect.execute({ profile: 'nope' }, bed.ctx(conversationId())), /^No egress profile named "nope"\. Available: /);
    assert.equal(message, 'No egress profile named "nope". Available: "office" (Head office VPN), "socks", "wrongpass".');
    await rejectsWith(connect.execute({ profile: 'office' }, bed.ctx(conversationId(), 'other')), /This organization has no egress profiles/);
    await rejectsWith(connect.execute({}, bed.ctx(conversationId())), /Argument profile/);
  });

  it('connecting again or disconnecting when not connected says so', async () => {
    const ctx = bed.ctx(conversationId());
    assert.equal((await disconnect.execute({}, ctx)).output, 'Not connected to an egress profile: web traffic already goes out directly.');
    await connect.execute({ profile: 'office' }, ctx);
    assert.match((await connect.execute({ profile: 'office' }, ctx)).output, /^Already connected to egress profile "office"/);
    assert.match((await connect.execute({ profile: 'socks' }, ctx)).output, /^Connected to egress profile "socks" \(switched from "office"\)/);
  });

  it('fails closed when the connected profile left the configuration: no silent direct traffic', async () => {
    const ctx = bed.ctx(conversationId());
    await connect.execute({ profile: 'office' }, ctx);
    // The same store under a configuration without "office" (as after an operator's edit and restart).
    const edited = testConfig();
    const egress = new ConversationEgress(edited, bed.deps.store);
    await rejectsWith(egress.proxyFor('acme', ctx.conversationId), /connected to egress profile "office", which this organization no longer has/);
    const before = arrivals.length;
    const downloadWithEdited = webDownloadTool({ ...bed.deps, config: { ...bed.deps.config }, egress }).tools[0]!;
    await rejectsWith(downloadWithEdited.execute({ url: `${site.origin}/g.txt` }, ctx), /no longer has/);
    assert.equal(arrivals.length, before, 'nothing was fetched');
  });

  it("forget() drops the conversation's choice", async () => {
    const ctx = bed.ctx(conversationId());
    await connect.execute({ profile: 'office' }, ctx);
    await vpnTools(bed.deps).forget?.(ctx.conversationId);
    assert.equal(await bed.deps.egress.proxyFor('acme', ctx.conversationId), null);
  });
});

describe('ConversationEgress: stored, so it survives a restart and every process sees it', function () {
  this.timeout(60_000);
  const logger = createLogger({ level: 'error', silent: true });
  const config = testConfig({
    organizations: [{ id: 'acme', name: 'Acme', models: ['*'], users: [], tools: { egressProfiles: { office: { url: 'http://proxy.internal:3128' } } } }],
  });

  it('a new instance over the reopened store still routes the conversation through its profile', async () => {
    const t = await openTestStore('embedded');
    let reopened: Store | null = null;
    try {
      const conversation = conversationId();
      await new ConversationEgress(config, t.store).connect('acme', conversation, 'office');
      await t.store.close();
      reopened = await createStore(t.config, { logger });
      const afterRestart = new ConversationEgress(config, reopened);
      assert.equal(await afterRestart.proxyFor('acme', conversation), 'http://proxy.internal:3128');
      assert.equal(await afterRestart.proxyFor('acme', conversationId()), null);
    } finally {
      await reopened?.close();
      await t.cleanup();
    }
  });

  it('two store instances on one database (two processes) agree at once: no stale cache', async () => {
    const t = await openTestStore('postgres');
    const second = await createStore(t.config, { logger });
    try {
      const conversation = conversationId();
      const here = new ConversationEgress(config, t.store);
      const there = new ConversationEgress(config, second);
      assert.equal(await there.proxyFor('acme', conversation), null);
      await here.connect('acme', conversation, 'office');
      assert.equal(await there.proxyFor('acme', conversation), 'http://proxy.internal:3128');
      assert.equal(await there.disconnect('acme', conversation), 'office');
      assert.equal(await here.proxyFor('acme', conversation), null);
    } finally {
      await second.close();
      await t.cleanup();
    }
  });
});
