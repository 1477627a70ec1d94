import client from 'prom-client';
import { HotCounter, HotHistogram } from './hot-metrics';

/** Prometheus metrics of one app instance (own registry: no module-level singletons, tests stay isolated). */
export interface Metrics {
  readonly registry: client.Registry;
  // Updated on every request: the hot kind (no label hashing per update).
  readonly httpRequests: HotCounter<'operation' | 'method' | 'status'>;
  readonly httpDuration: HotHistogram<'operation'>;
  readonly upstreamDuration: HotHistogram<'provider' | 'model' | 'outcome'>;
  readonly upstreamTokens: HotCounter<'org' | 'model' | 'kind'>;
  readonly runs: client.Counter<'status'>;
  readonly queueDepth: client.Gauge<'state'>;
  /** Finished calls whose audit and usage records wait to be written (the audit plugin sets it). */
  readonly auditPending: client.Gauge;
  /** Streaming responses' events waiting to be written to the store (the response event log sets it). */
  readonly responseEventsPending: client.Gauge;
  /** Events of responses whose event log was dropped (buffer full or refused by the store). */
  readonly responseEventsDropped: client.Counter;
  /** In-progress responses the sweeper marked failed because the gateway writing them stopped. */
  readonly responsesLapsed: client.Counter;
  /** Stored-conversation turns by how their context was decided: far, counted, compacted, no_window. */
  readonly conversationContexts: client.Counter<'outcome'>;
  /** Characters of context counted for compaction, by method (tokenizer, estimate). */
  readonly contextCharsCounted: HotCounter<'method'>;
  /** Server-side tool calls (hosted svc_* and MCP) by tool and status (completed, failed). */
  readonly toolCalls: client.Counter<'tool' | 'status'>;
  /** Server-side tool call duration by tool. */
  readonly toolDuration: client.Histogram<'tool'>;
}

export function createMetrics(): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new HotCounter('agw_http_requests_total', 'API requests by operation and status', ['operation', 'method', 'status'], registry),
    httpDuration: new HotHistogram(
      'agw_http_request_duration_seconds',
      'API request latency',
      ['operation'],
      [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
      registry,
    ),
    upstreamDuration: new HotHistogram(
      'agw_upstream_request_duration_seconds',
      'Upstream provider latency until the reply (or stream) ended',
      ['provider', 'model', 'outcome'],
      [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 120],
      registry,
    ),
    upstreamTokens: new HotCounter(
      'agw_upstream_tokens_total',
      'Tokens used upstream by organization, model and kind (prompt, completion)',
      ['org', 'model', 'kind'],
      registry,
    ),
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
    responseEventsPending: new client.Gauge({
      name: 'agw_response_events_pending',
      help: 'Events of streaming responses buffered, not yet written to the store',
      registers: [registry],
    }),
    responseEventsDropped: new client.Counter({
      name: 'agw_response_events_dropped_total',
      help: 'Events of streaming responses not stored (buffer full, or refused by the store)',
      registers: [registry],
    }),
    responsesLapsed: new client.Counter({
      name: 'agw_responses_lapsed_total',
      help: 'In-progress responses marked failed because the gateway generating them stopped (lease lapsed)',
      registers: [registry],
    }),
    conversationContexts: new client.Counter({
      name: 'agw_conversation_contexts_total',
      help: 'Stored-conversation turns by how their context was decided: far from the window (no count), counted, compacted, no contextWindow',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    contextCharsCounted: new HotCounter(
      'agw_context_counted_chars_total',
      'Characters of conversation context counted for compaction, by method (tokenizer, estimate)',
      ['method'],
      registry,
    ),
    toolCalls: new client.Counter({
      name: 'agw_tool_calls_total',
      help: 'Server-side tool calls (hosted svc_* tools, MCP tools) by tool and status',
      labelNames: ['tool', 'status'],
      registers: [registry],
    }),
    toolDuration: new client.Histogram({
      name: 'agw_tool_call_duration_seconds',
      help: 'Server-side tool call duration by tool',
      labelNames: ['tool'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
      registers: [registry],
    }),
  };
}
