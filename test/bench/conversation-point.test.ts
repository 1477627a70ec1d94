// The bench's stored-conversation point (`npm run bench`, bench/conversation-load.ts) stands on its
// driver: against the gateway configured as the bench configures it, on each store, it drives
// conversations turn by turn (turn 1 `store: true`, then `previous_response_id`), so the conversation
// it reports holds every turn, and it reports a p50 for each turn number; a turn that fails is counted
// as an error and ends its conversation (no latency reported for turns never reached). Plumbing only:
// no figure is judged here, the bench judges them.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ConversationLoadOptions, ConversationLoadResult } from '../../bench/conversation-load';
import { BENCH_KEY } from '../../bench/gateway-config';
import type { TestGateway } from '../helpers/gateway';
import { startBenchGateway } from './bench-gateway';

const ROOT = path.resolve(__dirname, '../..');

/** Starts bench/upstream.ts (3 deltas 1 ms apart) and resolves with the port it prints. */
function startUpstream(): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/upstream.ts')], {
      cwd: ROOT,
      env: { ...process.env, BENCH_CHUNKS: '3', BENCH_CHUNK_GAP_MS: '1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ child, port: (JSON.parse(line) as { port: number }).port });
    });
    child.once('exit', (code) => reject(new Error(`the bench upstream exited with ${String(code)}`)));
  });
}

/** Runs bench/conversation-load.ts as the bench does (its own process) and resolves with its JSON line. */
function drive(options: ConversationLoadOptions): Promise<ConversationLoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/conversation-load.ts'), JSON.stringify(options)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim()) as ConversationLoadResult) : reject(new Error(`the conversation driver exited with ${String(code)}`)),
    );
  });
}

describe('bench: the stored-conversation point', function () {
  this.timeout(120_000);
  let upstream: ChildProcess | null = null;
  let port = 0;
  before(async () => {
    ({ child: upstream, port } = await startUpstream());
  });
  after(async () => {
    if (!upstream || upstream.exitCode !== null) return;
    const exited = new Promise((r) => upstream!.once('exit', r));
    upstream.kill('SIGTERM');
    await exited;
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
