import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { chatStreamEvents } from '../fixtures/upstreams/openai-upstream';
import { postRaw, startGatewayWithUpstream, waitForUsage, type GatewayWithUpstream } from './gateway-helpers';

describe('POST /v1/chat/completions (gateway, OpenAI-format upstream)', function () {
  let env: GatewayWithUpstream;
  let client: OpenAI;

  before(async function () {
    this.timeout(90_000); // the embedded store's first start is slow on a busy machine
    env = await startGatewayWithUpstream();
    client = new OpenAI({ apiKey: 'agw_test_member_0123456789abcdefghijklmno', baseURL: `${env.gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await env.close();
  });
  beforeEach(() => {
    env.upstream.requests.length = 0;
    env.upstream.aborted.length = 0;
  });

  it("forwards the caller's bytes untouched (unknown fields, spacing, number forms) and relays the reply bytes", async () => {
    const body =
      '{ "model":"gpt-test",  "messages":[{"role":"developer","content":"be brief"},{"role":"user","content":"hi"}], "x_vendor_knob": {"deep":[1,2.50,1e3]}, "temperature":0.20 }';
    const reply =
      '{"id":"chatcmpl-x","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":13},"x_upstream_field":  true}';
    env.upstream.script({ kind: 'raw', status: 200, body: reply });
    const res = await postRaw(env.gw, '/v1/chat/completions', body);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), reply);
    const seen = env.upstream.requests[0]!;
    assert.equal(seen.raw.toString(), body);
    assert.equal(seen.headers['authorization'], 'Bearer sk-upstream-key');
    const usage = await waitForUsage(env.gw, 'acme', 'gpt-test');
    assert.equal(usage.promptTokens >= 12, true);
  });

  it("records an upstream's odd token counts as counts, and they do not block the usage written after them", async () => {
    const before = (await env.gw.store.usage.totals('acme', null)).find((t) => t.model === 'gpt-test') ?? { requests: 0, promptTokens: 0, completionTokens: 0 };
    const reply = (usage: string) =>
      `{"id":"chatcmpl-u","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":${usage}}`;
    // A fraction, a negative count, 1e400 (Infinity once parsed) and one past a 32-bit integer.
    for (const usage of [
      '{"prompt_tokens":2.5,"completion_tokens":-4}',
      '{"prompt_tokens":1e400,"completion_tokens":5e9}',
      '{"prompt_tokens":7,"completion_tokens":1}',
    ]) {
      env.upstream.script({ kind: 'raw', status: 200, body: reply(usage) });
      const res = await postRaw(env.gw, '/v1/chat/completions', '{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}');
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    const deadline = Date.now() + 20_000;
    let after = await waitForUsage(env.gw, 'acme', 'gpt-test');
    while (after.requests < before.requests + 3 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      after = await waitForUsage(env.gw, 'acme', 'gpt-test');
    }
    assert.deepEqual(
      [after.requests - before.requests, after.promptTokens - before.promptTokens, after.completionTokens - before.completionTokens],
      [3, 3 + 0 + 7, 0 + 2_147_483_647 + 1],
    );
  });

  it("replaces only the model value when the provider's model name differs", async () => {
    const body = '{"model":"alias","messages":[{"role":"user","content":"hi"}],"seed":7}';
    const res = await postRaw(env.gw, '/v1/chat/completions', body);
    assert.equal(res.status, 200);
    assert.equal(env.upstream.requests[0]!.raw.toString(), '{"model":"gpt-real-2024","messages":[{"role":"user","content":"hi"}],"seed":7}');
  });

  it('stripped fields are cut from the caller’s bytes (every copy), the rest forwarded as sent, the model swapped', async () => {
    const body =
      '{"metadata":{"team":"a"},"model":"alias", "messages":[{"role":"user","content":"say \\"metadata\\""}],"temperature":0.20,"proxy_server_request":{},"metadata":{"team":"b"}}';
    const res = await postRaw(env.gw, '/v1/chat/completions', body);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    assert.equal(
      env.upstream.requests[0]!.raw.toString(),
      '{"model":"gpt-real-2024", "messages":[{"role":"user","content":"say \\"metadata\\""}],"temperature":0.20}',
    );
  });

  it('strips metadata, litellm_metadata and proxy_server_request and forwards every other field', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.5,
      max_tokens: 20,
      top_p: 0.9,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
      stop: ['END'],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      response_format: { type: 'json_object' },
      user: 'end-user-1',
      seed: 1,
      logprobs: true,
      metadata: { team: 'a' },
      // @ts-expect-error fields a LiteLLM client adds
      litellm_metadata: { x: 1 },
      proxy_server_request: { url: 'x' },
    });
    assert.equal(completion.choices[0]?.message.content, 'Hello from upstream');
    const sent = env.upstream.requests[0]!.json();
    for (const field of ['metadata', 'litellm_metadata', 'proxy_server_request']) assert.equal(field in sent, false, field);
    for (const field of [
      'temperature',
      'max_tokens',
      'top_p',
      'frequency_penalty',
      'presence_penalty',
      'stop',
      'tools',
      'tool_choice',
      'response_format',
      'user',
      'seed',
      'logprobs',
    ]) {
      assert.ok(field in sent, field);
    }
  });

  it('404 model_not_found in the OpenAI envelope for a model the organization may not use', async () => {
    const res = await fetch(`${env.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...env.gw.auth('outsider'), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }),
    });
    assert.equal(res.status, 404);
    const body = (await res.json()) as { error: { code: string; param: string; message: string } };
    assert.equal(body.error.code, 'model_not_found');
    assert.equal(body.error.param, 'model');
    assert.match(body.error.message, /gpt-test/);
    const unknown = await postRaw(env.gw, '/v1/chat/completions', JSON.stringify({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(unknown.status, 404);
    assert.equal(env.upstream.requests.length, 0);
  });

  it('400 naming the field: messages [], tool message without tool_call_id, svc block', async () => {
    const empty = await postRaw(env.gw, '/v1/chat/completions', JSON.stringify({ model: 'gpt-test', messages: [] }));
    assert.equal(empty.status, 400);
    assert.match(((await empty.json()) as { error: { message: string } }).error.message, /messages/);
    const tool = await postRaw(
      env.gw,
      '/v1/chat/completions',
      JSON.stringify({
        model: 'gpt-test',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'tool', content: 'r' },
        ],
      }),
    );
    assert.equal(tool.status, 400);
    assert.match(((await tool.json()) as { error: { message: string } }).error.message, /tool_call_id/);
    const svc = await postRaw(
      env.gw,
      '/v1/chat/completions',
      JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], svc: { system_prompt: 'agent_default' } }),
    );
    assert.equal(svc.status, 400);
    const svcBody = (await svc.json()) as { error: { message: string; param: string | null } };
    assert.match(svcBody.error.message, /svc/);
    assert.equal(env.upstream.requests.length, 0);
  });

  it('streams through the SDK: chunks relayed as the upstream split them, usage recorded', async () => {
    const text = chatStreamEvents('gpt-test', ['Hel', 'lo', ' there'], { prompt_tokens: 21, completion_tokens: 3, total_tokens: 24 }).join('');
    // Split at awkward places: inside JSON, inside "data:", between \n and \n.
    const cuts = [3, 50, 51, 120, 200, 201, text.length - 5];
    const chunks = cuts.map((cut, i) => text.slice(i === 0 ? 0 : cuts[i - 1], cut)).concat(text.slice(cuts.at(-1)));
    env.upstream.script({ kind: 'sse', chunks, gapMs: 5 });
    // Earlier tests' usage is written in batches after their replies: wait until it has all landed
    // (two reads a batch interval apart agree), so that only this stream's usage is counted below.
    const aliasPrompt = async (): Promise<number> => (await env.gw.store.usage.totals('acme', null)).find((t) => t.model === 'alias')?.promptTokens ?? 0;
    let priorPrompt = await aliasPrompt();
    for (let settled = false; !settled;) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const now = await aliasPrompt();
      settled = now === priorPrompt;
      priorPrompt = now;
    }
    const stream = await client.chat.completions.create({
      model: 'alias',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = '';
    let usage: unknown = null;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(content, 'Hello there');
    assert.deepEqual(usage, { prompt_tokens: 21, completion_tokens: 3, total_tokens: 24 });
    // The caller's pass-through body keeps its own stream fields.
    const sent = env.upstream.requests[0]!.json();
    assert.equal(sent['stream'], true);
    assert.equal(sent['model'], 'gpt-real-2024');
    const deadline = Date.now() + 20_000;
    let recorded = await waitForUsage(env.gw, 'acme', 'alias');
    while (recorded.promptTokens === priorPrompt && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      recorded = await waitForUsage(env.gw, 'acme', 'alias');
    }
    assert.equal(recorded.promptTokens - priorPrompt, 21);
  });

  it('sends SSE headers at once and ends chat streams with data: [DONE]', async () => {
    const res = await postRaw(env.gw, '/v1/chat/completions', JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], stream: true }));
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(res.headers.get('cache-control'), 'no-cache, no-transform');
    const body = await res.text();
    assert.ok(body.endsWith('data: [DONE]\n\n'));
  });

  it('retries a 429 with Retry-After before answering; upstream errors keep their status and message', async () => {
    env.upstream.script({ kind: 'json', status: 429, body: { error: { message: 'rate limited' } }, headers: { 'retry-after-ms': '120' } });
    const ok = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] });
    assert.equal(ok.choices[0]?.message.content, 'Hello from upstream');
    assert.equal(env.upstream.requests.length, 2);

    env.upstream.script({ kind: 'json', status: 400, body: { error: { message: "Invalid value for 'temperature'", type: 'invalid_request_error' } } });
    const res = await postRaw(
      env.gw,
      '/v1/chat/completions',
      JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], temperature: 9 }),
    );
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { message: string; type: string } };
    assert.equal(body.error.message, "Invalid value for 'temperature'");
    assert.equal(body.error.type, 'invalid_request_error');
  });

  it('a mid-stream upstream failure ends the stream with an error event (no hang); the SDK throws', async () => {
    const events = chatStreamEvents('gpt-test', ['partial', ' answer']);
    env.upstream.script({ kind: 'sse', chunks: [events[0]!, events[1]!, events[2]!.slice(0, 30)], failAfter: 3, gapMs: 10 });
    const res = await postRaw(env.gw, '/v1/chat/completions', JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], stream: true }));
    const text = await res.text();
    assert.equal(res.status, 200);
    // The half event the upstream sent before dying is held back; the client gets whole events then the error.
    assert.ok(text.startsWith(events[0]! + events[1]!), text);
    assert.match(text, /data: \{"error":\{"message":"Upstream provider up broke off the reply\.","type":"upstream_error"/);
    assert.equal(text.includes('[DONE]'), false);

    env.upstream.script({ kind: 'sse', chunks: events, failAfter: 2, gapMs: 10 });
    const stream = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], stream: true });
    await assert.rejects(async () => {
      for await (const _ of stream) void _;
    }, /broke off the reply/);
  });

  it('a client that disconnects aborts the upstream call', async () => {
    const events = chatStreamEvents(
      'gpt-test',
      Array.from({ length: 40 }, (_, i) => `t${i} `),
    );
    env.upstream.script({ kind: 'sse', chunks: events, gapMs: 50 });
    const res = await postRaw(env.gw, '/v1/chat/completions', JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], stream: true }));
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    await env.upstream.waitForAborts(1);
    assert.equal(env.upstream.aborted.length, 1);
  });

  it('a client that disconnects before the upstream answers aborts the pending upstream call', async () => {
    env.upstream.script({ kind: 'hang' });
    const gone = new AbortController();
    const pending = fetch(`${env.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...env.gw.auth('member'), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] }),
      signal: gone.signal,
    });
    while (env.upstream.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    gone.abort();
    await assert.rejects(pending);
    await env.upstream.waitForAborts(1);
    assert.equal(env.upstream.aborted.length, 1);
  });

  it('the demo model answers through the same route, JSON and stream', async () => {
    const completion = await client.chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'ping' }] });
    assert.equal(completion.choices[0]?.message.content, 'Demo reply to: ping');
    const stream = await client.chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'ping' }], stream: true });
    let content = '';
    for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
    assert.equal(content, 'Demo reply to: ping');
  });
});
