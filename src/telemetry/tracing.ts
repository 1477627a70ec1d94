// Tracing (OpenTelemetry, GenAI semantic conventions), off unless `telemetry.otlp` is configured. The
// rest of the service sees only the small interfaces below; the OpenTelemetry packages are loaded by
// startOtlpTracing (otel.ts) when tracing is configured, never otherwise. With tracing off every call site
// holds `null` and does no span work: no span objects, no context switch, no header parsing.
//
// The active span is carried in one AsyncLocalStorage of this module (not OpenTelemetry's global
// context manager), so the upstream transport can give every provider call the W3C `traceparent` of
// the model call it serves without knowing which gateway instance started tracing.
import { AsyncLocalStorage } from 'node:async_hooks';

export type AttributeValue = string | number | boolean | readonly string[];
export type Attributes = Readonly<Record<string, AttributeValue | undefined>>;

/** A started span. Attributes are identifiers, names and counts only: never prompt, completion or key text. */
export interface TraceSpan {
  /** 32 lowercase hex digits. */
  readonly traceId: string;
  /** 16 lowercase hex digits. */
  readonly spanId: string;
  set(attributes: Attributes): void;
  /** Marks the span failed: `error.type` (a stable, low-cardinality code) and status ERROR. */
  fail(errorType: string): void;
  /** Ends the span (later calls are ignored). */
  end(): void;
  /** Runs `fn` with this span active: spans started inside are its children, upstream calls carry it. */
  run<T>(fn: () => T): T;
}

export type SpanKindName = 'internal' | 'client' | 'server';

/**
 * A span's W3C trace context as headers, to carry with work that goes on later or in another process
 * (a queued run's job): plain strings, so it survives any serialization.
 */
export interface TraceContext {
  readonly traceparent: string;
  readonly tracestate?: string;
}

export interface Tracing {
  /**
   * The server span of an incoming request, child of the caller's `traceparent` when it is valid
   * (W3C trace context), else a new trace.
   */
  request(name: string, headers: Readonly<Record<string, string | string[] | undefined>>, attributes: Attributes): TraceSpan;
  /**
   * A span child of the active one (none active, or `root`: a new trace); with `parent`, a child of
   * that carried context instead (when it is not a valid W3C trace context: a new trace).
   */
  start(name: string, kind: SpanKindName, attributes: Attributes, options?: { root?: boolean; parent?: TraceContext }): TraceSpan;
  /** The W3C trace context of the active span (none active: null), to carry with work done later. */
  context(): TraceContext | null;
  /** Exports what is still buffered and stops. */
  shutdown(): Promise<void>;
}

/** What the active span leaves for upstream calls: its W3C trace context headers. */
export interface ActiveTrace {
  readonly span: TraceSpan;
  readonly traceparent: string;
  readonly tracestate?: string;
  /** The OpenTelemetry context (opaque outside otel.ts). */
  readonly context: unknown;
}

export const activeTrace = new AsyncLocalStorage<ActiveTrace>();

/** Started tracings in this process; while none runs, nothing reads the AsyncLocalStorage. */
let running = 0;

export function tracingStarted(): void {
  running += 1;
}

export function tracingStopped(): void {
  running = Math.max(0, running - 1);
}

/** The trace context headers an upstream call carries: those of the active span, else none. */
export function upstreamTraceHeaders(): { traceparent: string; tracestate?: string } | null {
  if (running === 0) return null;
  const active = activeTrace.getStore();
  if (!active) return null;
  return active.tracestate === undefined ? { traceparent: active.traceparent } : { traceparent: active.traceparent, tracestate: active.tracestate };
}

/** The active span (a request's, a run step's, a model or tool call's), or null (also when tracing is off). */
export function activeSpan(): TraceSpan | null {
  if (running === 0) return null;
  return activeTrace.getStore()?.span ?? null;
}
