// The bench's Responses points (`npm run bench`) stand on three things tested here: the bench upstream
// answers POST /v1/responses in the real wire format (read by the OpenAI SDK, JSON and SSE, an id per
// response); the load generator counts a stream without its final event as an error and reports the id
// of a reply it saw; and the gateway configured as the bench configures it relays the bench's requests
// and, with `store: true`, stores the whole event log, which the bench's check reads back (and tells
// from a response whose log is missing).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import OpenAI from 'openai';
import { readStoredEventLog } from '../../bench/event-log-check';
import { BENCH_KEY } from '../../bench/gateway-config';
import type { LoadOptions } from '../../bench/loadgen';
import { RESPONSES_DONE, responsesRequest } from '../../bench/requests';
import { responsesStreamEventCount } from '../../bench/responses-wire';
import type { TestGateway } from '../helpers/gateway';
import { runBenchDriver, startBenchGateway, startBenchUpstream, stopBenchProcess } from './bench-gateway';

const CHUNKS = 5;

interface LoadResult {
  requests: number;
  errors: number;
  responseId?: string | null;
}

/** Runs bench/loadgen.ts with `options` (short runs) and resolves with its JSON line. */
function runLoadgen(options: Omit<LoadOptions, 'warmupMs' | 'durationMs' | 'concurrency'>): Promise<LoadResult> {
  return runBenchDriver('loadgen.ts', { ...options, concurrency: 2, durationMs: 400, warmupMs: 100 });
}

describe('bench: the Responses points', function () {
  this.timeout(60_000);
  let upstream: ChildProcess | null = null;
  let port = 0;
  before(async () => {
    ({ child: upstream, port } = await startBenchUpstream({ BENCH_CHUNKS: String(CHUNKS), BENCH_CHUNK_GAP_MS: '1' }));
  });
  after(async () => {
    await stopBenchProcess(upstream);
  });

  it('the bench upstream answers /v1/responses as OpenAI does, read by the OpenAI SDK (JSON, SSE, the stream helper)', async () => {
    const client = new OpenAI({ apiKey: 'upstream-key', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const first = await client.responses.create({ model: 'bench-model', input: 'hi' });
    const second = await client.responses.create({ model: 'bench-model', input: 'hi' });
    assert.equal(first.status, 'completed');
    assert.equal(first.output_text, 'The quick brown fox jumps over the lazy dog.');
    assert.equal(first.usage?.total_tokens, 22);
    assert.match(first.id, /^resp_/);
    assert.notEqual(first.id, second.id, 'every response has an id of its own (a storing gateway keys by it)');

    const events = [];
    for await (const event of await client.responses.create({ model: 'bench-model', input: 'hi', stream: true })) events.push(event);
    assert.equal(events.length, responsesStreamEventCount(CHUNKS));
    assert.deepEqual(
      events.map((e) => e.sequence_number),
      events.map((_, i) => i),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        ...Array<string>(CHUNKS).fill('response.output_text.delta'),
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    const created = events[0]!;
    const completed = events.at(-1)!;
    assert.ok(created.type === 'response.created' && completed.type === 'response.completed');
    assert.equal(created.response.id, completed.response.id);
    assert.notEqual(created.response.id, first.id);
    assert.equal(completed.response.usage?.output_tokens, CHUNKS);

    // The SDK's stream helper checks the events against each other (items, parts, deltas).
    const final = await client.responses.stream({ model: 'bench-model', input: 'hi' }).finalResponse();
    assert.equal(final.output_text, 'token '.repeat(CHUNKS));
  });

  it('the load generator counts a reply without the expected final event as an error, and reports a response id it saw', async () => {
    const stream = responsesRequest('bench-model', { stream: true, store: false });
    const ok = await runLoadgen({
      url: `http://127.0.0.1:${port}/v1/responses`,
      key: '',
      body: stream,
      expectText: RESPONSES_DONE.stream,
      captureResponseId: true,
    });
    assert.equal(ok.errors, 0);
    assert.ok(ok.requests > 0);
    assert.match(ok.responseId ?? '', /^resp_bench/);
    // A chat stream (200, but no response.completed) is not a finished Responses stream.
    const wrong = await runLoadgen({ url: `http://127.0.0.1:${port}/v1/chat/completions`, key: '', body: stream, expectText: RESPONSES_DONE.stream });
    assert.equal(wrong.requests, 0);
    assert.ok(wrong.errors > 0);
  });

  for (const driver of ['embedded', 'postgres'] as const) {
    describe(`through the gateway as the bench configures it (${driver} store)`, () => {
      let gateway: TestGateway;
      before(async () => {
        gateway = await startBenchGateway(driver, port);
      });
      after(async () => {
        await gateway?.close();
      });

      it('relays the stateless requests, and stores the whole event log of store: true streams, read back by the bench check', async () => {
        const url = `${gateway.url}/v1/responses`;
        const json = await runLoadgen({
          url,
          key: BENCH_KEY,
          body: responsesRequest('bench-model', { stream: false, store: false }),
          expectText: RESPONSES_DONE.json,
        });
        assert.equal(json.errors, 0);
        assert.ok(json.requests > 0);
        const stored = await runLoadgen({
          url,
          key: BENCH_KEY,
          body: responsesRequest('bench-model', { stream: true, store: true }),
          expectText: RESPONSES_DONE.stream,
          captureResponseId: true,
        });
        assert.equal(stored.errors, 0);
        assert.ok(stored.requests > 0);
        const { waitedMs: _, ...log } = await readStoredEventLog(gateway.url, BENCH_KEY, stored.responseId!);
        assert.deepEqual(log, { status: 'completed', events: responsesStreamEventCount(CHUNKS), deltas: CHUNKS, last: 'response.completed' });
        const rows = await gateway.store.responses.listEvents(stored.responseId!, -1);
        assert.equal(rows.length, responsesStreamEventCount(CHUNKS));
      });

      it('the check waits for a response still in progress to finish, and tells one whose event log is missing (no deltas replayed)', async () => {
        const now = new Date().toISOString();
        const id = `resp_nolog_${driver}`;
        const item = { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'x', annotations: [] }] };
        await gateway.store.responses.create({
          id,
          orgId: 'bench',
          userId: 'bench-user',
          status: 'in_progress',
          model: 'bench-model',
          conversationId: null,
          previousResponseId: null,
          stored: true,
          body: { id, object: 'response', status: 'in_progress', output: [] },
          inputItems: [],
          createdAt: now,
          updatedAt: now,
          expiresAt: null,
        });
        // Finished a moment after the check began, as a response whose final write lags behind its stream.
        const checked = readStoredEventLog(gateway.url, BENCH_KEY, id);
        await new Promise((resolve) => setTimeout(resolve, 400));
        await gateway.store.responses.finish(
          id,
          { status: 'completed', body: { id, object: 'response', status: 'completed', output: [item] } },
          { whenStatus: 'in_progress' },
        );
        const { waitedMs, ...log } = await checked;
        assert.ok(waitedMs >= 300, `the check waited for the final state (${waitedMs} ms)`);
        assert.deepEqual(log, { status: 'completed', events: 2, deltas: 0, last: 'response.completed' });
      });
    });
  }
});
