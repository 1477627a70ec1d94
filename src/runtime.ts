// Background work that lives beside the HTTP server (serve) or alone (worker): run queues, trigger
// schedulers, timeout and recovery sweeps, retention pruning. Each piece returns a closer, called on
// shutdown in reverse order.
//
//   driver  | serve (gateway)                                   | worker
//   inline  | consumer, recovery, timeouts, schedules, pruning, | (refused by main.ts)
//           | response lease sweep                              |
//   bullmq  | enqueue only; job schedulers, pruning, depth      | consumer, recovery, timeouts, depth gauge
//           | gauge, response lease sweep                       |
import { errorFields } from './log/logger';
import { budgetGuardOf } from './model-call/budget-guard';
import type { JobProcessor } from './queue/port';
import { RunExecutor, type RedactorFactory } from './runs/executor';
import { fireSchedule, scheduleEntries } from './runs/schedules';
import { cancelOverdue, pruneRetention, recoverOrphans, releaseStaleLeases, type RetentionDeps, type SweepDeps } from './runs/sweepers';
import type { AppServices } from './services';

export type Closer = () => Promise<void>;

export interface Runtime {
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** The DLP hook for agent runs: the organization's prompt redactor. */
  redactorFor?: RedactorFactory;
}

function runtimeOf(closers: Closer[]): Runtime {
  let closed = false;
  return {
    async close() {
      if (closed) return;
      closed = true;
      for (const close of [...closers].reverse()) await close();
    },
  };
}

/** Runs `task` now (unless `immediately` is false) and every `ms`, never overlapping itself; errors are logged. */
function every(services: AppServices, name: string, ms: number, task: () => Promise<unknown>, immediately = true): Closer {
  let running: Promise<void> | null = null;
  const tick = (): void => {
    if (running) return;
    running = task()
      .then(() => undefined)
      .catch((err: unknown) => {
        services.logger.warn(`${name} failed`, { errorName: err instanceof Error ? err.name : 'unknown' });
      })
      .finally(() => {
        running = null;
      });
  };
  if (immediately) tick();
  const timer = setInterval(tick, ms);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

function sweepDeps(services: AppServices): SweepDeps {
  const { store, metrics, logger, clock, runEngine } = services;
  return { store, queue: runEngine.queue, metrics, logger, active: runEngine.active, now: () => clock.now(), live: services.responseStreams.live };
}

/** With a redacting plugin on (dlp), step prompts are redacted per the organization's policy before they leave. */
function dlpRedactors(services: AppServices): { redactorFor?: RedactorFactory } {
  const hooks = services.pipeline.plugins.find((p) => p.hooks.redactorFor)?.hooks;
  if (!hooks?.redactorFor) return {};
  const forOrg = hooks.redactorFor.bind(hooks);
  return {
    redactorFor: async (orgId) => {
      const redactor = forOrg(orgId);
      return redactor ? (text) => redactor.redact(text).text : null;
    },
  };
}

/** The queue consumer with its sweepers: what executes runs in this process. */
async function startConsumer(services: AppServices, closers: Closer[], options: RuntimeOptions): Promise<void> {
  const { store, logger, metrics, clock, config, modelCalls, runEngine } = services;
  const executor = new RunExecutor({
    store,
    modelCalls,
    logger,
    metrics,
    config,
    now: () => clock.now(),
    active: runEngine.active,
    owner: runEngine.owner,
    leaseMs: runEngine.leaseMs,
    responseEvents: { log: services.responseStreams.log, live: services.responseStreams.live },
    tools: services.tools.loop,
    tracing: services.tracing,
    budgets: budgetGuardOf(services.pipeline),
    ...(options.redactorFor ? { redactorFor: options.redactorFor } : dlpRedactors(services)),
  });
  const processor: JobProcessor = {
    run: (runId, trace) => executor.execute(runId, trace),
    schedule: (agentId, triggerIndex, firedAt) => fireSchedule({ store, runs: services.runs, logger }, agentId, triggerIndex, firedAt),
  };
  const consumer = await runEngine.queue.consume(processor, config.queue.concurrency);
  closers.push(async () => {
    // Runs executing here hand their lease back (untouched) so the next process resumes them at once.
    runEngine.active.stopAll('shutdown');
    await consumer.close();
  });
  const deps = sweepDeps(services);
  const sweepMs = Math.max(500, Math.min(5000, Math.floor(runEngine.leaseMs / 3)));
  closers.push(every(services, 'run recovery sweep', sweepMs, () => recoverOrphans(deps, runEngine.leaseMs)));
  closers.push(every(services, 'run timeout sweep', sweepMs, () => cancelOverdue(deps)));
}

async function registerSchedules(services: AppServices): Promise<void> {
  const entries = scheduleEntries(await services.store.agents.listActive());
  await services.runEngine.queue.registerSchedules(entries);
  if (entries.length > 0) services.logger.info('schedule triggers registered', { count: entries.length, driver: services.runEngine.queue.driver });
}

/**
 * BullMQ job schedulers live only in Redis: one restarted without persistence (`save ""` and no AOF,
 * a common cache setup) or failed over to a replica that missed them has none, and no trigger would
 * fire again until a gateway restarted. Every gateway compares them with the store's agents now and
 * then and writes back what is missing or changed (one Redis read when nothing is). From the store,
 * not from what this process registered at its start: during a rolling deploy an older gateway must
 * not put back a trigger a newer configuration removed or changed.
 */
function checkSchedules(services: AppServices, closers: Closer[], ms: number): void {
  closers.push(
    every(
      services,
      'schedule trigger check',
      ms,
      async () => {
        const written = await services.runEngine.queue.registerSchedules(scheduleEntries(await services.store.agents.listActive()));
        if (written > 0) services.logger.warn('schedule triggers missing from the queue were registered again', { count: written });
      },
      false,
    ),
  );
}

function startRetention(services: AppServices, closers: Closer[]): void {
  const deps: RetentionDeps = {
    store: services.store,
    tools: services.tools,
    logger: services.logger,
    now: () => services.clock.now(),
    retentionDays: services.config.store.retentionDays,
  };
  closers.push(every(services, 'retention pruning', 3_600_000, () => pruneRetention(deps)));
}

/**
 * Fails responses whose generating gateway stopped (their lease lapsed), in every gateway whatever the
 * queue driver: the sweep is a compare-and-set, so gateways sweeping together fail each response once.
 */
async function startResponseSweeper(services: AppServices, closers: Closer[]): Promise<void> {
  const { sweeper } = services.responseStreams;
  if (services.store.driver === 'embedded') {
    // This process is the only one (the store is locked): any lease on record but its own (a stream
    // started since the server began listening) is a previous life's.
    const failed = await sweeper.sweepAllBut(services.runEngine.owner);
    if (failed > 0) services.logger.info('responses left in progress by the previous start marked failed', { count: failed });
  }
  const sweepMs = Math.max(500, Math.min(5000, Math.floor(services.runEngine.leaseMs / 3)));
  closers.push(every(services, 'response lease sweep', sweepMs, () => sweeper.sweep(), false));
}

function startDepthGauge(services: AppServices, closers: Closer[]): void {
  const { metrics, runEngine } = services;
  closers.push(
    every(services, 'queue depth gauge', 5000, async () => {
      const depth = await runEngine.queue.depth();
      metrics.queueDepth.set({ state: 'waiting' }, depth.waiting);
      metrics.queueDepth.set({ state: 'active' }, depth.active);
      metrics.queueDepth.set({ state: 'delayed' }, depth.delayed);
    }),
  );
}

/** Started by `serve` after the app is built. */
export async function startServeRuntime(services: AppServices, options: RuntimeOptions = {}): Promise<Runtime> {
  const closers: Closer[] = [];
  const runtime = runtimeOf(closers);
  try {
    if (services.runEngine.queue.driver === 'inline') {
      if (services.store.driver === 'embedded') {
        const released = await releaseStaleLeases(sweepDeps(services));
        if (released > 0) services.logger.info('resuming runs left in progress by the previous start', { count: released });
      }
      await startConsumer(services, closers, options);
      // Everything left in progress by an earlier life is queued now, not after the periodic sweep's grace.
      await recoverOrphans(sweepDeps(services), 0);
    }
    await registerSchedules(services);
    if (services.runEngine.queue.driver === 'bullmq') checkSchedules(services, closers, Math.max(1000, Math.min(30_000, 2 * services.runEngine.leaseMs)));
    await startResponseSweeper(services, closers);
    startRetention(services, closers);
    startDepthGauge(services, closers);
  } catch (err) {
    services.logger.error('runtime failed to start', errorFields(err));
    await runtime.close();
    throw err;
  }
  return runtime;
}

/** Started by `worker` (no HTTP). */
export async function startWorkerRuntime(services: AppServices, options: RuntimeOptions = {}): Promise<Runtime> {
  const closers: Closer[] = [];
  const runtime = runtimeOf(closers);
  try {
    await startConsumer(services, closers, options);
    startDepthGauge(services, closers);
  } catch (err) {
    await runtime.close();
    throw err;
  }
  return runtime;
}
