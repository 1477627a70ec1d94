// The one model-call path. Every model call (the gateway's chat, completions, messages and Responses
// handlers, agent runs, the step judge, the tool loop) goes through here: the model is resolved for the
// caller's organization, the provider is called through the canonical model (or, on the pass-through
// path, sent the caller's own bytes), and the call is metered (usage, upstream latency, the audit
// record's model-call fields) through the meter its caller supplies.
//
// Policy on gateway requests (field stripping, DLP) is applied to the caller's wire body before it is
// either forwarded or converted (wire-call.ts): what leaves is exactly what was inspected.
import type { ModelRequest, ModelResponse, OptionName, StreamPart } from '../canonical/model';
import type { CallOptions, ModelRouter, Provider, ResolvedModel } from '../providers/types';
import { resolveForKey } from '../providers/key-models';
import type { ModelCallMeter } from './meter';
import type { ModelCallSpan } from '../telemetry/gen-ai';

export interface CallScope {
  orgId: string;
  /** The calling key's model allow-list (null or absent: every model of the organization). */
  keyModels?: readonly string[] | null;
  signal: AbortSignal;
  requestId?: string;
  /** The meter of this call, made once its model resolved. */
  meter(resolved: ResolvedModel): ModelCallMeter;
}

/** A canonical call's plan: what serves it and what of the request the provider will not send. */
export interface CallPlan {
  resolved: ResolvedModel;
  meter: ModelCallMeter;
  /** Request fields (by the caller's names) the provider cannot honour: not sent. */
  dropped: string[];
}

/**
 * The caller's fields the provider will not send: options outside its `honours` or that it cannot
 * send with this request's values (Provider.unhonoured), and fields of the
 * caller's wire with no canonical meaning unless the provider speaks that wire. Named as the caller
 * named them (`fieldNames`, from the format's converter).
 */
export function droppedFields(provider: Provider, request: ModelRequest, fieldNames: Partial<Record<OptionName, string>> = {}): string[] {
  const dropped: string[] = [];
  for (const key of Object.keys(request.options) as OptionName[]) {
    if (request.options[key] !== undefined && !provider.honours.has(key)) dropped.push(fieldNames[key] ?? key);
  }
  for (const key of provider.unhonoured?.(request) ?? []) dropped.push(fieldNames[key] ?? key);
  if (request.extra && provider.extrasOf !== request.extra.format) dropped.push(...Object.keys(request.extra.fields));
  if (!provider.strictTools) {
    const strict = (request.tools ?? []).flatMap((tool, i) => (tool.kind === 'function' && tool.strict === true ? [i] : []));
    if (strict.length > 0) dropped.push(...strict.map((i) => `tools[${i}].strict`));
  }
  return dropped;
}

/**
 * The request as the provider may see it: options it does not honour and fields of another wire removed
 * (what droppedFields reported), so that a dropped field is never sent after all. The same object when
 * nothing is dropped.
 */
export function honouredRequest(provider: Provider, request: ModelRequest): ModelRequest {
  let options = request.options;
  for (const key of Object.keys(options) as OptionName[]) {
    if (options[key] !== undefined && !provider.honours.has(key)) {
      if (options === request.options) options = { ...options };
      delete options[key];
    }
  }
  const foreignExtra = request.extra !== undefined && provider.extrasOf !== request.extra.format;
  if (options === request.options && !foreignExtra) return request;
  const { extra, ...rest } = request;
  return foreignExtra ? { ...rest, options } : { ...rest, options, ...(extra ? { extra } : {}) };
}

export class ModelCalls {
  constructor(readonly models: ModelRouter) {}

  /** Resolves the model (404 model_not_found when unknown or not allowed) and plans the call. */
  plan(scope: CallScope, request: ModelRequest, fieldNames?: Partial<Record<OptionName, string>>): CallPlan {
    const resolved = resolveForKey(this.models, scope.orgId, scope.keyModels, request.model);
    return { resolved, meter: scope.meter(resolved), dropped: droppedFields(resolved.provider, request, fieldNames) };
  }

  /** One non-streamed call, metered. */
  async generate(scope: CallScope, request: ModelRequest, plan: CallPlan = this.plan(scope, request)): Promise<ModelResponse> {
    const { resolved, meter } = plan;
    const span = meter.span ?? null;
    let response: ModelResponse;
    try {
      const call = () => resolved.provider.generate(honouredRequest(resolved.provider, request), resolved.upstreamModel, options(scope));
      // Traced: the upstream request carries this call's span as its traceparent.
      response = await (span ? span.run(call) : call());
    } catch (err) {
      meter.fail(err);
      throw err;
    }
    span?.response(response);
    meter.usage(response.usage);
    meter.finish('ok');
    return response;
  }

  /**
   * One streamed call. Its usage is metered from the `finish` part as it passes; how it ended is the
   * consumer's to report (`plan.meter.finish`/`fail`): only the consumer knows whether its client left.
   * The upstream request is sent on the first `next()`, so a failure before the stream starts surfaces
   * there (handlers await the first part before sending a byte).
   */
  stream(scope: CallScope, request: ModelRequest, plan: CallPlan = this.plan(scope, request)): AsyncIterable<StreamPart> {
    const { resolved, meter } = plan;
    const parts = resolved.provider.stream(honouredRequest(resolved.provider, request), resolved.upstreamModel, options(scope));
    const span = meter.span ?? null;
    return meterUsage(span ? traced(parts, span) : parts, meter);
  }
}

function options(scope: CallScope): CallOptions {
  return scope.requestId === undefined ? { signal: scope.signal } : { signal: scope.signal, requestId: scope.requestId };
}

/**
 * A traced stream: the upstream is read with the call's span active (its request carries the span as
 * its traceparent), and the reply's id, model and finish reason are noted on the span as they pass.
 */
async function* traced(parts: AsyncIterable<StreamPart>, span: ModelCallSpan): AsyncIterable<StreamPart> {
  const iterator = parts[Symbol.asyncIterator]();
  let done = false;
  try {
    for (;;) {
      const next = await span.run(() => iterator.next());
      if (next.done) {
        done = true;
        return;
      }
      const part = next.value;
      if (part.type === 'start') span.response({ id: part.id, model: part.model });
      else if (part.type === 'finish') span.response({ finishReason: part.finishReason });
      yield part;
    }
  } finally {
    if (!done) await iterator.return?.();
  }
}

/** Taps the `finish` part's usage (a stream cut before it meters zero tokens: none were reported). */
async function* meterUsage(parts: AsyncIterable<StreamPart>, meter: ModelCallMeter): AsyncIterable<StreamPart> {
  let reported = false;
  try {
    for await (const part of parts) {
      if (part.type === 'finish') {
        reported = true;
        meter.usage(part.usage);
      }
      yield part;
    }
  } finally {
    if (!reported) meter.usage({ inputTokens: 0, outputTokens: 0 });
  }
}
