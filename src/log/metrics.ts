import client from 'prom-client';

/** Prometheus metrics of one app instance (own registry: no module-level singletons, tests stay isolated). */
export interface Metrics {
  readonly registry: client.Registry;
  readonly httpRequests: client.Counter<'operation' | 'method' | 'status'>;
  readonly httpDuration: client.Histogram<'operation'>;
  readonly upstreamDuration: client.Histogram<'provider' | 'model' | 'outcome'>;
  readonly upstreamTokens: client.Counter<'org' | 'model' | 'kind'>;
  readonly runs: client.Counter<'status'>;
  readonly queueDepth: client.Gauge<'state'>;
  /** Finished calls whose audit and usage records wait to be written (the audit plugin sets it). */
  readonly auditPending: client.Gauge;
}

export function createMetrics(): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new client.Counter({
      name: 'agw_http_requests_total',
      help: 'API requests by operation and status',
      labelNames: ['operation', 'method', 'status'],
      registers: [registry],
    }),
    httpDuration: new client.Histogram({
      name: 'agw_http_request_duration_seconds',
      help: 'API request latency',
      labelNames: ['operation'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
      registers: [registry],
    }),
    upstreamDuration: new client.Histogram({
      name: 'agw_upstream_request_duration_seconds',
      help: 'Upstream provider latency until the reply (or stream) ended',
      labelNames: ['provider', 'model', 'outcome'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 120],
      registers: [registry],
    }),
    upstreamTokens: new client.Counter({
      name: 'agw_upstream_tokens_total',
      help: 'Tokens used upstream by organization, model and kind (prompt, completion)',
      labelNames: ['org', 'model', 'kind'],
      registers: [registry],
    }),
    runs: new client.Counter({
      name: 'agw_runs_total',
      help: 'Agent runs that reached a terminal status',
      labelNames: ['status'],
      registers: [registry],
    }),
    queueDepth: new client.Gauge({
      name: 'agw_queue_depth',
      help: 'Run jobs by state (waiting, active, delayed)',
      labelNames: ['state'],
      registers: [registry],
    }),
    auditPending: new client.Gauge({
      name: 'agw_audit_pending_calls',
      help: 'Finished calls whose audit and usage records are buffered, not yet written to the store',
      registers: [registry],
    }),
  };
}

/** Most distinct label sets a memo keeps (label values here come from config: orgs, models, statuses). */
const MEMO_LIMIT = 10_000;

/**
 * Memoises a metric's labels(): prom-client validates and hashes the label values on every call, which
 * costs more than the increment itself on the request path. The labelled child stays valid for the
 * metric's lifetime (nothing here removes label sets).
 */
export function memoLabels<C>(labels: (...values: string[]) => C): (...values: string[]) => C {
  const children = new Map<string, C>();
  return (...values) => {
    const key = values.length === 1 ? values[0]! : values.join('\u0001');
    let child = children.get(key);
    if (child === undefined) {
      child = labels(...values);
      if (children.size < MEMO_LIMIT) children.set(key, child);
    }
    return child;
  };
}
