// The tool loop on its own (src/tools/loop.ts), with tools made for the test: each call bounded in
// time and output, independent calls run at once (at most tools.maxConcurrentCalls), a tool that
// throws is a failed result the model sees, an aborted response stops the loop, and a journal's
// recorded turn and results are reused (a call with a recorded result is never run again).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ModelRequest, ModelResponse, StreamPart, ToolCallPart } from '../../src/canonical/model';
import { createLogger } from '../../src/log/logger';
import { createMetrics } from '../../src/log/metrics';
import type { Store } from '../../src/store/port';
import type { AuditRecord } from '../../src/store/types';
import { boundOutput, ToolLoop, type ModelTurn, type ToolCallResult, type ToolJournal, type ToolLoopScope } from '../../src/tools/loop';
import { ToolRegistry } from '../../src/tools/registry';
import { ToolFailure, type HostedTool, type HostedToolFactory } from '../../src/tools/types';
import { createWebAccess } from '../../src/tools/web-access';
import { Workspaces } from '../../src/tools/workspace';
import { testConfig } from '../helpers/config';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A model that calls `calls` on its first turn, then answers with the tool results it was given. */
function scriptedModel(calls: { name: string; arguments: string }[]): { turn: ModelTurn; requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  const turn: ModelTurn = async function* (request) {
    requests.push(request);
    yield { type: 'start', id: `m${requests.length}`, model: 'test', created: 1 };
    const last = request.messages.at(-1);
    if (last?.role !== 'tool') {
      for (const [i, call] of calls.entries()) {
        yield { type: 'tool-call-start', id: `t${i}`, callId: `call_${i}`, name: call.name };
        yield { type: 'tool-call-delta', id: `t${i}`, delta: call.arguments };
        yield { type: 'tool-call-end', id: `t${i}` };
      }
      yield { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 3, outputTokens: 1 } };
      return;
    }
    const text = last.content.map((r) => (typeof r.output === 'string' ? r.output : '[parts]')).join(' | ');
    yield { type: 'text-start', id: 'x' };
    yield { type: 'text-delta', id: 'x', delta: text };
    yield { type: 'text-end', id: 'x' };
    yield { type: 'finish', finishReason: 'stop', usage: { inputTokens: 5, outputTokens: 2 } };
  };
  return { turn, requests };
}

describe('tool loop (unit)', function () {
  this.timeout(20_000);
  let dir: string;
  let loop: ToolLoop;
  const audit: AuditRecord[] = [];
  let running = 0;
  let peak = 0;
  const ran: string[] = [];

  const tools: HostedTool[] = [
    {
      type: 'svc_test_slow',
      description: 'sleeps',
      parameters: { type: 'object', properties: { ms: { type: 'integer' } } },
      limits: { timeoutMs: 200 },
      async execute(args) {
        // Ignores its signal on purpose: the loop must return on time all the same.
        await sleep(Number(args['ms']));
        return { output: `slept ${String(args['ms'])}` };
      },
    },
    {
      type: 'svc_test_wait',
      description: 'waits, counting how many wait at once',
      parameters: { type: 'object', properties: { ms: { type: 'integer' } } },
      async execute(args) {
        running += 1;
        peak = Math.max(peak, running);
        try {
          await sleep(Number(args['ms']));
          return { output: `waited ${String(args['ms'])}` };
        } finally {
          running -= 1;
        }
      },
    },
    {
      type: 'svc_test_big',
      description: 'prints a lot',
      parameters: { type: 'object', properties: {} },
      limits: { maxOutputBytes: 300 },
      execute: () => Promise.resolve({ output: 'é'.repeat(1000) }),
    },
    {
      type: 'svc_test_broken',
      description: 'fails',
      parameters: { type: 'object', properties: {} },
      execute: () => Promise.reject(new Error('/secret/path/internal failure')),
    },
    {
      type: 'svc_test_refuses',
      description: 'refuses',
      parameters: { type: 'object', properties: {} },
      execute: () => Promise.reject(new ToolFailure('Nothing to see here.')),
    },
    {
      type: 'svc_test_count',
      description: 'counts runs',
      parameters: { type: 'object', properties: { n: { type: 'integer' } } },
      execute(args) {
        ran.push(`count:${String(args['n'])}`);
        return Promise.resolve({ output: `counted ${String(args['n'])}` });
      },
    },
  ];

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'agw-loop-'));
    const config = testConfig({ tools: { workspaceDir: dir, maxConcurrentCalls: 2, maxRounds: 4 } });
    const logger = createLogger({ level: 'error', silent: true });
    const store = { audit: { insertMany: (records: readonly AuditRecord[]) => (audit.push(...records), Promise.resolve()) } } as unknown as Store;
    const workspaces = new Workspaces(dir);
    const web = createWebAccess([]);
    const factory: HostedToolFactory = () => ({ tools });
    const deps = { config, store, logger, now: () => new Date(), workspaces, fetch: web.fetch, egress: { proxyFor: () => Promise.resolve(null) } };
    const registry = await ToolRegistry.create(deps, [factory]);
    loop = new ToolLoop({ registry, mcp: null, workspaces, config: config.tools, store, metrics: createMetrics(), logger });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    ran.length = 0;
    audit.length = 0;
    peak = 0;
  });

  const scope = (extra: Partial<ToolLoopScope> = {}): ToolLoopScope => ({
    orgId: 'acme',
    userId: 'u',
    conversationId: 'conv1',
    requestId: 'req1',
    signal: new AbortController().signal,
    redact: null,
    ...extra,
  });

  async function runLoop(calls: { name: string; arguments: string }[], s: ToolLoopScope = scope()): Promise<{ parts: StreamPart[]; requests: ModelRequest[] }> {
    const model = scriptedModel(calls);
    const request: ModelRequest = {
      model: 'test',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }],
      tools: tools.map((t) => ({ kind: 'hosted' as const, type: t.type, config: {} })),
      options: {},
    };
    const plan = await loop.prepare(request, s);
    const parts: StreamPart[] = [];
    for await (const part of loop.run(plan, model.turn, s)) parts.push(part);
    return { parts, requests: model.requests };
  }

  const results = (parts: StreamPart[]): Extract<StreamPart, { type: 'server-tool-result' }>[] =>
    parts.filter((p): p is Extract<StreamPart, { type: 'server-tool-result' }> => p.type === 'server-tool-result');

  it('stops a call at its time limit (the tool that ignores it too) and tells the model', async () => {
    const started = Date.now();
    const { parts } = await runLoop([{ name: 'svc_test_slow', arguments: '{"ms":6000}' }]);
    assert.ok(Date.now() - started < 4000, 'returned at the limit, not after the tool');
    const [result] = results(parts);
    assert.equal(result?.status, 'failed');
    assert.match(String(result?.error), /longer than 200 ms/);
    assert.equal(audit[0]?.status, 500);
  });

  it('cuts output at the limit on a character boundary, saying so', async () => {
    const { parts } = await runLoop([{ name: 'svc_test_big', arguments: '{}' }]);
    const [result] = results(parts);
    assert.equal(result?.status, 'completed');
    assert.match(result!.output, /\[output cut: 2000 bytes, the limit is 300\]$/);
    assert.ok(!result!.output.includes('\uFFFD'));
    assert.equal(boundOutput('short', 10), 'short');
  });

  it('an unexpected error is a failed result naming its kind, not its internals; a ToolFailure its message', async () => {
    const { parts, requests } = await runLoop([
      { name: 'svc_test_broken', arguments: '{}' },
      { name: 'svc_test_refuses', arguments: '{}' },
      { name: 'svc_test_count', arguments: 'not json' },
    ]);
    const [broken, refuses, badArgs] = results(parts).sort((a, b) => a.callId.localeCompare(b.callId));
    assert.equal(broken?.status, 'failed');
    assert.doesNotMatch(String(broken?.error), /secret/);
    assert.match(String(broken?.error), /svc_test_broken failed \(Error\)/);
    assert.equal(refuses?.error, 'Nothing to see here.');
    assert.match(String(badArgs?.error), /not a JSON object/);
    // The model's second turn carried the three results, errors marked as errors.
    const toolTurn = requests[1]!.messages.at(-1)!;
    assert.equal(toolTurn.role, 'tool');
    assert.ok(toolTurn.role === 'tool' && toolTurn.content.every((r) => r.isError === true));
    assert.equal(parts.filter((p) => p.type === 'finish').length, 1);
    assert.equal(parts.filter((p) => p.type === 'start').length, 1);
  });

  it('runs independent calls at once, at most maxConcurrentCalls, and sums the turns usage', async () => {
    const { parts } = await runLoop([
      { name: 'svc_test_wait', arguments: '{"ms":120}' },
      { name: 'svc_test_wait', arguments: '{"ms":120}' },
      { name: 'svc_test_wait', arguments: '{"ms":120}' },
    ]);
    assert.equal(peak, 2, 'two at once, never three');
    assert.equal(results(parts).length, 3);
    const finish = parts.at(-1)!;
    assert.ok(finish.type === 'finish');
    assert.deepEqual(finish.usage, { inputTokens: 8, outputTokens: 3 });
  });

  it('an aborted response stops the loop instead of becoming a tool failure', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('client gone')), 50);
    await assert.rejects(runLoop([{ name: 'svc_test_slow', arguments: '{"ms":150}' }], scope({ signal: controller.signal })), /client gone/);
  });

  it('reuses a journal: the recorded turn is not asked again and a recorded result is not run again', async () => {
    const recordedCalls: ToolCallPart[] = [
      { type: 'tool-call', id: 'call_0', name: 'svc_test_count', arguments: '{"n":1}' },
      { type: 'tool-call', id: 'call_1', name: 'svc_test_count', arguments: '{"n":2}' },
    ];
    const recorded: { round: number; call: string; result: ToolCallResult }[] = [];
    const journal: ToolJournal = {
      recall: (round) => {
        if (round !== 0) return Promise.resolve(null);
        const response: ModelResponse = {
          id: 'r',
          model: 'test',
          created: 0,
          content: recordedCalls,
          finishReason: 'tool_calls',
          usage: { inputTokens: 0, outputTokens: 0 },
        };
        // The crash came after the first call's result was recorded, before the second's.
        return Promise.resolve({ response, results: new Map([['call_0', { status: 'completed', output: 'counted 1 (earlier)' } as ToolCallResult]]) });
      },
      recordTurn: () => Promise.reject(new Error('a recalled turn is not recorded again')),
      recordResult: (round, call, result) => (recorded.push({ round, call: call.id, result }), Promise.resolve()),
    };
    const { parts, requests } = await runLoop([], scope({ journal }));
    assert.deepEqual(ran, ['count:2'], 'only the call without a recorded result ran');
    assert.deepEqual(recorded, [{ round: 0, call: 'call_1', result: { status: 'completed', output: 'counted 2' } }]);
    assert.equal(requests.length, 1, 'round 0 was not asked again; only the answer turn was');
    const toolTurn = requests[0]!.messages.at(-1)!;
    assert.ok(toolTurn.role === 'tool');
    assert.deepEqual(
      toolTurn.content.map((r) => r.output),
      ['counted 1 (earlier)', 'counted 2'],
    );
    // The recalled calls are shown again, each with its result.
    assert.equal(parts.filter((p) => p.type === 'tool-call-start').length, 2);
    assert.equal(results(parts).length, 2);
  });
});
