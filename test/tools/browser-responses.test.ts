// The browser tools through POST /v1/responses: a model that opens a page and takes a screenshot gets
// both run by the gateway's tool loop, each an svc_call item, and sees the screenshot as an image.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startRunUpstream, runUpstreamConfig, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { jsonReply, post } from '../responses/http-helpers';
import { startSite } from './browser-fixtures';

type Json = Record<string, unknown>;
type Message = { role: string; content?: unknown };

const toolMessages = (body: Json): Message[] => ((body['messages'] as Message[]) ?? []).filter((m) => m.role === 'tool');

describe('browser tools through POST /v1/responses', function () {
  this.timeout(120_000);
  let upstream: RunUpstream;
  let site: Awaited<ReturnType<typeof startSite>>;
  let gw: TestGateway;
  let workspaces: string;

  before(async () => {
    upstream = await startRunUpstream();
    site = await startSite(9);
    workspaces = await mkdtemp(path.join(tmpdir(), 'agw-ws-'));
    gw = await startTestGateway({
      config: {
        ...runUpstreamConfig(upstream),
        tools: { workspaceDir: workspaces, maxRounds: 4, allowHosts: [`127.0.0.1:${site.port}`] },
        plugins: { auth: { enabled: true } },
      },
    });
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
    await site?.close();
    await rm(workspaces, { recursive: true, force: true });
  });

  it('navigates, takes a screenshot the model is shown, and answers; a refused navigation is a failed item the model sees', async () => {
    upstream.script((body) => {
      const done = toolMessages(body).length;
      if (done === 0)
        return { toolCalls: [{ id: 'call_nav', name: 'svc_browser_control', arguments: JSON.stringify({ action: 'navigate', url: `${site.origin}/` }) }] };
      if (done === 1) return { toolCalls: [{ id: 'call_shot', name: 'svc_browser_screenshot', arguments: '{}' }] };
      if (done === 2)
        return { toolCalls: [{ id: 'call_bad', name: 'svc_browser_control', arguments: JSON.stringify({ action: 'navigate', url: 'http://10.0.0.1/' }) }] };
      return { reply: 'I looked at the page.' };
    });
    const reply = await jsonReply(
      await post(`${gw.url}/v1/responses`, { model: 'fake', input: 'look at the site', tools: [{ type: 'svc_tools' }] }, gw.auth('admin')),
    );
    assert.equal(reply.status, 200, reply.text);
    const output = reply.body['output'] as Json[];
    assert.deepEqual(
      output.map((item) => [item['type'], item['name'] ?? null, item['status']]),
      [
        ['svc_call', 'svc_browser_control', 'completed'],
        ['svc_call', 'svc_browser_screenshot', 'completed'],
        ['svc_call', 'svc_browser_control', 'failed'],
        ['message', null, 'completed'],
      ],
    );
    assert.match(String(output[0]!['output']), /^Title: Home\nURL: http:\/\/127\.0\.0\.1:\d+\/\n[\s\S]*Welcome home/);
    const saved = /saved to (browser\/screenshot-[^ ]+\.png)\.$/.exec(String(output[1]!['output']))?.[1];
    assert.ok(saved, String(output[1]!['output']));
    assert.match(String(output[2]!['error']), /The navigation to http:\/\/10\.0\.0\.1\/ was refused: 10\.0\.0\.1 is not reachable from this gateway/);

    // The screenshot is in the conversation's workspace, and the model's next turn carried it as an image.
    const files = (await readdir(workspaces, { recursive: true })).map((file) => file.split(path.sep).join('/'));
    assert.ok(
      files.some((file) => file.startsWith('acme/') && file.endsWith(`/${saved}`)),
      files.join('\n'),
    );
    const afterShot = JSON.stringify(upstream.calls[2]!.body);
    assert.match(afterShot, /data:image\/png;base64,iVBORw0KGgo/);
    const lastTurn = toolMessages(upstream.calls[3]!.body);
    assert.match(JSON.stringify(lastTurn.at(-1)?.content), /was refused/);
  });
});
