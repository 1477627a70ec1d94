// The run queue port. The run row in the store is the source of truth (status, steps completed,
// lease); a job only says "look at this run now". Losing or duplicating a job is therefore safe: the
// executor takes the run's lease before doing anything, and recovery sweeps re-enqueue orphans.
import type { QueueDriver } from '../config/types';
import type { TraceContext } from '../telemetry/tracing';

/** A schedule trigger: agent id + index in its `triggers` list, cron and timezone. */
export interface ScheduleEntry {
  agentId: string;
  triggerIndex: number;
  cron: string;
  timezone: string | undefined;
}

/** A run's job; `trace` (tracing on, a triggering request's span): the W3C trace context its execution joins. */
export type QueueJob = { kind: 'run'; runId: string; trace?: TraceContext } | { kind: 'schedule'; agentId: string; triggerIndex: number; firedAt: string };

/** What a consumer does with jobs. */
export interface JobProcessor {
  /** Executes (or continues) the run, in the trace of `trace` when the job carries one; resolves when this process is done with it. */
  run(runId: string, trace?: TraceContext): Promise<void>;
  /** A schedule trigger fired: starts a run. */
  schedule(agentId: string, triggerIndex: number, firedAt: string): Promise<void>;
}

export interface QueueDepth {
  waiting: number;
  active: number;
  delayed: number;
}

export interface EnqueueOptions {
  /**
   * Deduplication key (BullMQ job id). Defaults to the run id, so a run queued twice is queued once;
   * retries and recoveries pass a key with a suffix so a finished job of the same run does not block them.
   */
  key?: string;
  /** The trigger's W3C trace context (tracing on), carried in the job for the run's execution to join. */
  trace?: TraceContext;
}

export interface QueueConsumer {
  /** Stops taking jobs and waits for the active ones to return. */
  close(): Promise<void>;
}

export interface RunQueue {
  readonly driver: QueueDriver;
  enqueue(runId: string, options?: EnqueueOptions): Promise<void>;
  /** Starts processing jobs, at most `concurrency` at once. */
  consume(processor: JobProcessor, concurrency: number): Promise<QueueConsumer>;
  /**
   * Makes the schedule triggers fire: BullMQ job schedulers (one firing per tick however many
   * processes register them; missing or changed ones written, those not in `entries` removed) or
   * in-process timers (inline, firing through the processor given to consume(); re-armed). Resolves
   * with how many schedulers it wrote (bullmq) or armed (inline).
   */
  registerSchedules(entries: readonly ScheduleEntry[]): Promise<number>;
  depth(): Promise<QueueDepth>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
