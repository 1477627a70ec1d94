// Executes a run: the agent version's steps in order as model turns in the run's conversation, judged
// after each step that has an objective. Safe to call for any run id at any time, from any process:
// it takes the run's lease first (someone else executing it: returns at once), continues from
// `stepsCompleted`, and every conversation item carries an idempotency key, so a step executed again
// after a crash never appends twice (a reply already recorded is reused instead of asking the model again).
import type { Logger } from 'winston';
import type { GatewayConfig } from '../config/types';
import type { Metrics } from '../log/metrics';
import type { ChatCompletion, ChatCompletionRequest, ModelRouter } from '../providers/types';
import type { Store } from '../store/port';
import type { AgentDefinition, ConversationItemRecord, NewConversationItem, RunRecord } from '../store/types';
import { ActiveRuns, RunStopped, stopReasonOf } from './active-runs';
import { renderPrompt } from './inputs';
import { functionCallItem, functionCallOutputItem, itemText, itemsToChatMessages, messageItem, runResult } from './items';
import { judgeRequest, parseVerdict, type Verdict } from './judge';
import { endRun, TIMEOUT_MESSAGE, type TransitionDeps } from './transitions';

/** Redacts prompt text per the organization's DLP policy (null: the policy is off). */
export type Redactor = (text: string) => string;
export type RedactorFactory = (orgId: string) => Promise<Redactor | null>;

export interface ExecutorDeps {
  store: Store;
  models: ModelRouter;
  logger: Logger;
  metrics: Metrics;
  config: GatewayConfig;
  now(): Date;
  active: ActiveRuns;
  /** Lease owner id of this process. */
  owner: string;
  leaseMs: number;
  /** Leases taken beyond this (crashes, kills) end the run as failure. Default 3. */
  maxAttempts?: number;
  /** The DLP hook: the organization's redactor, applied to step prompts before they leave. */
  redactorFor?: RedactorFactory;
}

/** Model turns a step may spend on tool calls before its reply is taken as it is. */
const MAX_TOOL_ROUNDS = 3;
const TOOL_UNAVAILABLE = 'This tool is not available to agent runs on this gateway.';

interface Ctx {
  run: RunRecord;
  agent: AgentDefinition;
  signal: AbortSignal;
  /** Items already in the conversation by idempotency key (re-execution reuses them). */
  byKey: Map<string, ConversationItemRecord>;
  items: ConversationItemRecord[];
  redact: Redactor;
}

function isErrorItem(item: ConversationItemRecord): boolean {
  return item.idempotencyKey?.includes(':error:') ?? false;
}

export class RunExecutor {
  private readonly maxAttempts: number;
  private readonly transitions: TransitionDeps;

  constructor(private readonly deps: ExecutorDeps) {
    this.maxAttempts = deps.maxAttempts ?? 3;
    this.transitions = { store: deps.store, metrics: deps.metrics, now: deps.now };
  }

  private iso(offsetMs = 0): string {
    return new Date(this.deps.now().getTime() + offsetMs).toISOString();
  }

  /** Executes or continues the run if it is in progress and nobody else holds it. */
  async execute(runId: string): Promise<void> {
    const { store } = this.deps;
    const current = await store.runs.get(runId);
    if (!current || current.status !== 'in_progress') return;
    if (Date.parse(current.deadlineAt) <= this.deps.now().getTime()) {
      await endRun(this.transitions, runId, 'cancelled', { error: TIMEOUT_MESSAGE });
      return;
    }
    const run = await store.runs.acquireLease(runId, this.deps.owner, this.iso(this.deps.leaseMs), this.iso());
    if (!run) return;
    if (run.attempts > this.maxAttempts) {
      await this.fail(run, `The run was interrupted ${run.attempts - 1} times (its worker stopped or crashed) and was not resumed again.`);
      return;
    }
    const version = await store.agents.getVersion(run.agentId, run.agentVersion);
    if (!version) {
      await this.fail(run, `Version ${run.agentVersion} of the agent no longer exists.`);
      return;
    }
    const controller = this.deps.active.register(runId);
    const { signal } = controller;
    const stop = (reason: ConstructorParameters<typeof RunStopped>[0]): void => {
      if (!signal.aborted) controller.abort(new RunStopped(reason));
    };
    const deadline = setTimeout(() => stop('timeout'), Math.max(0, Date.parse(run.deadlineAt) - this.deps.now().getTime()));
    const renew = setInterval(() => void this.renew(runId, stop), Math.max(250, Math.floor(this.deps.leaseMs / 3)));
    try {
      const text = await this.runSteps(run, version.definition, signal);
      const ended = await endRun(this.transitions, runId, 'success', { result: runResult(text) });
      if (ended) this.deps.logger.info('run finished', { runId, status: 'success' });
    } catch (err) {
      await this.afterError(run, signal, err);
    } finally {
      clearTimeout(deadline);
      clearInterval(renew);
      this.deps.active.unregister(runId, controller);
    }
  }

  /** Extends the lease; a run no longer in progress or held by another stops this execution. */
  private async renew(runId: string, stop: (reason: 'cancelled' | 'lease_lost') => void): Promise<void> {
    try {
      const run = await this.deps.store.runs.update(runId, { leaseExpiresAt: this.iso(this.deps.leaseMs) }, { whenStatus: ['in_progress'] });
      if (!run) stop('cancelled');
      else if (run.leaseOwner !== this.deps.owner) stop('lease_lost');
    } catch (err) {
      // A store hiccup: the next renewal retries; the lease has two more thirds to go.
      this.deps.logger.warn('run lease renewal failed', { runId, errorName: err instanceof Error ? err.name : 'unknown' });
    }
  }

  private async afterError(run: RunRecord, signal: AbortSignal, err: unknown): Promise<void> {
    const reason = stopReasonOf(signal) ?? (err instanceof RunStopped ? err.reason : null);
    if (reason === 'timeout') {
      await this.append(run, [messageItem('system', TIMEOUT_MESSAGE, `${run.id}:error:timeout`)]).catch(() => undefined);
      await endRun(this.transitions, run.id, 'cancelled', { error: TIMEOUT_MESSAGE });
      this.deps.logger.info('run finished', { runId: run.id, status: 'cancelled', reason });
    } else if (reason === 'shutdown') {
      // Hand the run back untouched (and this attempt not counted) so the next process resumes it at once.
      await this.deps.store.runs
        .update(run.id, { leaseOwner: null, leaseExpiresAt: null, attempts: Math.max(0, run.attempts - 1) }, { whenStatus: ['in_progress'] })
        .catch(() => undefined);
    } else if (reason === null) {
      const message = err instanceof Error && err.message ? err.message : 'The run failed.';
      this.deps.logger.warn('run step failed', { runId: run.id, errorName: err instanceof Error ? err.name : 'unknown' });
      await this.fail(run, message);
    }
    // cancelled / lease_lost: someone else already owns the outcome.
  }

  private async fail(run: RunRecord, message: string): Promise<void> {
    await this.append(run, [messageItem('system', `Run failed: ${message}`, `${run.id}:error:${run.revision}`)]).catch(() => undefined);
    const ended = await endRun(this.transitions, run.id, 'failure', { error: message });
    if (ended) this.deps.logger.info('run finished', { runId: run.id, status: 'failure' });
  }

  private async append(run: RunRecord, items: NewConversationItem[]): Promise<ConversationItemRecord[]> {
    return this.deps.store.conversations.append(run.conversationId, items);
  }

  private async runSteps(run: RunRecord, agent: AgentDefinition, signal: AbortSignal): Promise<string | null> {
    const { store } = this.deps;
    const items = await store.conversations.listItems(run.conversationId, { order: 'asc', limit: 10_000 });
    const redactor = this.deps.redactorFor ? await this.deps.redactorFor(run.orgId) : null;
    const ctx: Ctx = {
      run,
      agent,
      signal,
      items: items.filter((i) => !isErrorItem(i)),
      byKey: new Map(items.flatMap((i) => (i.idempotencyKey ? [[i.idempotencyKey, i] as const] : []))),
      redact: redactor ?? ((text) => text),
    };
    if (agent.instructions.trim()) await this.record(ctx, messageItem('system', agent.instructions, `${run.id}:instructions`));
    let last: string | null = null;
    for (let index = 0; index < agent.steps.length; index += 1) {
      const stepNumber = index + 1;
      const assistantKey = `${run.id}:step${stepNumber}:assistant`;
      if (index < run.stepsCompleted) {
        const done = ctx.byKey.get(assistantKey);
        last = done ? itemText(done) : last;
        continue;
      }
      signal.throwIfAborted();
      last = await this.runStep(ctx, index);
      const advanced = await store.runs.update(run.id, { stepsCompleted: stepNumber }, { whenStatus: ['in_progress'] });
      if (!advanced) throw new RunStopped('cancelled');
      if (advanced.leaseOwner !== this.deps.owner) throw new RunStopped('lease_lost');
    }
    return last;
  }

  /** Appends an item (or finds it already there) and keeps the local history in step. */
  private async record(ctx: Ctx, item: NewConversationItem): Promise<ConversationItemRecord> {
    const existing = item.idempotencyKey ? ctx.byKey.get(item.idempotencyKey) : undefined;
    if (existing) return existing;
    const [stored] = await this.append(ctx.run, [item]);
    if (!stored) throw new Error('the conversation store returned no item');
    if (stored.idempotencyKey) ctx.byKey.set(stored.idempotencyKey, stored);
    ctx.items.push(stored);
    return stored;
  }

  private async runStep(ctx: Ctx, index: number): Promise<string> {
    const { run, agent, signal } = ctx;
    const step = agent.steps[index]!;
    const stepNumber = index + 1;
    const key = `${run.id}:step${stepNumber}`;
    const prompt = ctx.redact(renderPrompt(step.prompt, run.inputs, agent.inputs));
    await this.record(ctx, messageItem('user', prompt, `${key}:user`));
    let reply = ctx.byKey.get(`${key}:assistant`);
    for (let round = 0; !reply; round += 1) {
      const completion = await this.chat(run.orgId, { model: agent.model, messages: itemsToChatMessages(ctx.items) }, signal);
      const message = completion.choices[0]?.message;
      const calls = message?.tool_calls ?? [];
      if (calls.length > 0 && round < MAX_TOOL_ROUNDS) {
        // Service tools are not executed here: record each call and say so, then let the model go on.
        for (const [i, call] of calls.entries()) {
          await this.record(ctx, functionCallItem(call, `${key}:round${round}:call${i}`));
          await this.record(ctx, functionCallOutputItem(call.id, TOOL_UNAVAILABLE, `${key}:round${round}:call${i}:output`));
        }
        continue;
      }
      reply = await this.record(ctx, messageItem('assistant', message?.content ?? '', `${key}:assistant`));
    }
    const produced = itemText(reply);
    await this.deps.store.steps.update(
      run.id,
      stepNumber,
      step.objective ? { completed: true } : { completed: true, result: 'not_evaluated', explanation: null },
    );
    if (step.objective) {
      const verdict = await this.judge(run.orgId, agent.model, step.objective, prompt, produced, signal);
      await this.deps.store.steps.update(run.id, stepNumber, { result: verdict.result, explanation: verdict.explanation });
    }
    return produced;
  }

  private async judge(orgId: string, agentModel: string, objective: string, prompt: string, produced: string, signal: AbortSignal): Promise<Verdict> {
    const model = this.deps.config.evaluation.model ?? agentModel;
    try {
      return parseVerdict(await this.chat(orgId, judgeRequest(model, objective, prompt, produced), signal));
    } catch (err) {
      if (signal.aborted) throw err;
      // A judge that cannot be reached leaves the verdict undetermined; the run itself goes on.
      return { result: 'unknown', explanation: `The judge call failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  private async chat(orgId: string, request: ChatCompletionRequest, signal: AbortSignal): Promise<ChatCompletion> {
    signal.throwIfAborted();
    const resolved = this.deps.models.resolve(orgId, request.model);
    return resolved.provider.chat(request, resolved.upstreamModel, { signal });
  }
}
