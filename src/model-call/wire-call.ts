// A gateway request's model call, from the caller's wire body: policy applied (plugin transforms such
// as field stripping, then DLP), then either the pass-through path (a provider that speaks the
// caller's format natively gets the inspected bytes, the reply is relayed) or the canonical path (the
// format converts the inspected body to a ModelRequest for ModelCalls).
import type { JsonObject, ModelRequest, OptionName, WireFormat } from '../canonical/model';
import type { Redactor, RequestContext, UsageReport } from '../pipeline/context';
import type { UpstreamResponse } from '../providers/http/transport';
import type { ResolvedModel } from '../providers/types';
import type { AppServices } from '../services';
import type { CallPlan, CallScope } from './model-calls';
import { resolveForKey } from '../providers/key-models';
import { RequestMeter } from './request-meter';
import { startModelCallSpan, type ModelCallSpan } from '../telemetry/gen-ai';
import { passThroughBody, transformedCopy } from './upstream-body';
import type { UsageRecord } from '../store/types';
import { budgetGuardOf } from './budget-guard';

/** A caller wire format as the model-call path needs it. */
export interface WireCodec {
  readonly format: WireFormat;
  /** The inspected body → the canonical request, and the caller's name of each option it set. */
  toCanonical(body: JsonObject): { request: ModelRequest; fieldNames: Partial<Record<OptionName, string>> };
  /** DLP on every text of a copy of the body, in place (deep-copying what it edits). */
  redact(copy: JsonObject, redactor: Redactor): void;
  /** Top-level fields that are ours (never forwarded), removed on every path. */
  readonly ownFields?: readonly string[];
}

export type WireCall =
  | { kind: 'forward'; resolved: ResolvedModel; meter: RequestMeter; body: Buffer | string; inspected: JsonObject; detached: boolean }
  | { kind: 'canonical'; resolved: ResolvedModel; meter: RequestMeter; request: ModelRequest; plan: CallPlan; scope: CallScope; inspected: JsonObject };

/** The scope of a gateway request's model calls: its organization, abort signal and request meter. */
export interface RequestScope extends CallScope {
  meter(resolved: ResolvedModel): RequestMeter;
}

/**
 * Usage of a call that outlived its request (a stored response its caller left): the audit plugin wrote
 * the request's records already, so it becomes a usage record of its own, with its token metrics.
 * Fails open like the audit trail.
 */
function writeLateUsage(ctx: RequestContext, services: Pick<AppServices, 'metrics' | 'store' | 'logger' | 'pipeline'>, report: UsageReport): void {
  const principal = ctx.principal;
  if (!principal) return;
  services.metrics.upstreamTokens.labels(principal.orgId, report.model, 'prompt').inc(report.promptTokens);
  services.metrics.upstreamTokens.labels(principal.orgId, report.model, 'completion').inc(report.completionTokens);
  const { cost, ...counts } = report;
  const record: UsageRecord = {
    at: new Date().toISOString(),
    orgId: principal.orgId,
    userId: principal.userId,
    keyId: principal.keyId,
    requestId: ctx.requestId,
    ...counts,
    ...(cost === null ? {} : { cost }),
  };
  budgetGuardOf(services.pipeline)?.record(principal, report);
  services.store.usage.insertMany([record]).catch((err: unknown) => {
    services.logger.warn('late usage record not written', { requestId: ctx.requestId, errorName: err instanceof Error ? err.name : 'unknown' });
  });
}

/**
 * `detached`: the call outlives its caller (a stored response is generated to its end even when the
 * client leaves, to be read or resumed later); it is not aborted by the client's disconnect.
 */
export function requestScope(
  ctx: RequestContext,
  services: Pick<AppServices, 'metrics' | 'store' | 'logger' | 'pipeline'> & Partial<Pick<AppServices, 'tracing'>>,
  detached = false,
): RequestScope {
  const orgId = ctx.principal?.orgId ?? 'default';
  // A detached call's signal is never aborted; made when first read (an AbortController is costly to
  // make, and a stored response's relayed call never reads it).
  let own: AbortSignal | null = null;
  const tracing = services.tracing ?? null;
  return {
    orgId,
    keyModels: ctx.principal?.models ?? null,
    get signal() {
      if (!detached) return ctx.abort.signal;
      return (own ??= new AbortController().signal);
    },
    requestId: ctx.requestId,
    meter: (resolved) =>
      new RequestMeter(ctx, services.metrics, resolved, (report) => writeLateUsage(ctx, services, report), tracing && modelCallSpan(tracing, ctx, resolved)),
  };
}

/** A gateway request's model call span: `text_completion` on the legacy completions path, else `chat`. */
function modelCallSpan(tracing: NonNullable<AppServices['tracing']>, ctx: RequestContext, resolved: ResolvedModel): ModelCallSpan {
  const operation = ctx.route.template === '/v1/completions' ? 'text_completion' : 'chat';
  const target = {
    modelId: resolved.model.id,
    upstreamModel: resolved.upstreamModel,
    providerName: resolved.provider.name,
    providerType: resolved.provider.type,
  };
  return startModelCallSpan(tracing, operation, target);
}

/**
 * Resolves the body's model for the caller and plans its call. `canonical` keeps a call on the
 * canonical path even when the provider speaks the caller's format (the tool loop reads every turn). `stream` is consumed on the canonical
 * path (the handler decides how to call); on the pass-through path it stays in the forwarded bytes.
 */
export function prepareWireCall(
  ctx: RequestContext,
  services: Pick<AppServices, 'modelCalls' | 'metrics' | 'store' | 'logger' | 'pipeline'> & Partial<Pick<AppServices, 'tracing'>>,
  codec: WireCodec,
  body: JsonObject,
  options: { detached?: boolean; canonical?: boolean } = {},
): WireCall {
  const model = body['model'] as string;
  const scope = requestScope(ctx, services, options.detached === true);
  const resolved = resolveForKey(services.modelCalls.models, scope.orgId, scope.keyModels, model);
  const { provider, upstreamModel } = resolved;
  const redactor = ctx.dlp;
  const edit = redactor ? (copy: JsonObject) => codec.redact(copy, redactor) : null;
  const own = codec.ownFields ?? [];
  const strip = own.length > 0 && own.some((field) => field in body) ? (copy: JsonObject) => own.forEach((field) => delete copy[field]) : null;
  const editAll = edit && strip ? (copy: JsonObject) => (strip(copy), edit(copy)) : (edit ?? strip);

  // `canonical`: the gateway must read the call itself (its tool loop runs tools the upstream does not know).
  if (provider.forward && provider.forwards?.includes(codec.format) && options.canonical !== true) {
    const meter = scope.meter(resolved);
    const { bytes, inspected } = passThroughBody(ctx, body, model, upstreamModel, edit, own);
    return { kind: 'forward', resolved, meter, body: bytes, inspected, detached: options.detached === true };
  }
  // Redacted before conversion: the provider gets the translation of what was inspected.
  const { copy } = transformedCopy(ctx, body, editAll);
  const inspected = { ...copy };
  delete copy['stream'];
  const { request, fieldNames } = codec.toCanonical(copy);
  const plan = services.modelCalls.plan(scope, request, fieldNames);
  const meter = plan.meter;
  if (!(meter instanceof RequestMeter)) throw new Error('a request scope makes request meters');
  return { kind: 'canonical', resolved, meter, request, plan, scope, inspected };
}

/** Sends a pass-through call's bytes; a failure is metered before it propagates. */
export async function forwardWireCall(
  ctx: RequestContext,
  call: Extract<WireCall, { kind: 'forward' }>,
  format: WireFormat,
  stream: boolean,
): Promise<UpstreamResponse> {
  const { provider } = call.resolved;
  try {
    if (!provider.forward) throw new Error(`provider ${provider.name} does not forward`);
    const forward = provider.forward.bind(provider);
    const options = { requestId: ctx.requestId, stream };
    const send = () => forward(format, call.body, call.detached ? options : { ...options, signal: ctx.abort });
    // Traced: the upstream request carries the call's span as its traceparent.
    return await (call.meter.span ? call.meter.span.run(send) : send());
  } catch (err) {
    call.meter.fail(err);
    throw err;
  }
}

/** The response header naming request fields the provider could not honour (none: no header). */
export function droppedParamsHeader(dropped: readonly string[]): Record<string, string> | undefined {
  return dropped.length > 0 ? { 'x-gateway-dropped-params': dropped.join(', ') } : undefined;
}
