// Bookkeeping of one upstream call made on behalf of a request: its duration in
// agw_upstream_request_duration_seconds{provider,model,outcome} and its token usage in ctx.usage (the
// audit plugin turns those into usage records and token metrics per organization, user, key, model).
import { isGatewayError, toGatewayError } from '../../http/errors';
import type { ModelCallRecord, RequestContext } from '../../pipeline/context';
import type { ResolvedModel } from '../../providers/types';
import type { AppServices } from '../../services';

export type UpstreamOutcome = 'ok' | 'error' | 'timeout' | 'aborted';

export function outcomeOf(err: unknown, signal: { readonly aborted: boolean }): UpstreamOutcome {
  if (signal.aborted) return 'aborted';
  if (isGatewayError(err) && err.code === 'upstream_timeout') return 'timeout';
  return 'error';
}

/** Usage columns are 32-bit integers. */
const MAX_TOKENS = 2_147_483_647;

/**
 * A token count as reported by an upstream, made a count: a fraction rounded, a negative or non-finite
 * number (JSON's 1e400 parses to Infinity) 0, a huge one capped. One bad value written as it came would
 * fail its whole batch of usage and audit records in the store, again at every retry.
 */
export function tokenCount(reported: number): number {
  return Number.isFinite(reported) && reported > 0 ? Math.min(Math.round(reported), MAX_TOKENS) : 0;
}

export class UpstreamCall {
  private readonly started = process.hrtime.bigint();
  private finished = false;
  private usageRecorded = false;
  private readonly record: ModelCallRecord;

  constructor(
    private readonly ctx: RequestContext,
    private readonly services: AppServices,
    private readonly resolved: ResolvedModel,
  ) {
    // The audit record of the request names the model call, whether it succeeds or not.
    this.record = { model: resolved.model.id, provider: resolved.provider.name, errorCode: null };
    ctx.modelCall = this.record;
  }

  usage(promptTokens: number, completionTokens: number): void {
    if (this.usageRecorded) return;
    this.usageRecorded = true;
    this.ctx.usage.push({ model: this.resolved.model.id, promptTokens: tokenCount(promptTokens), completionTokens: tokenCount(completionTokens) });
  }

  finish(outcome: UpstreamOutcome): void {
    if (this.finished) return;
    this.finished = true;
    const seconds = Number(process.hrtime.bigint() - this.started) / 1e9;
    this.services.metrics.upstreamDuration.labels(this.resolved.provider.name, this.resolved.model.id, outcome).observe(seconds);
  }

  fail(err: unknown): void {
    this.record.errorCode = toGatewayError(err).code;
    this.finish(outcomeOf(err, this.ctx.abort));
  }
}
