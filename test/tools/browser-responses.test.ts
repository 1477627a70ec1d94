// The browser tools through POST /v1/responses: a model that opens a page and takes a screenshot gets
// both run by the gateway's tool loop, each an svc_call item, and sees the screenshot as an image.
import assert from 'node:assert/strict';
import path from 'node:path';
import { jsonReply, post } from '../responses/http-helpers';
import { startSite } from './browser-fixtures';
import { readdir } from 'node:fs/promises';
import { toolMessages, useToolGateway, type Json } from './tool-gateway';
import { BACKENDS } from '../helpers/backends';

for (const backend of BACKENDS) {
  describe(`browser tools through POST /v1/responses (${backend})`, function () {
    this.timeout(120_000);
    let site: Awaited<ReturnType<typeof startSite>>;
    const bed = useToolGateway(async () => {
      site = await startSite(9);
      return {
        backend,
        tools: { maxRounds: 4, allowHosts: [`127.0.0.1:${site.port}`] },
        config: { plugins: { auth: { enabled: true } } },
        teardown: () => site?.close(),
      };
    });

    it('navigates, takes a screenshot the model is shown, and answers; a refused navigation is a failed item the model sees', async () => {
      bed.upstream.script((body) => {
        const done = toolMessages(body).length;
        if (done === 0)
          return { toolCalls: [{ id: 'call_nav', name: 'svc_browser_control', arguments: JSON.stringify({ action: 'navigate', url: `${site.origin}/` }) }] };
        if (done === 1) return { toolCalls: [{ id: 'call_shot', name: 'svc_browser_screenshot', arguments: '{}' }] };
        if (done === 2)
          return { toolCalls: [{ id: 'call_bad', name: 'svc_browser_control', arguments: JSON.stringify({ action: 'navigate', url: 'http://10.0.0.1/' }) }] };
        return { reply: 'I looked at the page.' };
      });
      const reply = await jsonReply(
        await post(
          `${bed.gw.url}/v1/responses`,
          { model: 'fake', input: 'look at the site', store: true, tools: [{ type: 'svc_tools' }] },
          bed.gw.auth('admin'),
        ),
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
      const files = (await readdir(bed.workspaces, { recursive: true })).map((file) => file.split(path.sep).join('/'));
      assert.ok(
        files.some((file) => file.startsWith('acme/') && file.endsWith(`/${saved}`)),
        files.join('\n'),
      );
      const afterShot = JSON.stringify(bed.upstream.calls[2]!.body);
      assert.match(afterShot, /data:image\/png;base64,iVBORw0KGgo/);
      const lastTurn = toolMessages(bed.upstream.calls[3]!.body);
      assert.match(JSON.stringify(lastTurn.at(-1)?.content), /was refused/);
    });
  });
}
