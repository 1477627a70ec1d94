// Each model call's audit record carries the model, the provider, the token counts, the status and the
// error code: chat completions, legacy completions and Anthropic messages, each succeeding and failing
// upstream, streamed and not. Read back through the store as GET /v1/admin/audit lists them.
import assert from 'node:assert/strict';
import { chatStreamEvents, type ScriptedReply } from '../fixtures/upstreams/openai-upstream';
import { startGatewayWithUpstream, type GatewayWithUpstream } from '../gateway/gateway-helpers';
import type { AuditRecord } from '../../src/store/types';

type Operation = 'chat' | 'completions' | 'messages';

const PATHS: Record<Operation, string> = { chat: '/v1/chat/completions', completions: '/v1/completions', messages: '/v1/messages' };

function body(operation: Operation, stream: boolean): Record<string, unknown> {
  if (operation === 'completions') return { model: 'gpt-test', prompt: 'Say ok', max_tokens: 3, stream };
  const base = { model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }], stream };
  return operation === 'messages' ? { ...base, max_tokens: 20 } : base;
}

/** An upstream error answered before any byte of a reply: a 400 the provider does not retry. */
const UPSTREAM_400: ScriptedReply = {
  kind: 'json',
  status: 400,
  body: { error: { message: 'bad thing', type: 'invalid_request_error', code: 'bad_thing', param: null } },
};

describe('plugins/audit: model calls', function () {
  this.timeout(120_000);
  let env: GatewayWithUpstream;
  before(async () => {
    env = await startGatewayWithUpstream();
  });
  after(() => env?.close());

  async function recordOf(requestId: string): Promise<AuditRecord> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const records = await env.gw.store.audit.list({ orgId: 'acme', since: null, limit: 1000, after: null });
      const found = records.find((r) => r.requestId === requestId);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no audit record for ${requestId}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async function call(operation: Operation, stream: boolean, requestId: string): Promise<{ status: number; text: string }> {
    const res = await fetch(`${env.gw.url}${PATHS[operation]}`, {
      method: 'POST',
      headers: { ...env.gw.auth('member'), 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify(body(operation, stream)),
    });
    return { status: res.status, text: await res.text() };
  }

  for (const operation of ['chat', 'completions', 'messages'] as const) {
    for (const stream of [false, true]) {
      const mode = stream ? 'streamed' : 'not streamed';

      it(`${operation}, ${mode}, success: model, provider, token counts, status 200, no error code`, async () => {
        const id = `mc-${operation}-${stream}-ok`;
        const reply = await call(operation, stream, id);
        assert.equal(reply.status, 200, reply.text);
        const record = await recordOf(id);
        // The fake upstream reports 7/3 (chat JSON), 2/1 (completions JSON) and 5/2 (every stream).
        const tokens = stream ? [5, 2] : operation === 'completions' ? [2, 1] : [7, 3];
        assert.deepEqual(
          {
            model: record.model,
            provider: record.provider,
            promptTokens: record.promptTokens,
            completionTokens: record.completionTokens,
            status: record.status,
          },
          { model: 'gpt-test', provider: 'up', promptTokens: tokens[0], completionTokens: tokens[1], status: 200 },
        );
        assert.equal(record.errorCode, undefined);
      });

      it(`${operation}, ${mode}, upstream error before the reply: model, provider, status and error code`, async () => {
        const id = `mc-${operation}-${stream}-err`;
        env.upstream.script(UPSTREAM_400);
        const reply = await call(operation, stream, id);
        assert.equal(reply.status, 400, reply.text);
        const record = await recordOf(id);
        assert.deepEqual(
          { model: record.model, provider: record.provider, status: record.status, errorCode: record.errorCode },
          { model: 'gpt-test', provider: 'up', status: 400, errorCode: 'upstream_error' },
        );
        assert.equal((record.promptTokens ?? 0) + (record.completionTokens ?? 0), 0, 'a failed call counts no tokens');
      });
    }

    it(`${operation}, streamed, upstream fails mid-stream: status 200 and the error code`, async () => {
      const id = `mc-${operation}-midstream`;
      // Cut after the two text deltas: every format has sent its first event by then.
      env.upstream.script({ kind: 'sse', chunks: chatStreamEvents('gpt-test', ['Hel', 'lo']), gapMs: 20, failAfter: 3 });
      const reply = await call(operation, true, id);
      assert.equal(reply.status, 200, reply.text);
      const record = await recordOf(id);
      assert.equal(record.model, 'gpt-test');
      assert.equal(record.provider, 'up');
      assert.equal(record.status, 200);
      assert.equal(record.errorCode, 'upstream_error');
    });
  }
});
