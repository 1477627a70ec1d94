// The OpenTelemetry side of tracing.ts, loaded only when `telemetry.otlp` is configured: a tracer
// provider of its own (nothing registered globally, so one process can hold a traced and an untraced
// gateway), a batch span processor and the OTLP/HTTP exporter (JSON) to `telemetry.otlp.endpoint`.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, trace, type Attributes as OtelAttributes, type Context, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TelemetryOtlpConfig } from '../config/types';
import { activeTrace, tracingStarted, tracingStopped, type ActiveTrace, type Attributes, type SpanKindName, type TraceSpan, type Tracing } from './tracing';

const KINDS: Record<SpanKindName, SpanKind> = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT, server: SpanKind.SERVER };

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
    parent: Context,
  ) {
    const spanContext = span.spanContext();
    const context = trace.setSpan(parent, span);
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
    this.span.setAttribute(ATTR_ERROR_TYPE, errorType);
    this.span.setStatus({ code: SpanStatusCode.ERROR });
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

export function startOtlpTracing(config: TelemetryOtlpConfig): Tracing {
  const exporter = new OTLPTraceExporter({ url: config.endpoint, headers: { ...config.headers }, timeoutMillis: config.timeoutMs });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: config.exportIntervalMs, exportTimeoutMillis: config.timeoutMs })],
  });
  const tracer = provider.getTracer('agent-gateway');
  const propagator = new W3CTraceContextPropagator();
  tracingStarted();
  let stopped = false;

  const startSpan = (name: string, kind: SpanKindName, attributes: Attributes, parent: Context): TraceSpan =>
    new OtelSpan(tracer.startSpan(name, { kind: KINDS[kind], attributes: otelAttributes(attributes) }, parent), parent);

  return {
    request(name, headers, attributes) {
      const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      return startSpan(name, 'server', attributes, parent);
    },
    start(name, kind, attributes, options) {
      const active = options?.root === true ? undefined : activeTrace.getStore();
      return startSpan(name, kind, attributes, (active?.context as Context | undefined) ?? ROOT_CONTEXT);
    },
    async shutdown() {
      if (stopped) return;
      stopped = true;
      tracingStopped();
      await provider.shutdown();
    },
  };
}
