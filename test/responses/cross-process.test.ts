// A reader connected to another gateway process than the writer continues live (issue 17, section 4):
// the writer runs in a child process of its own (fixtures/writer-process.ts), the reader here, each with
// its own store connection and its own Redis (bullmq deployments) or PostgreSQL notification connection
// (postgres without Redis). When the writer's process is killed mid-stream, the lease lapses, the
// sweeper (here: another gateway) fails the response and the reader ends.
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { GatewayConfig } from '../../src/config/types';
import { createRedisProvider, type RedisProvider } from '../../src/queue/redis';
import { createLapsedSweeper } from '../../src/responses/lapsed-sweeper';
import { createLiveEvents } from '../../src/responses/index';
import type { LiveEvents } from '../../src/responses/live-events';
import { replayEvents } from '../../src/responses/replay';
import type { StreamEvent } from '../../src/responses/stream-event';
import { createLogger } from '../../src/log/logger';
import { createStore } from '../../src/store/index';
import type { Store } from '../../src/store/port';
import { createTestSchema } from '../helpers/store';
import type { WriterCommand } from './fixtures/writer-process';
import { numbers, range, responseId, waitUntil } from './helpers';

const REDIS_URL = process.env['REDIS_URL'] || 'redis://127.0.0.1:6379';
const WRITER = path.join(__dirname, 'fixtures/writer-process.ts');
const logger = createLogger({ level: 'error', silent: process.env['TEST_LOGS'] !== '1' });

class Writer {
  private readonly replies: ((reply: { ok: boolean; error?: string }) => void)[] = [];

  private constructor(readonly child: ChildProcess) {
    child.on('message', (message: { ok?: boolean; error?: string; ready?: boolean }) => {
      if (message.ready) return;
      this.replies.shift()?.({ ok: message.ok === true, ...(message.error ? { error: message.error } : {}) });
    });
  }

  static async start(env: Record<string, string>): Promise<Writer> {
    const child = fork(WRITER, [], {
      execArgv: ['--import', 'tsx'],
      env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...env },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`writer process exited (${String(code)}) before it was ready`)));
    });
    child.removeAllListeners('exit');
    return new Writer(child);
  }

  async send(command: WriterCommand): Promise<void> {
    const reply = new Promise<{ ok: boolean; error?: string }>((resolve) => this.replies.push(resolve));
    this.child.send(command);
    const answer = await reply;
    if (!answer.ok) throw new Error(`writer: ${answer.error ?? 'failed'}`);
  }

  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.disconnect();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    await this.kill();
  }
}

/** Collects a replay's events as they come. */
function follow(source: AsyncIterable<StreamEvent>): { events: StreamEvent[]; finished: Promise<void> } {
  const events: StreamEvent[] = [];
  const finished = (async () => {
    for await (const event of source) events.push(event);
  })();
  return { events, finished };
}

for (const mode of ['redis', 'postgres'] as const) {
  describe(`live continuation across processes (${mode === 'redis' ? 'bullmq deployment: Redis pub/sub' : 'postgres without Redis: LISTEN/NOTIFY'})`, function () {
    this.timeout(60_000);
    let schema: Awaited<ReturnType<typeof createTestSchema>>;
    let store: Store;
    let redis: RedisProvider | null;
    let live: LiveEvents;
    let prefix: string;
    const writers: Writer[] = [];

    before(async () => {
      schema = await createTestSchema('respx');
      prefix = `agwrespx${randomBytes(4).toString('hex')}`;
      const config: Pick<GatewayConfig, 'store' | 'queue'> = {
        store: { driver: 'postgres', path: '', url: schema.url, retentionDays: 30, queryTimeoutMs: 15_000 },
        queue: { driver: mode === 'redis' ? 'bullmq' : 'inline', redisUrl: REDIS_URL, prefix, concurrency: 1, leaseSeconds: 30 },
      };
      store = await createStore(config.store, { logger });
      // The reader's own connections: nothing shared with the writer but Redis and PostgreSQL themselves.
      redis = mode === 'redis' ? createRedisProvider(REDIS_URL) : null;
      live = createLiveEvents({ config, redis, logger });
    });
    after(async () => {
      for (const writer of writers) await writer.kill();
      await live?.close();
      await redis?.close();
      await store?.close();
      await schema?.drop();
    });

    /**
     * Redis: the writer stores its events only when told (a minute's interval), so what the reader gets
     * before that came over pub/sub. PostgreSQL: the usual interval; what comes live came by NOTIFY.
     */
    function startWriter(leaseMs = 30_000): Promise<Writer> {
      return Writer.start({
        WRITER_MODE: mode,
        STORE_URL: schema.url,
        REDIS_URL,
        REDIS_PREFIX: prefix,
        FLUSH_MS: mode === 'redis' ? '60000' : '30',
        LEASE_MS: String(leaseMs),
      }).then((writer) => {
        writers.push(writer);
        return writer;
      });
    }

    it("a reader on another process gets the stored events, then the writer's new ones live, then the end", async () => {
      const writer = await startWriter();
      const id = responseId();
      await writer.send({ op: 'create', id });
      await writer.send({ op: 'append', id, from: 0, to: 4 });
      await writer.send({ op: 'flush', id });

      const reader = follow(replayEvents({ responses: store.responses, live, responseId: id, startingAfter: -1 }));
      await waitUntil('the stored events', () => reader.events.length === 5);
      await new Promise((r) => setTimeout(r, 700)); // past the reads that follow its subscription
      await writer.send({ op: 'append', id, from: 5, to: 9 });
      // Well within the reader's periodic store read (2 s): these came by the live mechanism.
      await waitUntil('the live events', () => reader.events.length === 10, 1500);
      if (mode === 'redis') assert.equal(await store.responses.lastSequenceNumber(id), 4, 'not stored yet: they came over Redis');
      await writer.send({ op: 'complete', id, sequenceNumber: 10 });
      await reader.finished;
      assert.deepEqual(numbers(reader.events), range(0, 10));
      assert.equal(reader.events[10]?.event, 'response.completed');
      await writer.stop();
    });

    it('the writer killed mid-stream: its lease lapses, another gateway fails the response, the reader ends', async () => {
      const writer = await startWriter(1000);
      const id = responseId();
      await writer.send({ op: 'create', id });
      await writer.send({ op: 'append', id, from: 0, to: 3 });
      await writer.send({ op: 'flush', id });
      const reader = follow(replayEvents({ responses: store.responses, live, responseId: id, startingAfter: -1 }));
      await writer.send({ op: 'append', id, from: 4, to: 6 });
      await waitUntil('the events before the crash', () => reader.events.length === 7, 3000);
      await writer.kill();

      const sweeper = createLapsedSweeper({ responses: store.responses, live, logger, now: () => new Date() });
      let swept = 0;
      await waitUntil(
        'the sweep',
        async () => {
          swept += await sweeper.sweep();
          return swept > 0;
        },
        10_000,
      );
      await reader.finished;
      assert.deepEqual(numbers(reader.events), range(0, 8), 'continuous numbering for the reader');
      assert.deepEqual(
        reader.events.slice(7).map((e) => e.event),
        ['error', 'response.failed'],
      );
      assert.equal((await store.responses.get(id))?.status, 'failed');
    });
  });
}
