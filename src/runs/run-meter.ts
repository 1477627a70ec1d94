// The meter of a run's model calls (step turns and judge verdicts), metered like the gateway's own
// calls: a usage record per call attributed to the run's organization, user, key and model, the token
// counters and the upstream latency histogram (what the audit plugin and RequestMeter do for API calls).
import type { Logger } from 'winston';
import type { Usage } from '../canonical/model';
import type { Metrics } from '../log/metrics';
import { toGatewayError } from '../http/errors';
import type { ModelCallSpan } from '../telemetry/gen-ai';
import { outcomeOf, tokenCount, type ModelCallMeter, type UpstreamOutcome } from '../model-call/meter';
import type { ResolvedModel } from '../providers/types';
import type { Store } from '../store/port';
import type { RunRecord } from '../store/types';

export interface RunMeterDeps {
  store: Store;
  metrics: Metrics;
  logger: Logger;
  now(): Date;
}

export type MeteredRun = Pick<RunRecord, 'id' | 'orgId' | 'userId' | 'keyId'>;

export class RunMeter implements ModelCallMeter {
  private readonly started = process.hrtime.bigint();
  private finished = false;
  private usageRecorded = false;
  /** The usage record's write, awaited by `written()` (a step does not wait on it otherwise). */
  private pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: RunMeterDeps,
    private readonly run: MeteredRun,
    private readonly resolved: ResolvedModel,
    private readonly signal: AbortSignal,
    /** The call's span (tracing on), ended when the call is. */
    readonly span: ModelCallSpan | null = null,
  ) {}

  /** The stable code of the error the call failed with, for its span. */
  private errorCode: string | null = null;

  usage(usage: Usage): void {
    if (this.usageRecorded) return;
    this.usageRecorded = true;
    const { deps, run } = this;
    const model = this.resolved.model.id;
    const promptTokens = tokenCount(usage.inputTokens);
    const completionTokens = tokenCount(usage.outputTokens);
    this.span?.usage({ inputTokens: promptTokens, outputTokens: completionTokens });
    deps.metrics.upstreamTokens.labels(run.orgId, model, 'prompt').inc(promptTokens);
    deps.metrics.upstreamTokens.labels(run.orgId, model, 'completion').inc(completionTokens);
    // Not fenced by the run's lease: the tokens were spent whoever holds the run now. Fails open like the
    // audit trail: a store hiccup does not fail the step whose reply is already here.
    this.pending = deps.store.usage
      .insertMany([
        { at: deps.now().toISOString(), orgId: run.orgId, userId: run.userId, keyId: run.keyId, model, promptTokens, completionTokens, requestId: run.id },
      ])
      .catch((err: unknown) => {
        deps.logger.warn('run usage record not written', { runId: run.id, errorName: err instanceof Error ? err.name : 'unknown' });
      });
  }

  finish(outcome: UpstreamOutcome): void {
    if (this.finished) return;
    this.finished = true;
    const seconds = Number(process.hrtime.bigint() - this.started) / 1e9;
    this.deps.metrics.upstreamDuration.labels(this.resolved.provider.name, this.resolved.model.id, outcome).observe(seconds);
    this.span?.end(outcome === 'ok' ? undefined : outcome === 'aborted' ? 'aborted' : (this.errorCode ?? outcome));
  }

  fail(err: unknown): void {
    if (this.span) this.errorCode = toGatewayError(err).code;
    this.finish(outcomeOf(err, this.signal));
  }

  /** Resolves once the usage record is written (or its failure logged). */
  written(): Promise<void> {
    return this.pending;
  }
}
