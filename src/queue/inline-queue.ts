// The `inline` driver: jobs are executed in this process, at most `concurrency` at once. Jobs are held
// in memory only; that is enough because the run row is the source of truth: at start the runtime
// re-enqueues every run left in progress (recovery), so a restart loses nothing.
import { AsyncResource } from 'node:async_hooks';
import type { Logger } from 'winston';
import { errorFields } from '../log/logger';
import { cronExpressions } from './cron';
import type { EnqueueOptions, JobProcessor, QueueConsumer, QueueDepth, QueueJob, RunQueue, ScheduleEntry } from './port';

/** setTimeout's ceiling (~24.8 days); longer waits re-arm. */
const MAX_TIMER_MS = 2_147_483_647;

interface Pending {
  key: string;
  job: QueueJob;
}

export class InlineQueue implements RunQueue {
  readonly driver = 'inline' as const;
  private readonly waiting: Pending[] = [];
  /** Keys waiting or active: a key is queued once. */
  private readonly keys = new Set<string>();
  private readonly active = new Set<Promise<void>>();
  private processor: JobProcessor | null = null;
  private concurrency = 1;
  private closed = false;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /**
   * The async context jobs execute in: the queue's own, not that of whichever request enqueued or
   * drained them (else a schedule firing after a request's run would start its run in that request's trace).
   */
  private readonly scope = new AsyncResource('agw.inline-queue');

  constructor(private readonly logger: Logger) {}

  async enqueue(runId: string, options: EnqueueOptions = {}): Promise<void> {
    this.push(options.key ?? runId, options.trace ? { kind: 'run', runId, trace: options.trace } : { kind: 'run', runId });
  }

  private push(key: string, job: QueueJob): void {
    if (this.closed || this.keys.has(key)) return;
    this.keys.add(key);
    this.waiting.push({ key, job });
    this.drain();
  }

  private drain(): void {
    const processor = this.processor;
    if (!processor) return;
    while (!this.closed && this.active.size < this.concurrency) {
      const next = this.waiting.shift();
      if (!next) return;
      const task = this.scope
        .runInAsyncScope(() => this.execute(processor, next))
        .finally(() => {
          this.active.delete(task);
          this.keys.delete(next.key);
          this.drain();
        });
      this.active.add(task);
    }
  }

  private async execute(processor: JobProcessor, { job }: Pending): Promise<void> {
    try {
      if (job.kind === 'run') await processor.run(job.runId, job.trace);
      else await processor.schedule(job.agentId, job.triggerIndex, job.firedAt);
    } catch (err) {
      this.logger.error('queue job failed', { job: job.kind, ...errorFields(err) });
    }
  }

  async consume(processor: JobProcessor, concurrency: number): Promise<QueueConsumer> {
    this.processor = processor;
    this.concurrency = Math.max(1, concurrency);
    this.drain();
    return {
      close: async () => {
        this.processor = null;
        await Promise.all([...this.active]);
      },
    };
  }

  async registerSchedules(entries: readonly ScheduleEntry[]): Promise<number> {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const entry of entries) this.arm(entry, new Date());
    return entries.length;
  }

  private arm(entry: ScheduleEntry, after: Date): void {
    if (this.closed) return;
    const id = `${entry.agentId}#${entry.triggerIndex}`;
    let next: Date;
    try {
      next = cronExpressions()
        .parse(entry.cron, { currentDate: after, ...(entry.timezone ? { tz: entry.timezone } : {}) })
        .next()
        .toDate();
    } catch (err) {
      this.logger.error('schedule trigger has an invalid cron expression', { agentId: entry.agentId, triggerIndex: entry.triggerIndex, ...errorFields(err) });
      return;
    }
    const wait = next.getTime() - Date.now();
    const timer = setTimeout(
      () => {
        if (Date.now() < next.getTime()) return this.arm(entry, after);
        const firedAt = next.toISOString();
        this.push(`schedule:${id}:${firedAt}`, { kind: 'schedule', agentId: entry.agentId, triggerIndex: entry.triggerIndex, firedAt });
        this.arm(entry, next);
      },
      Math.max(0, Math.min(wait, MAX_TIMER_MS)),
    );
    timer.unref();
    this.timers.set(id, timer);
  }

  async depth(): Promise<QueueDepth> {
    return { waiting: this.waiting.length, active: this.active.size, delayed: 0 };
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.waiting.length = 0;
    await Promise.all([...this.active]);
  }
}
