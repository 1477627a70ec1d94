// Compaction of stored conversations over HTTP (spec "POST /v1/responses" rule 6, "Opt-in extensions"):
// a model with a small context window (1,500 tokens) behind an upstream that counts what it is sent
// with the real tokenizer. After many long turns every request the upstream received (the summary
// calls included) is within the window; older turns are summarised into a `compaction` item listed
// with the conversation's items; the most recent turn and the new one are sent verbatim after the
// summary, the compaction hint after the caller's instructions; the response objects and the stream's
// events are those of a turn without compaction. A conversation far from its window never counts a
// token nor asks for a summary. The same holds for a model counted by the calibrated estimate. On
// embedded/inline and postgres/bullmq.
import assert from 'node:assert/strict';
import { COMPACTION_HINT } from '../../src/conversations/compaction';
import { startCountingUpstream, type CountedRequest, type CountingUpstream } from '../fixtures/upstreams/counting-upstream';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { BACKENDS, openBackend, type BackendEnv } from '../helpers/backends';
import { assertResponsesFraming, jsonReply, parseSseFrames, post, typesOf } from './http-helpers';

type Json = Record<string, unknown>;

const WINDOW = 1_500;
const INSTRUCTIONS = 'Answer as a careful assistant.';
const WORDS = ['ledger', 'harbour', 'invoice', 'granite', 'meadow', 'signal', 'copper', 'lantern', 'orchard', 'violet', 'summit', 'canvas'];

/** A long user turn (about 100 tokens), different every time. */
const question = (n: number): string =>
  `Question ${n}: ` +
  Array.from({ length: 7 }, (_, i) => `item ${n}-${i} is the ${WORDS[(n + i) % WORDS.length]} with code ${(n * 37 + i * 11) % 997}`).join('; ') +
  '. What follows?';
/** A long answer (about 70 tokens). */
const answer = (n: number): string =>
  `Answer ${n}: ` +
  Array.from({ length: 7 }, (_, i) => `point ${i} concerns ${WORDS[(n * 3 + i) % WORDS.length]} number ${(n * 53 + i) % 991}`).join(', ') +
  '.';
const summaryText = (n: number): string =>
  `Summary ${n}: the user asked numbered questions about ledgers, harbours and codes; each was answered point by point.`;

const textOf = (item: Json): string => {
  const content = item['content'];
  return typeof content === 'string' ? content : Array.isArray(content) ? (content as Json[]).map((p) => String(p['text'] ?? '')).join('') : '';
};

async function metric(gw: TestGateway, name: string, label: string): Promise<number> {
  const text = await gw.gateway.services.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${label}}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

for (const backend of BACKENDS) {
  describe(`stateful Responses: compaction near the context window (${backend})`, function () {
    this.timeout(120_000);
    let upstream: CountingUpstream;
    let gw: TestGateway;
    let deployment: BackendEnv | null = null;

    before(async function () {
      this.timeout(60_000);
      upstream = await startCountingUpstream({ answer, summary: summaryText });
      deployment = await openBackend(backend, 'cmp');
      const { config: storeConfig, pg } = deployment;
      gw = await startTestGateway({
        ...(pg ? { store: pg.store } : {}),
        config: {
          ...storeConfig,
          providers: {
            demo: { type: 'demo' },
            native: { type: 'openai', baseUrl: upstream.baseUrl, apiKey: 'sk-native', responses: 'native', retries: { max: 0 } },
            chat: { type: 'openai', baseUrl: upstream.baseUrl, apiKey: 'sk-chat', retries: { max: 0 } },
          },
          models: [
            { id: 'demo', provider: 'demo' },
            { id: 'small', provider: 'native', upstream: 'gpt-4o-mini', contextWindow: WINDOW },
            { id: 'roomy', provider: 'native', upstream: 'gpt-4o-mini', contextWindow: 128_000 },
            { id: 'small-llama', provider: 'chat', upstream: 'llama-3.1-8b-instruct', contextWindow: WINDOW },
          ],
          plugins: { auth: { enabled: true } },
        },
      });
    });
    after(async () => {
      await gw?.close();
      await upstream?.close();
      await deployment?.cleanup();
    });

    const create = (body: Json): Promise<Response> => post(`${gw.url}/v1/responses`, body, gw.auth('member'));

    /** One turn continuing `previous` (or starting a conversation); the reply's body or stream frames. */
    async function turn(model: string, n: number, previous: string | null, stream: boolean): Promise<{ id: string; body: Json; types: string[] }> {
      const res = await create({
        model,
        input: question(n),
        instructions: INSTRUCTIONS,
        max_output_tokens: 150,
        stream,
        ...(previous ? { previous_response_id: previous } : { store: true }),
      });
      if (!stream) {
        const reply = await jsonReply(res);
        assert.equal(reply.status, 200, reply.text);
        return { id: String(reply.body['id']), body: reply.body, types: [] };
      }
      assert.equal(res.status, 200);
      const frames = parseSseFrames(await res.text());
      assertResponsesFraming(frames);
      const last = frames[frames.length - 1]!.data;
      assert.equal(last['type'], 'response.completed', JSON.stringify(last));
      const body = last['response'] as Json;
      return { id: String(body['id']), body, types: typesOf(frames) };
    }

    /** Which turns stream: both kinds before, at and after compactions. */
    const streamed = (n: number): boolean => n % 3 !== 0;

    /** The requests each turn caused, by turn. */
    async function conversation(model: string, turns: number): Promise<{ replies: Awaited<ReturnType<typeof turn>>[]; perTurn: CountedRequest[][] }> {
      const replies: Awaited<ReturnType<typeof turn>>[] = [];
      const perTurn: CountedRequest[][] = [];
      let previous: string | null = null;
      for (let n = 0; n < turns; n++) {
        const before = upstream.requests.length;
        const reply = await turn(model, n, previous, streamed(n));
        perTurn.push(upstream.requests.slice(before));
        replies.push(reply);
        previous = reply.id;
      }
      return { replies, perTurn };
    }

    async function items(conversationId: string): Promise<Json[]> {
      const res = await fetch(`${gw.url}/v1/conversations/${conversationId}/items?order=asc&limit=100`, { headers: gw.auth('member') });
      const reply = await jsonReply(res);
      assert.equal(reply.status, 200, reply.text);
      return reply.body['data'] as Json[];
    }

    it('keeps every request within a small window over many long turns, summarising older turns', async () => {
      const { replies, perTurn } = await conversation('small', 16);

      // Every request the upstream received, the summary calls included, fits the window.
      for (const [n, requests] of perTurn.entries()) {
        for (const request of requests) {
          assert.ok(request.inputTokens <= WINDOW, `turn ${n}: ${request.path} read ${request.inputTokens} tokens > ${WINDOW}`);
          if (!request.summary) assert.ok(request.inputTokens + 150 <= WINDOW, `turn ${n}: room for max_output_tokens`);
        }
        // At most one summary call per turn, always before the turn's own call.
        const summaries = requests.filter((r) => r.summary);
        assert.ok(summaries.length <= 1, `turn ${n}: ${summaries.length} summary calls`);
        assert.equal(requests.length, summaries.length + 1);
        assert.ok(!requests[requests.length - 1]!.summary);
      }
      const compactedTurns = perTurn.flatMap((requests, n) => (requests.some((r) => r.summary) ? [n] : []));
      assert.ok(compactedTurns.length >= 2, `compacted on turns ${compactedTurns.join(', ')}`);
      // Without compaction the conversation would have outgrown the window long before the end.
      const grown = perTurn.reduce((sum, requests) => sum + requests[requests.length - 1]!.outputTokens + upstream.count(question(0)), 0);
      assert.ok(grown > WINDOW * 1.5, `${grown} tokens of turns`);

      // Each compacted turn: the summary first, then the most recent turn verbatim, then the new turn,
      // and the hint after the caller's instructions (svc.system_prompt off).
      for (const n of compactedTurns) {
        const main = perTurn[n]!.find((r) => !r.summary)!;
        const input = main.body['input'] as Json[];
        assert.equal(input[0]!['role'], 'developer');
        assert.ok(textOf(input[0]!).includes('Summary'), `turn ${n}: the summary opens the history`);
        assert.ok(textOf(input[0]!).includes(summaryText(compactedTurns.indexOf(n))), 'the summary the summariser wrote');
        const texts = input.map(textOf);
        assert.equal(texts[texts.length - 1], question(n), 'the new turn verbatim, last');
        assert.ok(texts.includes(question(n - 1)), `turn ${n}: the previous question is kept verbatim`);
        assert.ok(texts.includes(answer(n - 1)), `turn ${n}: the previous answer is kept verbatim`);
        assert.ok(!texts.includes(question(0)), 'the oldest turn is not sent verbatim');
        assert.equal(main.body['instructions'], `${INSTRUCTIONS}\n\n${COMPACTION_HINT}`);
        // The summariser was shown the turns it folded in (the first compaction: from the first turn on).
        const call = perTurn[n]!.find((r) => r.summary)!;
        const transcript = JSON.stringify(call.body['messages']);
        if (n === compactedTurns[0]) assert.ok(transcript.includes(`Question 0:`), 'the oldest turn was summarised');
      }
      // A turn after a compaction still carries the summary and the hint, without a new summary call.
      const after = compactedTurns[0]! + 1;
      if (!compactedTurns.includes(after)) {
        const main = perTurn[after]![0]!;
        assert.ok(textOf((main.body['input'] as Json[])[0]!).includes(summaryText(0)));
        assert.equal(main.body['instructions'], `${INSTRUCTIONS}\n\n${COMPACTION_HINT}`);
      }

      // The compaction items are listed with the conversation's items.
      const conversationId = (replies[0]!.body['conversation'] as Json)['id'] as string;
      const listed = await items(conversationId);
      const compactions = listed.filter((item) => item['type'] === 'compaction');
      assert.equal(compactions.length, compactedTurns.length);
      for (const [i, item] of compactions.entries()) {
        assert.match(String(item['id']), /^cmp_/);
        assert.equal(item['summary'], summaryText(i));
        assert.equal(typeof item['through'], 'number');
        assert.equal(item['status'], 'completed');
      }
      // Every turn's own items are still there: nothing is deleted by compaction.
      assert.equal(listed.filter((item) => item['role'] === 'user').length, 16);

      // The response objects keep their shape and a compacted streamed turn has the events of an
      // uncompacted one: no extra stream event.
      const plain = (stream: boolean): number => perTurn.findIndex((_, n) => streamed(n) === stream && !compactedTurns.includes(n) && n > 0);
      assert.ok(compactedTurns.some(streamed) && compactedTurns.some((n) => !streamed(n)), `compacted turns ${compactedTurns}: streamed and not`);
      for (const n of compactedTurns) {
        const body = replies[n]!.body;
        const like = replies[plain(streamed(n))]!;
        assert.deepEqual(Object.keys(body).sort(), Object.keys(like.body).sort(), `turn ${n}: the response object's fields`);
        assert.equal(body['status'], 'completed');
        assert.deepEqual((body['conversation'] as Json)['id'], conversationId);
        assert.equal((body['output'] as Json[]).length, 1);
        assert.deepEqual(replies[n]!.types, like.types, `turn ${n}: the same events`);
      }
    });

    it('never counts a token nor asks for a summary in a conversation far from its window', async () => {
      const far = await metric(gw, 'agw_conversation_contexts_total', 'outcome="far"');
      const counted = await metric(gw, 'agw_conversation_contexts_total', 'outcome="counted"');
      const tokenized = await metric(gw, 'agw_context_counted_chars_total', 'method="tokenizer"');
      const estimated = await metric(gw, 'agw_context_counted_chars_total', 'method="estimate"');
      const { perTurn } = await conversation('roomy', 6);
      assert.deepEqual(
        perTurn.map((requests) => requests.length),
        [1, 1, 1, 1, 1, 1],
        'one upstream call per turn: no summary call',
      );
      assert.ok(perTurn.every((requests) => !requests[0]!.summary));
      assert.equal(await metric(gw, 'agw_conversation_contexts_total', 'outcome="far"'), far + 6, 'each turn decided by the cheap check');
      assert.equal(await metric(gw, 'agw_conversation_contexts_total', 'outcome="counted"'), counted);
      assert.equal(await metric(gw, 'agw_context_counted_chars_total', 'method="tokenizer"'), tokenized, 'the tokenizer never ran');
      assert.equal(await metric(gw, 'agw_context_counted_chars_total', 'method="estimate"'), estimated);
      // The whole history was sent: nothing summarised.
      const last = perTurn[5]![0]!.body['input'] as Json[];
      assert.equal(last.map(textOf)[0], question(0));
      assert.equal(last.length, 11);
    });

    it('keeps a model counted by its calibrated estimate within the window too (translated through chat completions)', async () => {
      const estimated = await metric(gw, 'agw_context_counted_chars_total', 'method="estimate"');
      const { perTurn } = await conversation('small-llama', 14);
      for (const [n, requests] of perTurn.entries()) {
        for (const request of requests) {
          assert.ok(request.inputTokens <= WINDOW, `turn ${n}: ${request.inputTokens} tokens read > ${WINDOW}`);
          assert.ok(request.path.endsWith('/chat/completions'));
        }
        assert.ok(requests.filter((r) => r.summary).length <= 1);
      }
      assert.ok(
        perTurn.some((requests) => requests.some((r) => r.summary)),
        'compacted at least once',
      );
      assert.ok((await metric(gw, 'agw_context_counted_chars_total', 'method="estimate"')) > estimated, 'counted by the estimate');
      // The calibration learned this upstream's ratio from its reported usage.
      const ratio = gw.gateway.services.compaction.tokens.ratio('small-llama');
      assert.notEqual(ratio, 1);
    });
  });
}
