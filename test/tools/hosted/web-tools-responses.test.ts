// The web tools end to end through POST /v1/responses: a model connects its conversation to an egress
// profile, downloads through it (a real HTTP proxy on 127.0.0.1 counts the requests), the choice holds
// in the conversation's next response, and after svc_vpn_disconnect the download goes out directly.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { listenOnLoopback, type LoopbackServer } from '../../fixtures/upstreams/loopback-server';
import { jsonReply } from '../../responses/http-helpers';
import { messagesOf, organizationsWithTools, useToolGateway, type Json } from '../tool-gateway';
import { startHttpProxy, type FakeProxy } from './proxies';

const PROXY_PASSWORD = 'e2e-proxy-secret';

describe('web tools through POST /v1/responses: svc_vpn_connect, svc_web_download, svc_vpn_disconnect', function () {
  this.timeout(60_000);
  let site: LoopbackServer;
  let proxy: FakeProxy;
  /** Each download's path and whether it reached the site by the proxy's connection. */
  const arrivals: string[] = [];
  const bed = useToolGateway(async () => {
    site = await listenOnLoopback(async (req, res) => {
      arrivals.push(`${req.url ?? ''} ${proxy.carries(req.socket.remotePort) ? 'via proxy' : 'direct'}`);
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`content of ${req.url ?? ''}`);
    });
    proxy = await startHttpProxy('agent', PROXY_PASSWORD);
    const office = { url: `http://agent:${PROXY_PASSWORD}@${proxy.hostPort}`, description: 'Office' };
    return {
      tools: { allowHosts: [new URL(site.origin).host] },
      config: { organizations: organizationsWithTools({ egressProfiles: { office } }), plugins: { auth: { enabled: true } } },
      teardown: () => Promise.all([site?.close(), proxy?.close()]),
    };
  });
  // Each step follows from the last message: the user's request, or the result of the previous call.
  beforeEach(() => {
    const next: Record<string, { id: string; name: string; arguments: Json } | string> = {
      'connect and fetch': { id: 'call_connect', name: 'svc_vpn_connect', arguments: { profile: 'office' } },
      call_connect: { id: 'call_dl1', name: 'svc_web_download', arguments: { url: `${site.origin}/one.txt` } },
      call_dl1: 'fetched one',
      'fetch again, then go direct': { id: 'call_dl2', name: 'svc_web_download', arguments: { url: `${site.origin}/two.txt` } },
      call_dl2: { id: 'call_disc', name: 'svc_vpn_disconnect', arguments: {} },
      call_disc: { id: 'call_dl3', name: 'svc_web_download', arguments: { url: `${site.origin}/three.txt` } },
      call_dl3: 'fetched all',
    };
    bed.upstream.script((body) => {
      const last = messagesOf(body).at(-1)!;
      const key = last.role === 'tool' ? String(last.tool_call_id) : typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
      const step = Object.entries(next).find(([k]) => key === k || key.includes(k))?.[1];
      if (step === undefined) return { reply: `unexpected: ${key}` };
      if (typeof step === 'string') return { reply: step };
      return { toolCalls: [{ id: step.id, name: step.name, arguments: JSON.stringify(step.arguments) }] };
    });
  });

  const tools = [{ type: 'svc_vpn_connect' }, { type: 'svc_vpn_disconnect' }, { type: 'svc_web_download' }];

  it("goes out through the conversation's profile, across its responses, until it disconnects", async () => {
    const first = await jsonReply(await bed.respond({ input: 'connect and fetch', store: true, tools }));
    assert.equal(first.status, 200, first.text);
    const firstOutput = first.body['output'] as Json[];
    assert.deepEqual(
      firstOutput.map((item) => [item['type'], item['name'] ?? null, item['status']]),
      [
        ['svc_call', 'svc_vpn_connect', 'completed'],
        ['svc_call', 'svc_web_download', 'completed'],
        ['message', null, 'completed'],
      ],
    );
    assert.match(String(firstOutput[0]!['output']), /^Connected to egress profile "office" \(Office\)/);
    assert.match(String(firstOutput[1]!['output']), /^Saved downloads\/one\.txt \(\d+ bytes, text\/plain\)/);
    assert.deepEqual(arrivals, ['/one.txt via proxy']);

    const second = await jsonReply(await bed.respond({ input: 'fetch again, then go direct', previous_response_id: first.body['id'], store: true, tools }));
    assert.equal(second.status, 200, second.text);
    const secondOutput = second.body['output'] as Json[];
    assert.deepEqual(
      secondOutput.map((item) => [item['name'] ?? item['type'], item['status']]),
      [
        ['svc_web_download', 'completed'],
        ['svc_vpn_disconnect', 'completed'],
        ['svc_web_download', 'completed'],
        ['message', 'completed'],
      ],
    );
    // The conversation's next response still went out through its profile; after the disconnect, directly.
    assert.deepEqual(arrivals, ['/one.txt via proxy', '/two.txt via proxy', '/three.txt direct']);
    assert.ok(!JSON.stringify([first.body, second.body]).includes(PROXY_PASSWORD), 'the proxy URL is in no output');
    const conversation = (first.body['conversation'] as Json | null)?.['id'];
    assert.equal(typeof conversation, 'string', JSON.stringify(first.body['conversation']));
    assert.equal(await readFile(path.join(bed.workspaceOf(String(conversation)), 'downloads', 'three.txt'), 'utf8'), 'content of /three.txt');
  });
});
