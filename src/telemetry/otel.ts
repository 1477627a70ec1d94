// The OpenTelemetry side of tracing.ts: a tracer provider of its own (nothing registered globally, so
// one process can hold a traced and an untraced gateway), a batch span processor and the OTLP/HTTP
// exporter (JSON) to `telemetry.otlp.endpoint`. The packages are loaded by startOtlpTracing, on the
// first start of a traced gateway: only type imports here, so an untraced process never loads them.
import type { Attributes as OtelAttributes, Context, Span, SpanKind } from '@opentelemetry/api';
import type { TelemetryOtlpConfig } from '../config/types';
import { activeTrace, tracingStarted, tracingStopped, type ActiveTrace, type Attributes, type SpanKindName, type TraceSpan, type Tracing } from './tracing';

/** The stable attribute name of semantic-conventions' ATTR_ERROR_TYPE. */
const ERROR_TYPE = 'error.type';
/** SpanStatusCode.ERROR of @opentelemetry/api. */
const STATUS_ERROR = 2;

/** SpanKind of @opentelemetry/api (a const enum in its types). */
const KINDS: Record<SpanKindName, SpanKind> = { internal: 0 as SpanKind, server: 1 as SpanKind, client: 2 as SpanKind };

function otelAttributes(attributes: Attributes): OtelAttributes {
  const out: OtelAttributes = {};
  for (const key in attributes) {
    const value = attributes[key];
    if (value !== undefined) out[key] = value as string | number | boolean | string[];
  }
  return out;
}

class OtelSpan implements TraceSpan {
  private ended = false;
  private readonly active: ActiveTrace;

  constructor(
    private readonly span: Span,
    context: Context,
  ) {
    const spanContext = span.spanContext();
    const traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-0${(spanContext.traceFlags & 0xff).toString(16)}`;
    const tracestate = spanContext.traceState?.serialize();
    this.active = tracestate ? { span: this, traceparent, tracestate, context } : { span: this, traceparent, context };
  }

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  get spanId(): string {
    return this.span.spanContext().spanId;
  }

  set(attributes: Attributes): void {
    if (!this.ended) this.span.setAttributes(otelAttributes(attributes));
  }

  fail(errorType: string): void {
    if (this.ended) return;
    this.span.setAttribute(ERROR_TYPE, errorType);
    this.span.setStatus({ code: STATUS_ERROR });
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.span.end();
  }

  run<T>(fn: () => T): T {
    return activeTrace.run(this.active, fn);
  }
}

export async function startOtlpTracing(config: TelemetryOtlpConfig): Promise<Tracing> {
  const [
    { ROOT_CONTEXT, defaultTextMapGetter, defaultTextMapSetter, trace },
    { W3CTraceContextPropagator },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    sdk,
  ] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
  ]);
  const { BasicTracerProvider, BatchSpanProcessor } = sdk;
  const exporter = new OTLPTraceExporter({ url: config.endpoint, headers: { ...config.headers }, timeoutMillis: config.timeoutMs });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: config.exportIntervalMs, exportTimeoutMillis: config.timeoutMs })],
  });
  const tracer = provider.getTracer('agent-gateway');
  const propagator = new W3CTraceContextPropagator();
  tracingStarted();
  let stopped = false;

  const startSpan = (name: string, kind: SpanKindName, attributes: Attributes, parent: Context): TraceSpan => {
    const span = tracer.startSpan(name, { kind: KINDS[kind], attributes: otelAttributes(attributes) }, parent);
    return new OtelSpan(span, trace.setSpan(parent, span));
  };

  return {
    request(name, headers, attributes) {
      const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      return startSpan(name, 'server', attributes, parent);
    },
    start(name, kind, attributes, options) {
      if (options?.parent !== undefined) return startSpan(name, kind, attributes, propagator.extract(ROOT_CONTEXT, options.parent, defaultTextMapGetter));
      const active = options?.root === true ? undefined : activeTrace.getStore();
      return startSpan(name, kind, attributes, (active?.context as Context | undefined) ?? ROOT_CONTEXT);
    },
    context() {
      const active = activeTrace.getStore();
      if (!active) return null;
      const carrier: { traceparent?: string; tracestate?: string } = {};
      propagator.inject(active.context as Context, carrier, defaultTextMapSetter);
      if (carrier.traceparent === undefined) return null;
      return carrier.tracestate === undefined ? { traceparent: carrier.traceparent } : { traceparent: carrier.traceparent, tracestate: carrier.tracestate };
    },
    async shutdown() {
      if (stopped) return;
      stopped = true;
      tracingStopped();
      await provider.shutdown();
    },
  };
}
