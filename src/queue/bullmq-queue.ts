// The `bullmq` driver: jobs live in Redis (keys under `queue.prefix`). Gateway processes only enqueue
// and register the schedule triggers as BullMQ job schedulers; `agent-gateway worker` processes consume.
// Job ids deduplicate: a run is queued once under its run id; retries and recoveries use suffixed keys.
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'winston';
import { errorFields } from '../log/logger';
import { REDIS_SOCKET_TIMEOUT_MS } from './redis';
import type { EnqueueOptions, JobProcessor, QueueConsumer, QueueDepth, QueueJob, RunQueue, ScheduleEntry } from './port';

export const RUN_QUEUE_NAME = 'runs';
/** How long the Queue's commands wait for Redis's answer (see BullmqQueue.producer). */
const PRODUCER_COMMAND_TIMEOUT_MS = 5000;
/** Job scheduler ids this service owns (others in the same queue are left alone). */
const SCHEDULER_PREFIX = 'agent-';

export interface BullmqQueueOptions {
  redisUrl: string;
  prefix: string;
  logger: Logger;
  /**
   * How long a worker's lock on an active job lasts without renewal (BullMQ `lockDuration`); a killed
   * worker's job is found stalled after this and handed to another worker. Default 30 s.
   */
  lockDurationMs?: number;
}

function schedulerId(entry: Pick<ScheduleEntry, 'agentId' | 'triggerIndex'>): string {
  return `${SCHEDULER_PREFIX}${entry.agentId}-${entry.triggerIndex}`;
}

export class BullmqQueue implements RunQueue {
  readonly driver = 'bullmq' as const;
  private readonly queue: Queue<QueueJob>;
  /**
   * The Queue's connection (adds, schedulers, counts), ours to close. Its commands fail while Redis is
   * away instead of waiting in ioredis's offline queue for it to come back: a run trigger's add waited
   * for the whole outage (and the caller's request with it), though the run is committed first and the
   * recovery sweep queues it anyway. One retry: a command in flight when the connection drops fails
   * after one reconnect attempt; one not answered in 5 s fails too, and the connection is made again
   * (a Redis host gone without closing it: the kernel gives up on it only after ~15 minutes). BullMQ
   * waits for the first connection before a Queue's first command.
   */
  private readonly producer: Redis;
  private readonly workers = new Set<Worker<QueueJob>>();

  constructor(private readonly options: BullmqQueueOptions) {
    this.producer = new Redis(options.redisUrl, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      commandTimeout: PRODUCER_COMMAND_TIMEOUT_MS,
      socketTimeout: REDIS_SOCKET_TIMEOUT_MS,
    });
    this.queue = new Queue<QueueJob>(RUN_QUEUE_NAME, {
      connection: this.producer,
      prefix: options.prefix,
      defaultJobOptions: {
        // Finished jobs are dropped so a later job of the same run (recovery) is not blocked by its id.
        removeOnComplete: true,
        removeOnFail: true,
        // A processor only throws when the store or Redis failed (run errors end the run, not the job).
        attempts: 3,
        backoff: { type: 'exponential', delay: 1000 },
      },
    });
    this.queue.on('error', (err) => options.logger.warn('queue connection error', errorFields(err)));
  }

  private connection(): { url: string; maxRetriesPerRequest: null } {
    // BullMQ's blocking commands need maxRetriesPerRequest null.
    return { url: this.options.redisUrl, maxRetriesPerRequest: null };
  }

  async enqueue(runId: string, options: EnqueueOptions = {}): Promise<void> {
    const data: QueueJob = options.trace ? { kind: 'run', runId, trace: options.trace } : { kind: 'run', runId };
    await this.queue.add('run', data, { jobId: options.key ?? runId });
  }

  async consume(processor: JobProcessor, concurrency: number): Promise<QueueConsumer> {
    const worker = new Worker<QueueJob>(
      RUN_QUEUE_NAME,
      async (job: Job<QueueJob>) => {
        const data = job.data;
        // The trace context rides in the job's data, so a worker in any process continues the trigger's trace.
        if (data.kind === 'run') return processor.run(data.runId, data.trace);
        // Scheduler-made jobs carry the template's data; the tick is the job's timestamp.
        return processor.schedule(data.agentId, data.triggerIndex, new Date(job.timestamp).toISOString());
      },
      {
        connection: this.connection(),
        prefix: this.options.prefix,
        concurrency: Math.max(1, concurrency),
        lockDuration: this.options.lockDurationMs ?? 30_000,
        // A stalled job is only a hint to look at the run again (the run's lease decides who executes),
        // so let it come back several times; the executor ends runs interrupted too often.
        maxStalledCount: 5,
      },
    );
    worker.on('error', (err) => this.options.logger.warn('queue worker error', errorFields(err)));
    worker.on('failed', (job, err) => this.options.logger.error('queue job failed', { jobId: job?.id, ...errorFields(err) }));
    this.workers.add(worker);
    await worker.waitUntilReady();
    return {
      close: async () => {
        this.workers.delete(worker);
        await worker.close();
      },
    };
  }

  async registerSchedules(entries: readonly ScheduleEntry[]): Promise<number> {
    const held = new Map<string, { pattern?: string; tz?: string }>();
    for (const scheduler of await this.queue.getJobSchedulers(0, -1)) if (scheduler.key.startsWith(SCHEDULER_PREFIX)) held.set(scheduler.key, scheduler);
    const wanted = new Set<string>();
    let written = 0;
    for (const entry of entries) {
      const id = schedulerId(entry);
      wanted.add(id);
      // Upserted only when missing or changed: every gateway calls this periodically (see runtime.ts).
      const current = held.get(id);
      if (current && current.pattern === entry.cron && (current.tz ?? null) === (entry.timezone ?? null)) continue;
      await this.queue.upsertJobScheduler(
        id,
        { pattern: entry.cron, ...(entry.timezone ? { tz: entry.timezone } : {}) },
        { name: 'schedule', data: { kind: 'schedule', agentId: entry.agentId, triggerIndex: entry.triggerIndex, firedAt: '' } },
      );
      written += 1;
    }
    for (const key of held.keys()) if (!wanted.has(key)) await this.queue.removeJobScheduler(key);
    return written;
  }

  async depth(): Promise<QueueDepth> {
    const counts = await this.queue.getJobCounts('wait', 'active', 'delayed');
    return { waiting: counts['wait'] ?? 0, active: counts['active'] ?? 0, delayed: counts['delayed'] ?? 0 };
  }

  async ping(): Promise<void> {
    // With maxRetriesPerRequest null a command waits for Redis forever: readiness must answer.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('queue: Redis did not answer within 2 s')), 2000);
    });
    try {
      await Promise.race([this.queue.getJobCounts('wait'), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.workers].map((w) => w.close()));
    this.workers.clear();
    await this.queue.close();
    // QUIT cannot be sent while Redis is away (no offline queue): the connection is dropped instead.
    await this.producer.quit().catch(() => this.producer.disconnect());
  }
}
