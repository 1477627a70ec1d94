// Every model call is metered, also a stored response that its caller left mid-stream: generation goes
// on (to be read or resumed later) and its usage, reported after the request's audit record was
// written, becomes a usage record of its own.
import assert from 'node:assert/strict';
import { responsesStreamEvents } from '../fixtures/upstreams/responses-wire';
import { startGatewayWithUpstream, type GatewayWithUpstream } from '../gateway/gateway-helpers';

describe('Responses: usage of a stored response whose caller left', function () {
  this.timeout(90_000);
  let env: GatewayWithUpstream;

  before(async () => {
    env = await startGatewayWithUpstream({ provider: { responses: 'native' } });
  });
  after(async () => {
    await env.close();
  });

  it('is recorded when the upstream finishes after the caller disconnected', async () => {
    const events = responsesStreamEvents('gpt-test', ['one', ' two', ' three', ' four'], { usage: { input_tokens: 321, output_tokens: 54 } });
    env.upstream.script({ kind: 'sse', chunks: events, gapMs: 150 });
    const controller = new AbortController();
    const res = await fetch(`${env.gw.url}/v1/responses`, {
      method: 'POST',
      headers: { ...env.gw.auth('member'), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', input: 'count', stream: true, store: true }),
      signal: controller.signal,
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    // Read until response.created names the response (the gateway's id), then leave.
    let head = '';
    let id: string | undefined;
    while (id === undefined) {
      const chunk = await reader.read();
      assert.ok(!chunk.done, 'the stream names its response');
      head += new TextDecoder().decode(chunk.value);
      id = /"id":"(resp_[0-9a-f]{32})"/.exec(head)?.[1];
    }
    controller.abort();
    // The upstream is read to its end (about 12 events × 150 ms), then the usage is written.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const totals = await env.gw.store.usage.totals('acme', null);
      const found = totals.find((t) => t.model === 'gpt-test');
      if (found && found.promptTokens >= 321) {
        assert.equal(found.completionTokens >= 54, true);
        break;
      }
      assert.ok(Date.now() < deadline, `usage not recorded: ${JSON.stringify(found)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const stored = await env.gw.store.responses.get(id);
    assert.equal(stored?.status, 'completed');
  });
});
