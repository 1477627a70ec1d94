// The bench's stored-conversation point (`npm run bench`, bench/conversation-load.ts) stands on its
// driver: against the gateway configured as the bench configures it, on each store, it drives
// conversations turn by turn (turn 1 `store: true`, then `previous_response_id`), so the conversation
// it reports holds every turn, and it reports a p50 for each turn number; a turn that fails is counted
// as an error and ends its conversation (no latency reported for turns never reached). Plumbing only:
// no figure is judged here, the bench judges them.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import type { ConversationLoadOptions, ConversationLoadResult } from '../../bench/conversation-load';
import { BENCH_KEY } from '../../bench/gateway-config';
import type { TestGateway } from '../helpers/gateway';
import { runBenchDriver, startBenchGateway, startBenchUpstream, stopBenchProcess } from './bench-gateway';

/** Runs bench/conversation-load.ts as the bench does (its own process) and resolves with its JSON line. */
const drive = (options: ConversationLoadOptions): Promise<ConversationLoadResult> => runBenchDriver('conversation-load.ts', options);

describe('bench: the stored-conversation point', function () {
  this.timeout(120_000);
  let upstream: ChildProcess | null = null;
  let port = 0;
  before(async () => {
    ({ child: upstream, port } = await startBenchUpstream({ BENCH_CHUNKS: '3', BENCH_CHUNK_GAP_MS: '1' }));
  });
  after(async () => {
    await stopBenchProcess(upstream);
  });

  for (const driver of ['embedded', 'postgres'] as const) {
    describe(`through the gateway as the bench configures it (${driver} store)`, () => {
      let gateway: TestGateway;
      before(async function () {
        this.timeout(180_000);
        gateway = await startBenchGateway(driver, port);
      });
      after(async () => {
        await gateway?.close();
      });

      it('drives every conversation to its last turn, each turn continuing the last, and reports a p50 per turn', async () => {
        const turns = 4;
        const result = await drive({
          url: `${gateway.url}/v1/responses`,
          key: BENCH_KEY,
          model: 'bench-model',
          conversations: 3,
          turns,
          concurrency: 2,
          warmup: 1,
        });
        assert.equal(result.errors, 0);
        assert.equal(result.completed, 3);
        assert.equal(result.p50ByTurn.length, turns);
        for (const p50 of result.p50ByTurn) assert.ok(typeof p50 === 'number' && p50 > 0, `a p50 for every turn: ${JSON.stringify(result.p50ByTurn)}`);
        assert.equal(result.turn1P50, result.p50ByTurn[0]);
        assert.equal(result.lastTurnP50, result.p50ByTurn[turns - 1]);
        // The reported conversation holds every turn: each continued the one before (not a new conversation).
        assert.match(result.conversationId ?? '', /^conv_/);
        const res = await fetch(`${gateway.url}/v1/conversations/${result.conversationId!}/items?order=asc&limit=100`, {
          headers: { authorization: `Bearer ${BENCH_KEY}` },
        });
        assert.equal(res.status, 200);
        const items = ((await res.json()) as { data: { role: string; content: { text: string }[] }[] }).data;
        assert.deepEqual(
          items.map((item) => item.role),
          Array.from({ length: turns }, () => ['user', 'assistant']).flat(),
        );
        assert.match(items[2 * (turns - 1)]!.content[0]!.text, new RegExp(`^Turn ${turns}:`));
      });

      it('a failing turn is an error that ends its conversation: no conversation completed, no latency reported', async () => {
        const result = await drive({
          url: `${gateway.url}/v1/responses`,
          key: BENCH_KEY,
          model: 'no-such-model',
          conversations: 2,
          turns: 3,
          concurrency: 1,
          warmup: 0,
        });
        assert.equal(result.errors, 2);
        assert.equal(result.completed, 0);
        assert.deepEqual(result.p50ByTurn, [null, null, null]);
        assert.equal(result.turn1P50, null);
        assert.equal(result.conversationId, null);
      });
    });
  }
});
