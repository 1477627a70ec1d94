// The meter of a model call made on behalf of an API request: its duration in
// agw_upstream_request_duration_seconds{provider,model,outcome} and its token usage in ctx.usage (the
// audit plugin turns those into usage records and token metrics per organization, user, key, model).
import { toGatewayError } from '../http/errors';
import type { Metrics } from '../log/metrics';
import type { ModelCallRecord, RequestContext, UsageReport } from '../pipeline/context';
import type { ResolvedModel } from '../providers/types';
import type { Usage } from '../canonical/model';
import type { ModelCallSpan } from '../telemetry/gen-ai';
import { outcomeOf, tokenCount, type ModelCallMeter, type UpstreamOutcome } from './meter';

export class RequestMeter implements ModelCallMeter {
  private readonly started = process.hrtime.bigint();
  private finished = false;
  private usageRecorded = false;
  private readonly record: ModelCallRecord;

  constructor(
    private readonly ctx: RequestContext,
    private readonly metrics: Pick<Metrics, 'upstreamDuration'>,
    private readonly resolved: ResolvedModel,
    /** Writes usage reported after the request finished (the audit plugin has read ctx.usage by then). */
    private readonly lateUsage?: (report: UsageReport) => void,
    /** The call's span (tracing on), ended when the call is. */
    readonly span: ModelCallSpan | null = null,
  ) {
    // The audit record of the request names the model call, whether it succeeds or not.
    this.record = { model: resolved.model.id, provider: resolved.provider.name, errorCode: null };
    ctx.modelCall = this.record;
  }

  usage(usage: Usage): void {
    this.tokens(usage.inputTokens, usage.outputTokens);
  }

  /** The same, from the counts a relayed reply's usage object gave. */
  tokens(promptTokens: number, completionTokens: number): void {
    if (this.usageRecorded) return;
    this.usageRecorded = true;
    this.span?.usage({ inputTokens: tokenCount(promptTokens), outputTokens: tokenCount(completionTokens) });
    const report = { model: this.resolved.model.id, promptTokens: tokenCount(promptTokens), completionTokens: tokenCount(completionTokens) };
    if (this.ctx.finished && this.lateUsage) this.lateUsage(report);
    else this.ctx.usage.push(report);
  }

  finish(outcome: UpstreamOutcome): void {
    if (this.finished) return;
    this.finished = true;
    const seconds = Number(process.hrtime.bigint() - this.started) / 1e9;
    this.metrics.upstreamDuration.labels(this.resolved.provider.name, this.resolved.model.id, outcome).observe(seconds);
    this.span?.end(outcome === 'ok' ? undefined : outcome === 'aborted' ? 'aborted' : (this.record.errorCode ?? outcome));
  }

  fail(err: unknown): void {
    this.record.errorCode = toGatewayError(err).code;
    this.finish(outcomeOf(err, this.ctx.abort));
  }
}
