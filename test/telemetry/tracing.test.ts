// OpenTelemetry tracing end to end: a real gateway exporting over OTLP/HTTP (JSON) to a receiver the
// test runs, a fake upstream provider and a fake run upstream. Span names, parent/child structure
// (request → model call; run → step → model call / tool call), GenAI attributes and token usage, the
// W3C traceparent taken from the caller and given to the upstream, no prompt, completion or key text in
// any export, and the access log's trace ids matching the exported spans; a run triggered over HTTP
// executing in its trigger's trace, on both deployments (inline queue in the gateway; BullMQ with a
// worker process of its own). With telemetry off: no SDK loaded, no traceparent to the upstream, no
// trace context with a run's job, access-log lines with the request id and no trace id.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { Logger } from 'winston';
import { createLogger } from '../../src/log/logger';
import type { EnqueueOptions } from '../../src/queue/port';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../fixtures/otlp-receiver';
import { startFakeOpenAiUpstream, type FakeOpenAiUpstream } from '../fixtures/upstreams/openai-upstream';
import { startRunUpstream, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { BACKENDS, openBackend, type BackendEnv } from '../helpers/backends';
import { startTestGateway, testConfig, TEST_KEYS, type TestGateway } from '../helpers/gateway';
import { tempDir } from '../helpers/process';
import { killAll, startProcess, writeProcessConfig } from '../queue/processes';
import { AGENT, runConfig, triggerRun, waitFor, waitForStatus } from '../runs/helpers';

type Json = Record<string, unknown>;

const PROMPT = 'PROMPT-MARKER-7f3a quarterly numbers for the board';
const STEP_PROMPT = 'STEP-PROMPT-MARKER file the report';
const TOOL_CONTENT = 'TOOL-CONTENT-MARKER # Q3';
const TOOL_AGENT = '5a1e0000-0000-4000-8000-0000000000e1';
const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

interface CapturedLog {
  logger: Logger;
  lines: Json[];
}

function captureLog(): CapturedLog {
  const stream = new PassThrough();
  const lines: Json[] = [];
  let pending = '';
  stream.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    let at: number;
    while ((at = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, at).trim();
      pending = pending.slice(at + 1);
      if (line !== '') lines.push(JSON.parse(line) as Json);
    }
  });
  return { logger: createLogger({ level: 'info', stream }), lines };
}

async function accessLine(log: CapturedLog, requestId: string): Promise<Json> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const line = log.lines.find((l) => l['message'] === 'request' && l['requestId'] === requestId);
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no access-log line for ${requestId}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function gatewayConfig(runUpstream: RunUpstream, upstream: FakeOpenAiUpstream, workspaceDir: string, telemetry: Json | null): Json {
  const base = runConfig(runUpstream);
  return {
    ...base,
    providers: {
      ...(base['providers'] as Json),
      up: { type: 'openai', baseUrl: upstream.baseUrl, apiKey: 'sk-upstream-key', retries: { max: 0 } },
      'up-native': { type: 'openai', baseUrl: upstream.baseUrl, apiKey: 'sk-upstream-key', retries: { max: 0 }, responses: 'native' },
    },
    models: [
      ...(base['models'] as Json[]),
      { id: 'gpt-test', provider: 'up' },
      { id: 'alias', provider: 'up', upstream: 'gpt-real-2024' },
      { id: 'gpt-native', provider: 'up-native' },
    ],
    agents: [
      ...(base['agents'] as Json[]),
      {
        id: TOOL_AGENT,
        organization: 'acme',
        createdBy: 'u-admin',
        model: 'fake',
        description: 'uses tools',
        name: 'Filer',
        tools: [{ type: 'svc_file_write' }],
        steps: [{ name: 'File', prompt: STEP_PROMPT, objective: 'The report is filed.' }],
        timeoutSeconds: 30,
      },
    ],
    tools: { workspaceDir },
    plugins: { auth: { enabled: true } },
    logging: { level: 'info', accessLog: true },
    ...(telemetry ? { telemetry } : {}),
  };
}

async function post(gw: TestGateway, route: string, body: Json, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}${route}`, {
    method: 'POST',
    headers: { ...gw.auth('member'), 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** Whether the tracing SDK or the exporter is loaded (@opentelemetry/api alone comes with other dependencies). */
const loadedOpenTelemetry = (): boolean =>
  Object.keys(require.cache).some((file) => /[\\/]@opentelemetry[\\/](sdk-trace|sdk-trace-base|exporter-trace-otlp-http|otlp-exporter-base)[\\/]/.test(file));

describe('tracing (OpenTelemetry over OTLP/HTTP)', function () {
  this.timeout(60_000);
  let upstream: FakeOpenAiUpstream;
  let runUpstream: RunUpstream;
  let workspaceDir: string;

  before(async () => {
    upstream = await startFakeOpenAiUpstream();
    runUpstream = await startRunUpstream();
    workspaceDir = await mkdtemp(path.join(tmpdir(), 'agw-otel-'));
  });
  after(async () => {
    await upstream?.close();
    await runUpstream?.close();
    await rm(workspaceDir, { recursive: true, force: true });
  });

  // First: once a traced gateway has loaded the SDK, whether an untraced one loads it cannot be seen.
  describe('telemetry off (the default)', () => {
    let gw: TestGateway;
    let log: CapturedLog;

    before(async function () {
      this.timeout(120_000);
      log = captureLog();
      gw = await startTestGateway({ config: gatewayConfig(runUpstream, upstream, workspaceDir, null), logger: log.logger });
    });
    after(async () => {
      await gw?.close();
    });

    it('starts no SDK, sends no traceparent upstream, and still writes the request id in every access-log line', async () => {
      assert.equal(gw.gateway.services.tracing, null);
      const before = upstream.requests.length;
      const res = await post(
        gw,
        '/v1/chat/completions',
        { model: 'gpt-test', messages: [{ role: 'user', content: PROMPT }] },
        { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      );
      assert.equal(res.status, 200);
      await res.text();
      const requestId = res.headers.get('x-request-id')!;
      const sent = upstream.requests.slice(before);
      assert.equal(sent.length, 1);
      assert.equal(sent[0]!.headers['traceparent'], undefined);
      const line = await accessLine(log, requestId);
      assert.equal(line['operationId'], 'createChatCompletion');
      assert.equal('traceId' in line, false);
      // The models list too (an operation without a model call).
      const list = await fetch(`${gw.url}/v1/models`, { headers: gw.auth('member') });
      await list.text();
      assert.equal((await accessLine(log, list.headers.get('x-request-id')!))['status'], 200);
      assert.equal(loadedOpenTelemetry(), false, 'no @opentelemetry module is loaded while tracing is off');
    });

    it('a run triggered with a traceparent: its job carries no trace context', async () => {
      const queue = gw.gateway.services.runEngine.queue;
      const enqueued: EnqueueOptions[] = [];
      const enqueue = queue.enqueue.bind(queue);
      queue.enqueue = (runId, options) => {
        enqueued.push(options ?? {});
        return enqueue(runId, options);
      };
      try {
        const res = await fetch(`${gw.url}/v1/agents/runs`, {
          method: 'POST',
          headers: { ...gw.auth('admin'), 'content-type': 'application/json', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
          body: JSON.stringify({ agentId: AGENT, inputs: [{ name: 'Topic', value: 'tides' }] }),
        });
        assert.equal(res.status, 202, await res.clone().text());
        const { runId } = (await res.json()) as { runId: string };
        assert.equal((await waitForStatus(gw.store, runId, 'terminal', 20_000)).status, 'success');
      } finally {
        queue.enqueue = enqueue;
      }
      assert.equal(enqueued.length, 1);
      assert.equal('trace' in enqueued[0]!, false);
    });

    it('an otlp block whose endpoint interpolated to "" leaves tracing off', () => {
      const config = testConfig({ telemetry: { otlp: { endpoint: '${OTEL_TRACES_URL:-}', headers: { authorization: 'Bearer x' } } } }, {});
      assert.equal(config.telemetry.otlp, undefined);
      const on = testConfig({ telemetry: { otlp: { endpoint: '${OTEL_TRACES_URL:-}' } } }, { OTEL_TRACES_URL: 'http://collector:4318/v1/traces' });
      assert.deepEqual(on.telemetry.otlp, {
        endpoint: 'http://collector:4318/v1/traces',
        headers: {},
        serviceName: 'agent-gateway',
        exportIntervalMs: 5000,
        timeoutMs: 10000,
      });
      assert.throws(() => testConfig({ telemetry: { otlp: { endpoint: 'collector:4318' } } }), /telemetry\.otlp\.endpoint/);
    });
  });

  describe('telemetry on', () => {
    let gw: TestGateway;
    let log: CapturedLog;
    let receiver: OtlpReceiver;

    before(async function () {
      this.timeout(120_000);
      receiver = await startOtlpReceiver();
      log = captureLog();
      const telemetry = { otlp: { endpoint: receiver.url, headers: { authorization: 'Bearer otlp-token-1' }, serviceName: 'agw-test', exportIntervalMs: 50 } };
      gw = await startTestGateway({ config: gatewayConfig(runUpstream, upstream, workspaceDir, telemetry), logger: log.logger });
    });
    after(async () => {
      await gw?.close();
      await receiver?.close();
    });

    /** The request's server span (by its request id) and the model call span under it. */
    async function requestAndModelSpans(res: Response): Promise<{ server: ReceivedSpan; model: ReceivedSpan; requestId: string }> {
      const requestId = res.headers.get('x-request-id')!;
      const server = await receiver.waitFor((s) => s.attributes['agw.request_id'] === requestId);
      const model = await receiver.waitFor((s) => s.parentSpanId === server.spanId && s.attributes['gen_ai.operation.name'] !== undefined);
      return { server, model, requestId };
    }

    it('loads the SDK and exports JSON with the configured headers and service name', async () => {
      assert.equal(loadedOpenTelemetry(), true);
      const res = await fetch(`${gw.url}/v1/models`, { headers: gw.auth('member') });
      await res.text();
      const requestId = res.headers.get('x-request-id')!;
      const span = await receiver.waitFor((s) => s.attributes['agw.request_id'] === requestId);
      assert.equal(span.name, 'GET /v1/models');
      assert.equal(span.kind, 2);
      assert.equal(span.parentSpanId, null);
      assert.equal(span.attributes['http.route'], '/v1/models');
      assert.equal(span.attributes['http.response.status_code'], 200);
      assert.equal(span.serviceName, 'agw-test');
      const exported = receiver.exports[0]!;
      assert.match(exported.contentType ?? '', /^application\/json/);
      assert.equal(exported.headers['authorization'], 'Bearer otlp-token-1');
      assert.equal((await accessLine(log, requestId))['traceId'], span.traceId);
    });

    it('a Responses span names the response id its caller saw: the gateway’s when translated, none when a native reply is relayed unstored', async () => {
      const translated = await post(gw, '/v1/responses', { model: 'gpt-test', input: 'hi', store: false });
      assert.equal(translated.status, 200, await translated.clone().text());
      const translatedId = ((await translated.json()) as { id: string }).id;
      const translatedSpan = await receiver.waitFor((s) => s.attributes['agw.request_id'] === translated.headers.get('x-request-id'));
      assert.equal(translatedSpan.attributes['agw.response.id'], translatedId);
      assert.equal(translatedSpan.attributes['agw.response.stored'], false);

      const relayed = await post(gw, '/v1/responses', { model: 'gpt-native', input: 'hi', store: false });
      assert.equal(relayed.status, 200, await relayed.clone().text());
      const relayedId = ((await relayed.json()) as { id: string }).id;
      const relayedSpan = await receiver.waitFor((s) => s.attributes['agw.request_id'] === relayed.headers.get('x-request-id'));
      // The caller sees the upstream's id; an id minted by the gateway would name a response nobody saw.
      assert.match(relayedId, /^resp_/);
      assert.equal(relayedSpan.attributes['agw.response.id'], undefined);
      assert.equal(relayedSpan.attributes['agw.response.stored'], false);
    });

    it('a translated call: the caller’s trace continues, request span → model span, GenAI attributes, traceparent upstream', async () => {
      const before = upstream.requests.length;
      const res = await post(
        gw,
        '/v1/messages',
        { model: 'alias', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }] },
        { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      );
      assert.equal(res.status, 200, await res.clone().text());
      await res.text();
      const { server, model, requestId } = await requestAndModelSpans(res);
      assert.equal(server.name, 'POST /v1/messages');
      assert.equal(server.traceId, CALLER_TRACE);
      assert.equal(server.parentSpanId, CALLER_SPAN);
      assert.equal(model.name, 'chat gpt-real-2024');
      assert.equal(model.kind, 3);
      assert.equal(model.traceId, CALLER_TRACE);
      assert.deepEqual(
        {
          op: model.attributes['gen_ai.operation.name'],
          provider: model.attributes['gen_ai.provider.name'],
          system: model.attributes['gen_ai.system'],
          request: model.attributes['gen_ai.request.model'],
          response: model.attributes['gen_ai.response.model'],
          input: model.attributes['gen_ai.usage.input_tokens'],
          output: model.attributes['gen_ai.usage.output_tokens'],
          finish: model.attributes['gen_ai.response.finish_reasons'],
          model: model.attributes['agw.model'],
        },
        {
          op: 'chat',
          provider: 'openai',
          system: 'openai',
          request: 'gpt-real-2024',
          response: 'gpt-real-2024',
          input: 7,
          output: 3,
          finish: ['stop'],
          model: 'alias',
        },
      );
      const sent = upstream.requests.slice(before);
      assert.equal(sent.length, 1);
      assert.equal(sent[0]!.headers['traceparent'], `00-${CALLER_TRACE}-${model.spanId}-01`);
      const line = await accessLine(log, requestId);
      assert.equal(line['traceId'], CALLER_TRACE);
    });

    it('a streamed translated call: the upstream request carries the model span; finish reason and usage recorded', async () => {
      const before = upstream.requests.length;
      const res = await post(gw, '/v1/messages', { model: 'gpt-test', max_tokens: 64, stream: true, messages: [{ role: 'user', content: PROMPT }] });
      assert.equal(res.status, 200);
      await res.text();
      const { server, model, requestId } = await requestAndModelSpans(res);
      assert.equal(server.parentSpanId, null);
      assert.equal(model.name, 'chat gpt-test');
      assert.equal(model.attributes['gen_ai.usage.input_tokens'], 5);
      assert.equal(model.attributes['gen_ai.usage.output_tokens'], 2);
      assert.deepEqual(model.attributes['gen_ai.response.finish_reasons'], ['stop']);
      assert.equal(upstream.requests.slice(before)[0]!.headers['traceparent'], `00-${server.traceId}-${model.spanId}-01`);
      assert.equal((await accessLine(log, requestId))['traceId'], server.traceId);
    });

    it('pass-through chat completions (streamed) and legacy completions (text_completion)', async () => {
      const before = upstream.requests.length;
      const chat = await post(gw, '/v1/chat/completions', {
        model: 'gpt-test',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: PROMPT }],
      });
      assert.equal(chat.status, 200);
      await chat.text();
      const forwarded = await requestAndModelSpans(chat);
      assert.equal(forwarded.model.name, 'chat gpt-test');
      assert.equal(forwarded.model.attributes['gen_ai.usage.input_tokens'], 5);
      assert.equal(upstream.requests[before]!.headers['traceparent'], `00-${forwarded.server.traceId}-${forwarded.model.spanId}-01`);

      const completion = await post(gw, '/v1/completions', { model: 'gpt-test', prompt: PROMPT });
      assert.equal(completion.status, 200);
      await completion.text();
      const legacy = await requestAndModelSpans(completion);
      assert.equal(legacy.server.name, 'POST /v1/completions');
      assert.equal(legacy.model.name, 'text_completion gpt-test');
      assert.equal(legacy.model.attributes['gen_ai.operation.name'], 'text_completion');
      assert.equal(legacy.model.attributes['gen_ai.usage.input_tokens'], 2);
    });

    it('a failed upstream call: the model span and the request span carry error.type and an error status', async () => {
      upstream.script({ kind: 'json', status: 500, body: { error: { message: 'upstream exploded', type: 'server_error' } } });
      const res = await post(gw, '/v1/messages', { model: 'gpt-test', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }] });
      assert.ok(res.status >= 500, String(res.status));
      await res.text();
      const { server, model } = await requestAndModelSpans(res);
      assert.equal(model.statusCode, 2);
      assert.equal(model.attributes['error.type'], 'upstream_error');
      assert.equal(server.statusCode, 2);
      assert.equal(server.attributes['error.type'], 'upstream_error');
      assert.equal(server.attributes['http.response.status_code'], res.status);
    });

    it('a run: invoke_agent → run_step → model calls (turns and judge) and execute_tool, each upstream call carrying its model span', async () => {
      runUpstream.clear();
      runUpstream.calls.length = 0;
      runUpstream.script((body) => {
        const messages = (body['messages'] as { role: string }[]) ?? [];
        if (!messages.some((m) => m.role === 'tool')) {
          return {
            toolCalls: [{ id: 'w1', name: 'svc_file_write', arguments: JSON.stringify({ path: 'report.md', content: TOOL_CONTENT }) }],
            usage: { prompt: 11, completion: 4 },
          };
        }
        return { reply: 'Filed.' };
      });
      const run = await triggerRun(gw, TOOL_AGENT, []);
      const done = await waitForStatus(gw.store, run.id, 'terminal', 20_000);
      assert.equal(done.status, 'success', JSON.stringify(done));

      const root = await receiver.waitFor((s) => s.attributes['agw.run.id'] === run.id && s.name.startsWith('invoke_agent'));
      assert.equal(root.name, 'invoke_agent Filer');
      assert.equal(root.parentSpanId, null);
      assert.equal(root.attributes['gen_ai.operation.name'], 'invoke_agent');
      assert.equal(root.attributes['gen_ai.agent.id'], TOOL_AGENT);
      assert.equal(root.attributes['gen_ai.conversation.id'], run.conversationId);
      const step = await receiver.waitFor((s) => s.parentSpanId === root.spanId);
      assert.equal(step.name, 'run_step 1');
      assert.equal(step.attributes['agw.run.step.verdict'], 'pass');
      const tool = await receiver.waitFor((s) => s.parentSpanId === step.spanId && s.name.startsWith('execute_tool'));
      assert.equal(tool.name, 'execute_tool svc_file_write');
      assert.equal(tool.attributes['gen_ai.tool.name'], 'svc_file_write');
      assert.equal(tool.attributes['gen_ai.tool.call.id'], 'w1');
      assert.equal(tool.statusCode, 0);
      // Two turns (the tool call, then the answer) and the judge, all children of the step.
      const deadline = Date.now() + 5000;
      let models: ReceivedSpan[] = [];
      while (models.length < 3 && Date.now() < deadline) {
        models = receiver.spans.filter((s) => s.parentSpanId === step.spanId && s.name === 'chat fake');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(models.length, 3, receiver.spans.map((s) => s.name).join(', '));
      assert.equal(models.filter((s) => s.attributes['agw.model_call.purpose'] === 'judge').length, 1);
      assert.ok(models.some((s) => s.attributes['gen_ai.usage.input_tokens'] === 11 && s.attributes['gen_ai.usage.output_tokens'] === 4));
      assert.ok(models.some((s) => (s.attributes['gen_ai.response.finish_reasons'] as string[] | undefined)?.[0] === 'tool_calls'));
      const sentFrom = runUpstream.calls.map((call) => call.traceparent);
      assert.equal(sentFrom.length, 3);
      assert.deepEqual(new Set(sentFrom), new Set(models.map((s) => `00-${root.traceId}-${s.spanId}-01`)));
    });

    it('no prompt, completion, tool content or key in any export', async () => {
      assert.ok(receiver.exports.length > 0);
      for (const { body } of receiver.exports) {
        for (const secret of [
          PROMPT,
          STEP_PROMPT,
          TOOL_CONTENT,
          'Hello from upstream',
          'Filed.',
          'sk-upstream-key',
          'sk-test',
          TEST_KEYS.member,
          'otlp-token-1',
        ]) {
          assert.equal(body.includes(secret), false, `an export contains ${secret}`);
        }
      }
    });
  });

  for (const backend of BACKENDS) {
    describe(`a run triggered over HTTP executes in the request's trace (${backend})`, () => {
      let gw: TestGateway;
      let receiver: OtlpReceiver;
      let deployment: BackendEnv;

      before(async function () {
        this.timeout(120_000);
        runUpstream.script(null);
        runUpstream.clear();
        receiver = await startOtlpReceiver();
        deployment = await openBackend(backend, 'otel');
        const telemetry = { otlp: { endpoint: receiver.url, serviceName: 'agw-test', exportIntervalMs: 50 } };
        const config = { ...gatewayConfig(runUpstream, upstream, workspaceDir, telemetry), ...deployment.config };
        gw = await startTestGateway({ config, ...(deployment.pg ? { store: deployment.pg.store } : {}) });
        // BullMQ: the run executes in a worker process of its own; the trace context reaches it only through the job in Redis.
        if (backend === 'postgres/bullmq') await startProcess('worker', writeProcessConfig(path.join(tempDir('agw-otel-'), 'gateway.yaml'), config));
      });
      after(async function () {
        this.timeout(60_000);
        await killAll();
        await gw?.close();
        await receiver?.close();
        await deployment?.cleanup();
      });

      it('the run’s span is a child of the request’s span (the caller’s trace); its steps and model calls are in that trace', async () => {
        const before = runUpstream.calls.length;
        const res = await post(
          gw,
          '/v1/agents/runs',
          { agentId: AGENT, inputs: [{ name: 'Topic', value: 'tides' }] },
          { ...gw.auth('admin'), traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
        );
        assert.equal(res.status, 202, await res.clone().text());
        const { runId } = (await res.json()) as { runId: string };
        const server = await receiver.waitFor((s) => s.attributes['agw.request_id'] === res.headers.get('x-request-id'));
        assert.equal(server.name, 'POST /v1/agents/runs');
        assert.equal(server.traceId, CALLER_TRACE);
        assert.equal(server.parentSpanId, CALLER_SPAN);
        assert.equal((await waitForStatus(gw.store, runId, 'terminal', 30_000)).status, 'success');

        const root = await receiver.waitFor((s) => s.attributes['agw.run.id'] === runId && s.name.startsWith('invoke_agent'), 10_000);
        assert.equal(root.name, 'invoke_agent Writer');
        assert.equal(root.traceId, CALLER_TRACE);
        assert.equal(root.parentSpanId, server.spanId);
        assert.equal(root.attributes['agw.run.trigger'], 'api');
        // Two steps: Draft (a turn and its judge) and Summary (a turn): three model calls, all in the trace.
        const steps = await waitFor('the run’s two step spans', async () => {
          const found = receiver.spans.filter((s) => s.parentSpanId === root.spanId && s.name.startsWith('run_step'));
          return found.length === 2 ? found : null;
        });
        assert.deepEqual(
          steps.map((s) => s.traceId),
          [CALLER_TRACE, CALLER_TRACE],
        );
        const stepIds = new Set(steps.map((s) => s.spanId));
        const models = await waitFor('the run’s three model call spans', async () => {
          const found = receiver.spans.filter((s) => s.parentSpanId !== null && stepIds.has(s.parentSpanId) && s.name === 'chat fake');
          return found.length === 3 ? found : null;
        });
        assert.deepEqual(new Set(models.map((s) => s.traceId)), new Set([CALLER_TRACE]));
        const sent = runUpstream.calls.slice(before).map((call) => call.traceparent);
        assert.deepEqual(new Set(sent), new Set(models.map((s) => `00-${CALLER_TRACE}-${s.spanId}-01`)));
      });

      it('a restart (POST /v1/runs/{id}/restart): the new run’s span is a child of the restart request’s span', async () => {
        // The source run was started without a request (no trace context): its execution is a trace of its own.
        const source = await triggerRun(gw, AGENT, [{ name: 'Topic', value: 'tides' }]);
        assert.equal((await waitForStatus(gw.store, source.id, 'terminal', 30_000)).status, 'success');
        const first = await receiver.waitFor((s) => s.attributes['agw.run.id'] === source.id && s.name.startsWith('invoke_agent'), 10_000);
        assert.equal(first.parentSpanId, null);
        const trace = '5c0a6e1b2f3d4e5f60718293a4b5c6d7';
        const res = await post(gw, `/v1/runs/${source.id}/restart`, {}, { ...gw.auth('admin'), traceparent: `00-${trace}-1a2b3c4d5e6f7081-01` });
        assert.equal(res.status, 202, await res.clone().text());
        const { runId } = (await res.json()) as { runId: string };
        const server = await receiver.waitFor((s) => s.attributes['agw.request_id'] === res.headers.get('x-request-id'));
        const root = await receiver.waitFor((s) => s.attributes['agw.run.id'] === runId && s.name.startsWith('invoke_agent'), 20_000);
        assert.equal(root.traceId, trace);
        assert.equal(root.parentSpanId, server.spanId);
        assert.equal(root.attributes['agw.run.trigger'], 'restart');
      });

      it('an agent invoked as a model (POST /v1/responses, model agent/<id>): its run’s span is a child of the request’s span', async () => {
        const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
        const res = await post(
          gw,
          '/v1/responses',
          { model: `agent/${AGENT}`, input: 'tides' },
          { ...gw.auth('admin'), traceparent: `00-${trace}-00f067aa0ba902b7-01` },
        );
        assert.equal(res.status, 200, await res.clone().text());
        await res.text();
        const server = await receiver.waitFor((s) => s.attributes['agw.request_id'] === res.headers.get('x-request-id'));
        assert.equal(server.traceId, trace);
        const root = await receiver.waitFor((s) => s.name.startsWith('invoke_agent') && s.parentSpanId === server.spanId, 20_000);
        assert.equal(root.traceId, trace);
        assert.equal(root.attributes['agw.run.trigger'], 'responses');
        const step = await receiver.waitFor((s) => s.parentSpanId === root.spanId && s.name === 'run_step 1');
        assert.equal(step.traceId, trace);
      });
    });
  }
});
