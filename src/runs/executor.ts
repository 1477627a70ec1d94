// Executes a run: the agent version's steps in order as model turns in the run's conversation, judged
// after each step that has an objective. Safe to call for any run id at any time, from any process:
// it takes the run's lease first (someone else executing it: returns at once), continues from
// `stepsCompleted`, and every conversation item carries an idempotency key, so a step executed again
// after a crash never appends twice (a reply already recorded is reused instead of asking the model again).
//
// Exactly one execution at a time. In one process: a run already executing here is never started a
// second time (ActiveRuns.claim), whatever the lease says (an event loop stalled past the lease makes
// it look expired to this process's own recovery sweep). Across processes: a lease taken over bumps the
// run's lease generation, and every write of an execution (items, step rows, the run row) is fenced by
// the generation it took, checked by the store in the write itself; before each model call the
// execution extends its lease through such a write, so one whose lease was taken over while it was
// stalled stops before it calls the model or writes anything.
import type { Logger } from 'winston';
import type { GatewayConfig } from '../config/types';
import type { Metrics } from '../log/metrics';
import { assembleResponse, responseText, responseToParts } from '../canonical/assemble';
import type { JsonObject, ModelRequest, ModelResponse, StreamPart, ToolCallPart, ToolDefinition } from '../canonical/model';
import { toolsToCanonical } from '../formats/responses/request-tools';
import { isGatewayError } from '../http/errors';
import type { ToolCallResult, ToolJournal, ToolLoop, ToolLoopScope } from '../tools/loop';
import type { BudgetGuard } from '../model-call/budget-guard';
import type { ModelCalls } from '../model-call/model-calls';
import type { ResolvedModel } from '../providers/types';
import type { ResponseEventLog, LiveEvents } from '../responses';
import type { Store } from '../store/port';
import { LeaseLostError, type AgentDefinition, type ConversationItemRecord, type LeaseFence, type NewConversationItem, type RunRecord } from '../store/types';
import { ActiveRuns, RunStopped, stopReasonOf } from './active-runs';
import { renderPrompt } from './inputs';
import { functionCallItem, itemText, itemsToMessages, messageItem, runResult, serverCallItem } from './items';
import { judgeRequest, parseVerdict, type Verdict } from './judge';
import { RunMeter } from './run-meter';
import { endRunResponse, invocationOf, type ResponsesInvocation } from './run-response';
import { RunResponseStream } from './run-response-stream';
import { runErrorOf, type RunError } from './run-errors';
import { endRun, TIMEOUT_ERROR, type TransitionDeps } from './transitions';
import { GEN_AI_AGENT_ID, GEN_AI_AGENT_NAME, GEN_AI_CONVERSATION_ID, GEN_AI_OPERATION_NAME, startModelCallSpan } from '../telemetry/gen-ai';
import type { TraceContext, TraceSpan, Tracing } from '../telemetry/tracing';

/** Redacts prompt text per the organization's DLP policy (null: the policy is off). */
export type Redactor = (text: string) => string;
export type RedactorFactory = (orgId: string) => Promise<Redactor | null>;

export interface ExecutorDeps {
  store: Store;
  modelCalls: ModelCalls;
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
  /** The DLP hook: the organization's redactor, applied to step prompts and tool outputs before they leave. */
  redactorFor?: RedactorFactory;
  /** The server-side tool loop (the agent's hosted and MCP tools). */
  tools: ToolLoop;
  /** Tracing (null or absent: off): a span per execution, per step, per model and tool call. */
  tracing?: Tracing | null;
  /** Token and cost budgets (the budgets plugin): every model call of a run is admitted first. */
  budgets?: BudgetGuard | null;
  /**
   * Where runs started through the Responses interface (`model: agent/<id>`) write their response's
   * events (run-response-stream.ts). Without it such runs execute all the same, unstreamed.
   */
  responseEvents?: { log: ResponseEventLog; live: LiveEvents };
}

/** What a model that calls a tool the gateway does not run is told (the run goes on). */
const TOOL_UNAVAILABLE = 'This tool is not available to agent runs on this gateway.';

interface Ctx {
  run: RunRecord;
  fence: LeaseFence;
  agent: AgentDefinition;
  signal: AbortSignal;
  /** Items already in the conversation by idempotency key (re-execution reuses them). */
  byKey: Map<string, ConversationItemRecord>;
  items: ConversationItemRecord[];
  redact: Redactor;
  /** Whether the run's organization has a DLP policy (then tool outputs are redacted too). */
  hasRedactor: boolean;
  /** The run's Responses stream (runs started with `model: agent/<id>`), else null. */
  stream: RunResponseStream | null;
}

function isErrorItem(item: ConversationItemRecord): boolean {
  return item.idempotencyKey?.includes(':error:') ?? false;
}

/**
 * The agent's tools the gateway runs (hosted svc_* and MCP, as Responses tool objects); its function
 * tools are left out: a run has no caller to answer them.
 */
function serverTools(tools: readonly Record<string, unknown>[]): ToolDefinition[] {
  return toolsToCanonical(tools as JsonObject[]).filter((tool) => tool.kind === 'hosted' || tool.kind === 'mcp');
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

  /**
   * Executes or continues the run if it is in progress and nobody else holds it; `trace` (its job's,
   * tracing on): the trigger's trace context, which the execution's span joins.
   */
  async execute(runId: string, trace?: TraceContext): Promise<void> {
    // Claimed before anything else, synchronously: a second job for a run executing here returns at once.
    const controller = this.deps.active.claim(runId);
    if (!controller) {
      this.deps.logger.info('run already executing in this process; job dropped', { runId });
      return;
    }
    try {
      await this.executeClaimed(runId, controller, trace);
    } finally {
      this.deps.active.unregister(runId, controller);
    }
  }

  private async executeClaimed(runId: string, controller: AbortController, trace: TraceContext | undefined): Promise<void> {
    const { store } = this.deps;
    const current = await store.runs.get(runId);
    if (!current || current.status !== 'in_progress') return;
    if (Date.parse(current.deadlineAt) <= this.deps.now().getTime()) {
      const ended = await endRun(this.transitions, runId, 'cancelled', TIMEOUT_ERROR);
      if (ended) await this.endResponse(ended);
      return;
    }
    const run = await store.runs.acquireLease(runId, this.deps.owner, this.iso(this.deps.leaseMs), this.iso());
    if (!run) return;
    const fence: LeaseFence = { runId, generation: run.leaseGeneration };
    if (run.attempts > this.maxAttempts) {
      const message = `The run was interrupted ${run.attempts - 1} times (its worker stopped or crashed) and was not resumed again.`;
      await this.fail(run, fence, { code: 'interrupted', message });
      return;
    }
    const version = await store.agents.getVersion(run.agentId, run.agentVersion);
    if (!version) {
      await this.fail(run, fence, { code: 'agent_version_missing', message: `Version ${run.agentVersion} of the agent no longer exists.` });
      return;
    }
    const { signal } = controller;
    const stop = (reason: ConstructorParameters<typeof RunStopped>[0]): void => {
      if (!signal.aborted) controller.abort(new RunStopped(reason));
    };
    const deadline = setTimeout(() => stop('timeout'), Math.max(0, Date.parse(run.deadlineAt) - this.deps.now().getTime()));
    const renew = setInterval(() => void this.renew(fence, stop), Math.max(250, Math.floor(this.deps.leaseMs / 3)));
    let stream: RunResponseStream | null = null;
    const span = this.executionSpan(run, version.definition, trace);
    try {
      stream = await this.openStream(run);
      const steps = () => this.runSteps(run, fence, version.definition, signal, stream);
      const text = await (span ? span.run(steps) : steps());
      const ended = await endRun(this.transitions, runId, 'success', { result: runResult(text) }, fence.generation);
      if (ended) this.deps.logger.info('run finished', { runId, status: 'success' });
      await this.settle(stream, ended ? (s) => s.complete(text) : null);
    } catch (err) {
      span?.fail(stopReasonOf(signal) ?? (err instanceof RunStopped ? err.reason : err instanceof LeaseLostError ? 'lease_lost' : runErrorOf(err).code));
      await this.afterError(run, fence, signal, err, stream);
    } finally {
      span?.end();
      clearTimeout(deadline);
      clearInterval(renew);
    }
  }

  /**
   * The span of one execution of a run, `invoke_agent {agent name}`, the parent of its steps' spans: a
   * child of the trigger's span when the job carried its trace context (the request that started the
   * run, a retry's), else (a schedule, a run recovered by a sweep) the root of its own trace, never a
   * child of whatever span happens to be active here. Null when tracing is off.
   */
  private executionSpan(run: RunRecord, agent: AgentDefinition, trace: TraceContext | undefined): TraceSpan | null {
    const tracing = this.deps.tracing;
    if (!tracing) return null;
    // One run is one job, consumed alone: parent-child, as OpenTelemetry's messaging conventions allow for a single message (links are for batches).
    return tracing.start(
      `invoke_agent ${agent.name}`,
      'internal',
      {
        [GEN_AI_OPERATION_NAME]: 'invoke_agent',
        [GEN_AI_AGENT_ID]: run.agentId,
        [GEN_AI_AGENT_NAME]: agent.name,
        [GEN_AI_CONVERSATION_ID]: run.conversationId,
        'agw.run.id': run.id,
        'agw.run.attempt': run.attempts,
        'agw.run.trigger': run.trigger,
        'agw.org_id': run.orgId,
      },
      trace ? { parent: trace } : { root: true },
    );
  }

  /**
   * Extends the lease through a write fenced by this execution's generation: null when the run ended
   * or its lease was taken over (then this execution must stop).
   */
  private async extendLease(fence: LeaseFence): Promise<RunRecord | null> {
    return this.deps.store.runs.update(
      fence.runId,
      { leaseExpiresAt: this.iso(this.deps.leaseMs) },
      { whenStatus: ['in_progress'], whenGeneration: fence.generation },
    );
  }

  /** The periodic renewal: a run ended or taken over stops this execution. */
  private async renew(fence: LeaseFence, stop: (reason: 'cancelled' | 'lease_lost') => void): Promise<void> {
    try {
      if (await this.extendLease(fence)) return;
      const now = await this.deps.store.runs.get(fence.runId);
      stop(now?.status === 'in_progress' ? 'lease_lost' : 'cancelled');
    } catch (err) {
      // A store hiccup: the next renewal retries; the lease has two more thirds to go.
      this.deps.logger.warn('run lease renewal failed', { runId: fence.runId, errorName: err instanceof Error ? err.name : 'unknown' });
    }
  }

  /** The Responses stream of a run started through the Responses interface (null otherwise). */
  private async openStream(run: RunRecord): Promise<RunResponseStream | null> {
    const events = this.deps.responseEvents;
    if (!events || run.trigger !== 'responses') return null;
    return RunResponseStream.open({ responses: this.deps.store.responses, log: events.log, logger: this.deps.logger }, run);
  }

  /**
   * Ends or leaves the run's Responses stream after the run's outcome is decided: `end` when this
   * execution ended the run, else the stream only stores what it wrote (whoever ended the run ended
   * the response). Never throws: the run's outcome stands whatever happens to its stream.
   */
  private async settle(stream: RunResponseStream | null, end: ((stream: RunResponseStream) => Promise<void>) | null): Promise<void> {
    if (!stream) return;
    try {
      await (end ? end(stream) : stream.stop());
    } catch (err) {
      this.deps.logger.warn('run response could not be ended', { responseId: stream.id, errorName: err instanceof Error ? err.name : 'unknown' });
    }
  }

  /** The response of a run this execution ended without having opened its stream (it failed first). */
  private async endResponse(run: RunRecord): Promise<void> {
    const events = this.deps.responseEvents;
    if (!events) return;
    await endRunResponse({ responses: this.deps.store.responses, live: events.live, logger: this.deps.logger }, run, this.deps.now());
  }

  private async afterError(run: RunRecord, fence: LeaseFence, signal: AbortSignal, err: unknown, stream: RunResponseStream | null): Promise<void> {
    const reason = stopReasonOf(signal) ?? (err instanceof RunStopped ? err.reason : err instanceof LeaseLostError ? 'lease_lost' : null);
    if (reason === 'timeout') {
      await this.append(run, fence, [messageItem('system', TIMEOUT_ERROR.error.message, `${run.id}:error:timeout`)]).catch(() => undefined);
      const ended = await endRun(this.transitions, run.id, 'cancelled', TIMEOUT_ERROR, fence.generation);
      this.deps.logger.info('run finished', { runId: run.id, status: 'cancelled', reason });
      await this.settle(stream, ended ? (s) => s.fail(TIMEOUT_ERROR.error) : null);
    } else if (reason === 'shutdown') {
      // Hand the run back untouched (and this attempt not counted) so the next process resumes it at
      // once; its response's events stored first, so the next execution numbers on after them.
      await this.settle(stream, null);
      await this.deps.store.runs
        .update(
          run.id,
          { leaseOwner: null, leaseExpiresAt: null, attempts: Math.max(0, run.attempts - 1) },
          { whenStatus: ['in_progress'], whenGeneration: fence.generation },
        )
        .catch(() => undefined);
    } else if (reason === 'lease_lost') {
      this.deps.logger.info('run lease taken over; this execution stopped', { runId: run.id });
      await this.settle(stream, null);
    } else if (reason === null) {
      this.deps.logger.warn('run step failed', { runId: run.id, errorName: err instanceof Error ? err.name : 'unknown' });
      await this.fail(run, fence, runErrorOf(err), stream);
    } else {
      // cancelled: whoever cancelled owns the outcome (and ended the response).
      await this.settle(stream, null);
    }
  }

  private async fail(run: RunRecord, fence: LeaseFence, error: RunError, stream: RunResponseStream | null = null): Promise<void> {
    await this.append(run, fence, [messageItem('system', `Run failed: ${error.message}`, `${run.id}:error:${run.revision}`)]).catch(() => undefined);
    const ended = await endRun(this.transitions, run.id, 'failure', { error }, fence.generation);
    if (ended) this.deps.logger.info('run finished', { runId: run.id, status: 'failure', code: error.code });
    if (stream) await this.settle(stream, ended ? (s) => s.fail(error) : null);
    else if (ended) await this.endResponse(ended);
  }

  private async append(run: RunRecord, fence: LeaseFence, items: NewConversationItem[]): Promise<ConversationItemRecord[]> {
    return this.deps.store.conversations.append(run.conversationId, items, fence);
  }

  private async runSteps(
    run: RunRecord,
    fence: LeaseFence,
    agent: AgentDefinition,
    signal: AbortSignal,
    stream: RunResponseStream | null,
  ): Promise<string | null> {
    const { store } = this.deps;
    const items = await store.conversations.listItems(run.conversationId, { order: 'asc', limit: 10_000 });
    // Per run: the executor runs several runs at once, of different organizations.
    const redactor = this.deps.redactorFor ? await this.deps.redactorFor(run.orgId) : null;
    const ctx: Ctx = {
      run,
      fence,
      agent,
      signal,
      items: items.filter((i) => !isErrorItem(i)),
      byKey: new Map(items.flatMap((i) => (i.idempotencyKey ? [[i.idempotencyKey, i] as const] : []))),
      redact: redactor ?? ((text) => text),
      hasRedactor: redactor !== null,
      stream,
    };
    const invocation = await this.invocation(run);
    // The caller's instructions (Responses `instructions`) come after the agent's own prompt.
    const system = [agent.instructions, invocation.instructions === undefined ? '' : ctx.redact(invocation.instructions)].filter((text) => text.trim());
    if (system.length > 0) await this.record(ctx, messageItem('system', system.join('\n\n'), `${run.id}:instructions`));
    if (invocation.message !== undefined) await this.record(ctx, messageItem('user', ctx.redact(invocation.message), `${run.id}:input`));
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
      last = await this.tracedStep(ctx, index);
      const advanced = await store.runs.update(run.id, { stepsCompleted: stepNumber }, { whenStatus: ['in_progress'], whenGeneration: fence.generation });
      if (!advanced) throw new RunStopped('lease_lost');
    }
    return last;
  }

  /** What a Responses request added to the run (runs started otherwise: nothing). */
  private async invocation(run: RunRecord): Promise<ResponsesInvocation> {
    if (run.trigger !== 'responses') return {};
    const conversation = await this.deps.store.conversations.get(run.conversationId);
    return conversation ? invocationOf(conversation.metadata) : {};
  }

  /** Appends an item (or finds it already there) and keeps the local history in step. */
  private async record(ctx: Ctx, item: NewConversationItem): Promise<ConversationItemRecord> {
    const existing = item.idempotencyKey ? ctx.byKey.get(item.idempotencyKey) : undefined;
    if (existing) return existing;
    const [stored] = await this.append(ctx.run, ctx.fence, [item]);
    if (!stored) throw new Error('the conversation store returned no item');
    if (stored.idempotencyKey) ctx.byKey.set(stored.idempotencyKey, stored);
    ctx.items.push(stored);
    return stored;
  }

  /** A step under its own span (`run_step {number}`, child of the execution's) when tracing is on. */
  private async tracedStep(ctx: Ctx, index: number): Promise<string> {
    const tracing = this.deps.tracing;
    if (!tracing) return this.runStep(ctx, index, null);
    const span = tracing.start(`run_step ${index + 1}`, 'internal', { 'agw.run.id': ctx.run.id, 'agw.run.step.number': index + 1 });
    try {
      return await span.run(() => this.runStep(ctx, index, span));
    } catch (err) {
      span.fail(err instanceof RunStopped ? err.reason : err instanceof LeaseLostError ? 'lease_lost' : runErrorOf(err).code);
      throw err;
    } finally {
      span.end();
    }
  }

  private async runStep(ctx: Ctx, index: number, span: TraceSpan | null): Promise<string> {
    const { run, agent } = ctx;
    const step = agent.steps[index]!;
    const stepNumber = index + 1;
    const key = `${run.id}:step${stepNumber}`;
    const prompt = ctx.redact(renderPrompt(step.prompt, run.inputs, agent.inputs));
    await this.record(ctx, messageItem('user', prompt, `${key}:user`));
    let reply = ctx.byKey.get(`${key}:assistant`);
    if (!reply) {
      const answer = await this.stepTurns(ctx, key);
      reply = await this.record(ctx, messageItem('assistant', answer, `${key}:assistant`));
    }
    const produced = itemText(reply);
    await this.deps.store.steps.update(
      run.id,
      stepNumber,
      step.objective ? { completed: true } : { completed: true, result: 'not_evaluated', explanation: null },
      ctx.fence,
    );
    if (step.objective) {
      const verdict = await this.judge(ctx, step.objective, prompt, produced);
      span?.set({ 'agw.run.step.verdict': verdict.result });
      await this.deps.store.steps.update(run.id, stepNumber, { result: verdict.result, explanation: verdict.explanation }, ctx.fence);
    }
    return produced;
  }

  /**
   * The step's model turns through the tool loop (src/tools/loop.ts): the agent's hosted and MCP tools
   * offered and run, each call and result kept in the run's conversation under its idempotency key, so
   * a step executed again after a crash reuses the recorded turns and never runs a completed call
   * twice. The agent's function tools are not offered (a run has no caller to answer them); a call of
   * a tool the gateway does not run is answered "not available" and the model goes on.
   */
  private async stepTurns(ctx: Ctx, key: string): Promise<string> {
    const { run, agent } = ctx;
    const loop = this.deps.tools;
    // Earlier rounds of this step (a re-execution) come back through the journal, not the history.
    const history = ctx.items.filter((item) => !item.idempotencyKey?.startsWith(`${key}:round`));
    const request: ModelRequest = { model: agent.model, messages: itemsToMessages(history), tools: serverTools(agent.tools), options: {} };
    const scope: ToolLoopScope = {
      orgId: run.orgId,
      userId: run.userId,
      conversationId: run.conversationId,
      runId: run.id,
      requestId: run.id,
      signal: ctx.signal,
      redact: ctx.hasRedactor ? ctx.redact : null,
      journal: this.journal(ctx, key),
      unknownCalls: TOOL_UNAVAILABLE,
    };
    const plan = await loop.prepare(request, scope);
    ctx.stream?.offer((name, callId) => plan.serverTools(name, callId));
    const out: { lastResponse?: ModelResponse } = {};
    const parts = loop.run(plan, (turn) => this.turnParts(ctx, turn, ctx.stream !== null), scope, out);
    for await (const part of ctx.stream ? ctx.stream.tap(parts) : parts) {
      if (part.type === 'error') throw part.error;
    }
    return out.lastResponse ? responseText(out.lastResponse) : '';
  }

  /** The loop's memory of a step in the run's conversation (see ToolJournal). */
  private journal(ctx: Ctx, key: string): ToolJournal {
    const callKey = (round: number, i: number): string => `${key}:round${round}:call${i}`;
    const recorded = (round: number): ToolCallPart[] => {
      const calls: ToolCallPart[] = [];
      for (let i = 0; ; i += 1) {
        const item = ctx.byKey.get(callKey(round, i));
        if (!item) return calls;
        calls.push({ type: 'tool-call', id: String(item.data['call_id']), name: String(item.data['name']), arguments: String(item.data['arguments']) });
      }
    };
    return {
      recall: (round) => {
        const calls = recorded(round);
        if (calls.length === 0) return Promise.resolve(null);
        const results = new Map<string, ToolCallResult>();
        calls.forEach((call, i) => {
          const item = ctx.byKey.get(`${callKey(round, i)}:output`);
          if (!item) return;
          const error = item.data['error'];
          results.set(
            call.id,
            typeof error === 'string' ? { status: 'failed', output: error } : { status: 'completed', output: String(item.data['output'] ?? '') },
          );
        });
        const response: ModelResponse = {
          id: '',
          model: ctx.agent.model,
          created: 0,
          content: calls,
          finishReason: 'tool_calls',
          usage: { inputTokens: 0, outputTokens: 0 },
        };
        return Promise.resolve({ response, results });
      },
      recordTurn: async (round, response) => {
        const calls = response.content.filter((part): part is ToolCallPart => part.type === 'tool-call');
        for (const [i, call] of calls.entries()) await this.record(ctx, functionCallItem(call, callKey(round, i)));
      },
      recordResult: async (round, call, result, via) => {
        const i = recorded(round).findIndex((c) => c.id === call.id);
        await this.record(ctx, serverCallItem(call, result, `${callKey(round, i)}:output`, via));
      },
    };
  }

  /**
   * One model call of this execution as parts, metered to the run; streamed from the upstream when
   * `streamed` (a run started through the Responses interface shows its turns as they come). The
   * lease is extended through a fenced write first: an execution whose lease was taken over (it
   * stalled past the lease) stops here instead of asking the model a second time beside the
   * execution that took over.
   */
  private async *turnParts(ctx: Ctx, request: ModelRequest, streamed: boolean, purpose?: 'judge'): AsyncGenerator<StreamPart> {
    ctx.signal.throwIfAborted();
    if (!(await this.extendLease(ctx.fence))) throw new RunStopped('lease_lost');
    ctx.signal.throwIfAborted();
    // A run whose organization, user or key has used up a budget fails here, before the upstream call.
    await this.deps.budgets?.admit({ orgId: ctx.run.orgId, userId: ctx.run.userId, keyId: ctx.run.keyId });
    let meter: RunMeter | null = null;
    const scope = {
      orgId: ctx.run.orgId,
      signal: ctx.signal,
      requestId: ctx.run.id,
      meter: (resolved: ResolvedModel) => (meter = new RunMeter(this.deps, ctx.run, resolved, ctx.signal, this.modelCallSpan(resolved, purpose))),
    };
    try {
      if (!streamed) {
        yield* responseToParts(await this.deps.modelCalls.generate(scope, request));
        return;
      }
      const plan = this.deps.modelCalls.plan(scope, request);
      try {
        yield* this.deps.modelCalls.stream(scope, request, plan);
        plan.meter.finish('ok');
      } catch (err) {
        plan.meter.fail(err);
        throw err;
      }
    } finally {
      // The usage record is written before the step goes on (what it cost is on record when it ends).
      await (meter as RunMeter | null)?.written();
    }
  }

  /** A run's model call span (tracing on): a step turn's, or the judge's. */
  private modelCallSpan(resolved: ResolvedModel, purpose: 'judge' | undefined): ReturnType<typeof startModelCallSpan> | null {
    const tracing = this.deps.tracing;
    if (!tracing) return null;
    const target = {
      modelId: resolved.model.id,
      upstreamModel: resolved.upstreamModel,
      providerName: resolved.provider.name,
      providerType: resolved.provider.type,
    };
    return startModelCallSpan(tracing, 'chat', target, purpose);
  }

  private async judge(ctx: Ctx, objective: string, prompt: string, produced: string): Promise<Verdict> {
    const model = this.deps.config.evaluation.model ?? ctx.agent.model;
    try {
      return parseVerdict(await this.call(ctx, judgeRequest(model, objective, prompt, produced)));
    } catch (err) {
      if (ctx.signal.aborted || err instanceof RunStopped || err instanceof LeaseLostError) throw err;
      // Over budget: the run fails with it, as its next model call would.
      if (isGatewayError(err) && err.code === 'budget_exceeded') throw err;
      // A judge that cannot be reached leaves the verdict undetermined; the run itself goes on.
      return { result: 'unknown', explanation: `The judge call failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  /** One whole model call of this execution (the judge's), metered to the run (see turnParts). */
  private call(ctx: Ctx, request: ModelRequest): Promise<ModelResponse> {
    return assembleResponse(this.turnParts(ctx, request, false, 'judge'));
  }
}
