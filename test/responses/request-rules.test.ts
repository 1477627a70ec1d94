// POST /v1/responses, the route's own rules over HTTP (spec "POST /v1/responses" rules 1-3, the tools
// row, "Opt-in extensions", Events rule 2, the nested error table): requests the route refuses never
// reach an upstream; a native Responses upstream gets the caller's bytes but for the model swap and
// the stripped fields, whose `metadata` is echoed back instead; unlisted fields pass through; the
// curated prompt is added only when asked, before the caller's instructions, with the operator's text
// when configured; failures before the first byte are JSON, never SSE.
import assert from 'node:assert/strict';
import { textEvents, textMessage } from '../fixtures/upstreams/anthropic-events';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from '../fixtures/upstreams/anthropic-upstream';
import { startGatewayWithUpstream, type GatewayWithUpstream } from '../gateway/gateway-helpers';
import { DEFAULT_CURATED_PROMPT } from '../../src/operations/responses/curated-prompt';
import { assertNestedError, assertResponsesFraming, jsonReply, parseSseFrames, post } from './http-helpers';

const PROVIDERS = (anthropicUrl: string): Record<string, Record<string, unknown>> => ({
  native: { type: 'openai', baseUrl: 'UPSTREAM', apiKey: 'sk-native-key', responses: 'native', retries: { max: 0 } },
  claude: { type: 'anthropic', baseUrl: anthropicUrl, apiKey: FAKE_ANTHROPIC_KEY, retries: { max: 0 } },
});
const MODELS = [
  { id: 'resp-native', provider: 'native', upstream: 'gpt-upstream-9' },
  { id: 'resp-same', provider: 'native' },
  { id: 'resp-claude', provider: 'claude', upstream: 'claude-sonnet-4-20250514' },
];

describe('POST /v1/responses: the route rules over HTTP', function () {
  this.timeout(60_000);
  let env: GatewayWithUpstream;
  let anthropic: FakeAnthropic;

  before(async function () {
    this.timeout(120_000);
    anthropic = await startFakeAnthropic();
    env = await startGatewayWithUpstream({ providers: PROVIDERS(anthropic.baseUrl), models: MODELS });
  });
  after(async () => {
    await env?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    env.upstream.requests.length = 0;
    anthropic.requests.length = 0;
  });

  const url = (): string => `${env.gw.url}/v1/responses`;
  const send = (body: unknown): Promise<Response> => post(url(), body, env.gw.auth('member'));
  const nothingSent = (): void => {
    assert.equal(env.upstream.requests.length, 0, 'nothing went to the native upstream');
    assert.equal(anthropic.requests.length, 0, 'nothing went to Anthropic');
  };
  const sentNative = (): { raw: string; json: Record<string, unknown>; path: string } => {
    assert.equal(env.upstream.requests.length, 1, 'one request to the native upstream');
    const seen = env.upstream.requests[0]!;
    return { raw: seen.raw.toString('utf8'), json: seen.json(), path: seen.path };
  };

  describe('refused before anything is sent (nested envelope, JSON whether streamed or not)', () => {
    for (const stream of [false, true]) {
      it(`an mcp tool on a stateless request: 400 unsupported_tool_type naming the field (stream: ${stream})`, async () => {
        const reply = await jsonReply(
          await send({
            model: 'resp-native',
            input: 'hi',
            stream,
            tools: [
              { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } },
              { type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com/sse' },
            ],
          }),
        );
        const error = assertNestedError(reply, 400, 'unsupported_tool_type', 'tools[1].type');
        assert.match(String(error['message']), /mcp/);
        nothingSent();
      });
    }

    it('conversation together with previous_response_id: 400 mutually_exclusive_parameters', async () => {
      const reply = await jsonReply(await send({ model: 'resp-native', input: 'hi', conversation: 'conv_123', previous_response_id: 'resp_123' }));
      const error = assertNestedError(reply, 400, 'mutually_exclusive_parameters');
      assert.match(String(error['message']), /conversation/);
      assert.match(String(error['message']), /previous_response_id/);
      nothingSent();
    });

    for (const stream of [false, true]) {
      it(`background: true with store: true: 400 unsupported_parameter naming background (stream: ${stream})`, async () => {
        const reply = await jsonReply(await send({ model: 'resp-native', input: 'hi', store: true, background: true, stream }));
        assertNestedError(reply, 400, 'unsupported_parameter', 'background');
        nothingSent();
      });
    }

    it('background: true on a stateless request is forwarded (it is refused only on the stateful path)', async () => {
      const reply = await jsonReply(await send({ model: 'resp-same', input: 'hi', background: true }));
      assert.equal(reply.status, 200, reply.text);
      assert.equal(sentNative().json['background'], true);
    });

    for (const stream of [false, true]) {
      it(`an unknown model: 404 model_not_found in the nested envelope, JSON (stream: ${stream})`, async () => {
        const reply = await jsonReply(await send({ model: 'no-such-model', input: 'hi', stream }));
        assertNestedError(reply, 404, 'model_not_found');
        nothingSent();
      });
    }

    it('a native upstream answering 500 before its stream starts: a JSON error, not SSE (stream: true)', async () => {
      env.upstream.script({ kind: 'json', status: 500, body: { error: { message: 'upstream exploded', type: 'server_error', code: null } } });
      const reply = await jsonReply(await send({ model: 'resp-native', input: 'hi', stream: true }));
      assert.ok(reply.status >= 500, reply.text);
      const error = reply.body['error'] as Record<string, unknown>;
      assert.equal(typeof error['message'], 'string');
      assert.equal(typeof error['type'], 'string');
      assert.equal(env.upstream.requests.length, 1);
    });

    it('a translated (Anthropic) upstream answering 500 before its stream starts: a JSON error, not SSE', async () => {
      anthropic.script({ kind: 'error', status: 500, body: { type: 'error', error: { type: 'api_error', message: 'overloaded inside' } } });
      const reply = await jsonReply(await send({ model: 'resp-claude', input: 'hi', stream: true }));
      assert.ok(reply.status >= 500, reply.text);
      assert.equal(typeof (reply.body['error'] as Record<string, unknown>)['message'], 'string');
      assert.equal(anthropic.requests.length, 1);
    });
  });

  describe('rule 1: what a native upstream gets', () => {
    it("the caller's bytes, only the model swapped: key order, spacing, unlisted and listed optional fields as sent", async () => {
      // Odd spacing and key order, an unlisted field (nested), listed optional fields: all must arrive as written.
      const raw =
        '{ "input":[{"role":"user","content":[{"type":"input_text","text":"héllo \\u00e9"}]}],\n  "model" : "resp-native",' +
        '"future_field":{"nested":[1,2,{"x":null}]},"include":["reasoning.encrypted_content"],"truncation":"auto",' +
        '"service_tier":"flex","prompt_cache_key":"k-1","parallel_tool_calls":false,"max_output_tokens":64,' +
        '"tools":[{"type":"code_interpreter","container":{"type":"auto"}},{"type":"web_search_preview"}],"top_p":0.5 }';
      const reply = await jsonReply(await send(raw));
      assert.equal(reply.status, 200, reply.text);
      const seen = sentNative();
      assert.equal(seen.path, '/v1/responses');
      assert.equal(seen.raw, raw.replace('"resp-native"', '"gpt-upstream-9"'));
    });

    it('without a model alias the bytes are exactly the caller’s', async () => {
      const raw = '{"model":"resp-same",   "input":"exact bytes", "temperature":0.25,"x_vendor":{"a":[true]}}';
      const reply = await jsonReply(await send(raw));
      assert.equal(reply.status, 200, reply.text);
      assert.equal(sentNative().raw, raw);
    });

    const ownFields = {
      metadata: { ticket: 'T-42', team: 'core' },
      litellm_metadata: { tags: ['a'] },
      proxy_server_request: { url: 'http://internal' },
      svc: { system_prompt: 'off' },
    };

    it('metadata, litellm_metadata, proxy_server_request and svc never reach it; metadata is echoed in the JSON reply', async () => {
      const reply = await jsonReply(
        await send({ model: 'resp-native', input: 'hi', instructions: 'Be brief.', future_field: { keep: 1 }, temperature: 0.3, ...ownFields }),
      );
      assert.equal(reply.status, 200, reply.text);
      const seen = sentNative();
      for (const field of Object.keys(ownFields)) {
        assert.ok(!(field in seen.json), `${field} was forwarded`);
        assert.ok(!seen.raw.includes(`"${field}"`), `${field} in the upstream bytes`);
      }
      assert.ok(!seen.raw.includes('T-42'));
      assert.deepEqual(seen.json, { model: 'gpt-upstream-9', input: 'hi', instructions: 'Be brief.', future_field: { keep: 1 }, temperature: 0.3 });
      assert.deepEqual(reply.body['metadata'], ownFields.metadata, 'metadata echoed');
      assert.equal(reply.body['object'], 'response');
    });

    it('the stripped fields are cut from the caller’s bytes: every copy of them, every other byte as sent', async () => {
      const raw =
        '{"metadata":{"ticket":"T-1"},"model":"resp-native", "input":"a \\"metadata\\": {}","temperature":2.50E-1,"svc":{},"metadata":{"ticket":"T-2"}}';
      const reply = await jsonReply(await send(raw));
      assert.equal(reply.status, 200, reply.text);
      assert.equal(sentNative().raw, '{"model":"gpt-upstream-9", "input":"a \\"metadata\\": {}","temperature":2.50E-1}');
      assert.deepEqual(reply.body['metadata'], { ticket: 'T-2' }, 'the metadata JSON.parse kept is echoed');
    });

    it('the reply is the upstream’s bytes with metadata set in place (not re-serialised)', async () => {
      const upstreamReply =
        '{"id":"resp_up1","object":"response","status":"completed", "metadata" : {"upstream":true},"output":[],' +
        '"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5},"temperature":1.0}';
      env.upstream.script({ kind: 'raw', status: 200, body: upstreamReply });
      const res = await send({ model: 'resp-native', input: 'hi', metadata: { ticket: 'T-9' } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/json');
      assert.equal(
        await res.text(),
        '{"id":"resp_up1","object":"response","status":"completed", "metadata" : {"ticket":"T-9"},"output":[],' +
          '"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5},"temperature":1.0}',
      );
    });

    it('streamed: the same fields stripped, metadata echoed in the response.created and response.completed snapshots', async () => {
      const res = await send({ model: 'resp-native', input: 'hi', stream: true, ...ownFields });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      const frames = parseSseFrames(await res.text());
      assertResponsesFraming(frames);
      const seen = sentNative();
      for (const field of Object.keys(ownFields)) assert.ok(!(field in seen.json), `${field} was forwarded`);
      assert.equal(seen.json['stream'], true, 'stream is the caller’s, forwarded as sent');
      for (const type of ['response.created', 'response.in_progress', 'response.completed']) {
        const snapshot = frames.find((f) => f.data['type'] === type)?.data['response'] as Record<string, unknown>;
        assert.deepEqual(snapshot['metadata'], ownFields.metadata, `${type} echoes metadata`);
      }
    });

    it('translated (Anthropic): metadata echoed in the reply and the stream snapshots, none of the four sent', async () => {
      anthropic.script({ kind: 'json', body: textMessage('fine') }, { kind: 'sse', events: textEvents('fine') });
      const json = await jsonReply(await send({ model: 'resp-claude', input: 'hi', ...ownFields }));
      assert.equal(json.status, 200, json.text);
      assert.deepEqual(json.body['metadata'], ownFields.metadata);
      const res = await send({ model: 'resp-claude', input: 'hi', stream: true, ...ownFields });
      const frames = parseSseFrames(await res.text());
      assertResponsesFraming(frames);
      for (const type of ['response.created', 'response.completed']) {
        const snapshot = frames.find((f) => f.data['type'] === type)?.data['response'] as Record<string, unknown>;
        assert.deepEqual(snapshot['metadata'], ownFields.metadata, `${type} echoes metadata`);
      }
      assert.equal(anthropic.requests.length, 2);
      for (const seen of anthropic.requests) {
        for (const value of ['T-42', 'litellm', 'proxy_server_request', 'system_prompt', 'internal'])
          assert.ok(!seen.raw.includes(value), `${value} sent to Anthropic`);
        // Anthropic's own `metadata` (user_id) is a different thing; ours must not become it.
        assert.ok(!('metadata' in seen.body) || !JSON.stringify(seen.body['metadata']).includes('T-42'));
      }
    });
  });

  describe('svc.system_prompt (the curated prompt)', () => {
    for (const svc of [undefined, { system_prompt: 'off' }]) {
      it(`${svc ? 'off' : 'absent'}: nothing added, the caller’s instructions go as they are (native and translated)`, async () => {
        const body = { input: 'hi', instructions: 'Answer in French.', ...(svc ? { svc } : {}) };
        const reply = await jsonReply(await send({ model: 'resp-native', ...body }));
        assert.equal(reply.status, 200, reply.text);
        assert.equal(sentNative().json['instructions'], 'Answer in French.');
        assert.ok(!sentNative().raw.includes(DEFAULT_CURATED_PROMPT.slice(0, 30)));

        anthropic.script({ kind: 'json', body: textMessage('ok') });
        assert.equal((await jsonReply(await send({ model: 'resp-claude', ...body }))).status, 200);
        assert.equal(JSON.stringify(anthropic.requests[0]!.body['system']).includes('Answer in French.'), true);
        assert.ok(!anthropic.requests[0]!.raw.includes(DEFAULT_CURATED_PROMPT.slice(0, 30)), 'no curated prompt sent');
      });
    }

    it('agent_default on a native upstream: the curated prompt first, then the caller’s instructions, in `instructions`', async () => {
      const reply = await jsonReply(
        await send({ model: 'resp-native', input: 'hi', instructions: 'Answer in French.', svc: { system_prompt: 'agent_default' } }),
      );
      assert.equal(reply.status, 200, reply.text);
      const instructions = String(sentNative().json['instructions']);
      assert.ok(instructions.startsWith(DEFAULT_CURATED_PROMPT), instructions);
      assert.ok(instructions.endsWith('Answer in French.'), instructions);
      assert.ok(instructions.length > DEFAULT_CURATED_PROMPT.length + 'Answer in French.'.length, 'both, separated');
      assert.ok(!('svc' in sentNative().json));
    });

    it('agent_default without caller instructions: the curated prompt alone', async () => {
      await jsonReply(await send({ model: 'resp-native', input: 'hi', svc: { system_prompt: 'agent_default' } }));
      assert.equal(sentNative().json['instructions'], DEFAULT_CURATED_PROMPT);
    });

    it('agent_default translated to Anthropic: the curated prompt first, then the caller’s instructions, in `system`', async () => {
      anthropic.script({ kind: 'sse', events: textEvents('ok') });
      const res = await send({ model: 'resp-claude', input: 'hi', instructions: 'Answer in French.', stream: true, svc: { system_prompt: 'agent_default' } });
      assertResponsesFraming(parseSseFrames(await res.text()));
      const system = anthropic.requests[0]!.body['system'];
      const text = typeof system === 'string' ? system : (system as { text: string }[]).map((b) => b.text).join('\n');
      const curatedAt = text.indexOf(DEFAULT_CURATED_PROMPT);
      const callerAt = text.indexOf('Answer in French.');
      assert.ok(curatedAt >= 0, `curated prompt in system: ${text}`);
      assert.ok(callerAt > curatedAt, 'the caller’s instructions after it');
      const messages = anthropic.requests[0]!.body['messages'] as { content: unknown }[];
      assert.ok(!JSON.stringify(messages).includes(DEFAULT_CURATED_PROMPT.slice(0, 30)), 'not in the messages');
    });
  });
});

describe('POST /v1/responses: the operator’s curated prompt (responses.systemPrompt)', function () {
  this.timeout(60_000);
  const OPERATOR_PROMPT = 'You work for the Acme support desk. Never promise refunds.';
  let env: GatewayWithUpstream;
  let anthropic: FakeAnthropic;

  before(async function () {
    this.timeout(120_000);
    anthropic = await startFakeAnthropic();
    env = await startGatewayWithUpstream({ providers: PROVIDERS(anthropic.baseUrl), models: MODELS, config: { responses: { systemPrompt: OPERATOR_PROMPT } } });
  });
  after(async () => {
    await env?.close();
    await anthropic?.close();
  });

  it('replaces the built-in text on native and translated paths; off still adds nothing', async () => {
    const send = (body: unknown): Promise<Response> => post(`${env.gw.url}/v1/responses`, body, env.gw.auth('member'));
    await jsonReply(await send({ model: 'resp-native', input: 'hi', instructions: 'Be kind.', svc: { system_prompt: 'agent_default' } }));
    const instructions = String(env.upstream.requests[0]!.json()['instructions']);
    assert.ok(instructions.startsWith(OPERATOR_PROMPT), instructions);
    assert.ok(instructions.endsWith('Be kind.'));
    assert.ok(!instructions.includes(DEFAULT_CURATED_PROMPT.slice(0, 30)), 'not the built-in text');

    anthropic.script({ kind: 'json', body: textMessage('ok') });
    await jsonReply(await send({ model: 'resp-claude', input: 'hi', instructions: 'Be kind.', svc: { system_prompt: 'agent_default' } }));
    const system = JSON.stringify(anthropic.requests[0]!.body['system']);
    assert.ok(system.indexOf(OPERATOR_PROMPT) >= 0 && system.indexOf('Be kind.') > system.indexOf(OPERATOR_PROMPT), system);

    await jsonReply(await send({ model: 'resp-native', input: 'hi', instructions: 'Be kind.', svc: { system_prompt: 'off' } }));
    assert.equal(env.upstream.requests[1]!.json()['instructions'], 'Be kind.');
  });
});
