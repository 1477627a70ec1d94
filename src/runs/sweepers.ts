// Periodic checks that keep runs from staying in progress forever: orphaned runs (no lease, or the
// lease of a process that died) go back on the queue; runs past their deadline are cancelled. And the
// retention prune: old runs, conversations and responses deleted, with what the tools kept for the
// conversations that went.
import type { Logger } from 'winston';
import type { Metrics } from '../log/metrics';
import type { RunQueue } from '../queue/port';
import type { LiveEvents } from '../responses';
import type { PrunedConversation, Store } from '../store/port';
import type { ActiveRuns } from './active-runs';
import { messageItem } from './items';
import { endRunResponse } from './run-response';
import { endRun, TIMEOUT_ERROR } from './transitions';

export interface SweepDeps {
  store: Store;
  queue: RunQueue;
  metrics: Metrics;
  logger: Logger;
  active: ActiveRuns;
  now(): Date;
  /** Live events of responses: a cancelled run started through the Responses interface ends its response's stream. */
  live?: LiveEvents;
}

const BATCH = 500;

/**
 * Re-enqueues in-progress runs nobody holds. A run never leased that was created a moment ago is
 * skipped (its first job is on the way); one that was held gets a job key naming its attempt, so a
 * job of the dead holder that BullMQ still thinks active does not swallow it.
 */
export async function recoverOrphans(deps: SweepDeps, graceMs: number): Promise<number> {
  const now = deps.now();
  const orphans = await deps.store.runs.listOrphaned(now.toISOString(), BATCH);
  let queued = 0;
  for (const run of orphans) {
    if (!run.leaseOwner && run.attempts === 0 && now.getTime() - Date.parse(run.updatedAt) < graceMs) continue;
    await deps.queue.enqueue(run.id, { key: run.leaseOwner ? `${run.id}_a${run.attempts}` : run.id });
    queued += 1;
  }
  if (queued > 0) deps.logger.info('recovered orphaned runs', { count: queued });
  return queued;
}

/**
 * With the embedded store this process is the only one (the store is locked), so any lease on record
 * belongs to a previous life of the gateway: released at start so its runs resume at once.
 */
export async function releaseStaleLeases(deps: SweepDeps): Promise<number> {
  const farFuture = '9999-12-31T23:59:59.999Z';
  const held = await deps.store.runs.listOrphaned(farFuture, 10_000);
  let released = 0;
  for (const run of held) {
    if (!run.leaseOwner) continue;
    const updated = await deps.store.runs.update(
      run.id,
      { leaseOwner: null, leaseExpiresAt: null },
      { whenStatus: ['in_progress'], whenRevision: run.revision },
    );
    if (updated) released += 1;
  }
  return released;
}

/** Cancels runs past their deadline (ones executing here are also stopped at once). */
export async function cancelOverdue(deps: SweepDeps): Promise<number> {
  const overdue = await deps.store.runs.listOverdue(deps.now().toISOString(), BATCH);
  let cancelled = 0;
  for (const run of overdue) {
    const ended = await endRun(deps, run.id, 'cancelled', TIMEOUT_ERROR);
    if (!ended) continue;
    cancelled += 1;
    deps.active.stop(run.id, 'timeout');
    if (deps.live) await endRunResponse({ responses: deps.store.responses, live: deps.live, logger: deps.logger }, ended, deps.now());
    await deps.store.conversations
      .append(run.conversationId, [messageItem('system', TIMEOUT_ERROR.error.message, `${run.id}:error:timeout`)])
      .catch(() => undefined);
  }
  return cancelled;
}

export interface RetentionDeps {
  store: Store;
  /** What the tools keep per conversation (src/tools/index.ts Tools.forget). */
  tools: { forget(conversations: readonly PrunedConversation[]): Promise<void> };
  logger: Logger;
  now(): Date;
  /** store.retentionDays: 0 keeps runs and conversations (responses carry their own expiry). */
  retentionDays: number;
}

/** Responses deleted per statement while pruning: bounds one statement's work (each takes its events). */
const RESPONSE_PRUNE_BATCH = 200;

/**
 * One retention pass: runs and conversations older than store.retentionDays (each conversation's
 * workspace, browser context, MCP sessions and tool state with it), then expired responses.
 */
export async function pruneRetention(deps: RetentionDeps): Promise<{ runs: number; conversations: number; responses: number }> {
  let runs = 0;
  let conversations = 0;
  if (deps.retentionDays > 0) {
    const before = new Date(deps.now().getTime() - deps.retentionDays * 86_400_000).toISOString();
    const pruned = await deps.store.prune(before);
    ({ runs, conversations } = pruned);
    await deps.tools.forget(pruned.gone);
  }
  // Responses carry their expiry (retention applied when created): pruned whatever the setting is now.
  const now = deps.now().toISOString();
  let responses = 0;
  for (;;) {
    const deleted = await deps.store.responses.prune(now, RESPONSE_PRUNE_BATCH);
    responses += deleted;
    if (deleted < RESPONSE_PRUNE_BATCH) break;
  }
  if (runs + conversations + responses > 0) deps.logger.info('retention pruned old records', { runs, conversations, responses });
  return { runs, conversations, responses };
}
