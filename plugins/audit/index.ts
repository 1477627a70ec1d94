// audit: every API call (success, error or client abort) becomes a record in the organization's audit
// trail, and the upstream token usage it reported becomes usage records and metrics. Writes are
// batched off the request path; close() (shutdown) flushes everything.
import { definePlugin } from '../../src/pipeline/plugin';
import { JsonBatchWriter } from './json-batches';
import { auditJsonOf, isoNow, NO_USAGE, usageJsonOf } from './records';

export interface AuditConfig {
  enabled: boolean;
  flushIntervalMs: number;
  batchSize: number;
  maxBuffered: number;
  excludeOperations: string[];
}

export const AUDIT_DEFAULTS: AuditConfig = {
  enabled: true,
  flushIntervalMs: 500,
  // Calls per write. Each write is one statement and one commit, whose fixed cost dominated the embedded
  // database's work: at ~10,500 calls/s (json c64 in the bench, its process on a shared core) batches
  // of 500 fell behind (backlog at the 100,000-call cap within 90 s, records dropped), batches of 2,000
  // kept up (a few batches pending, 5-8 MB of buffers).
  batchSize: 2000,
  maxBuffered: 100_000,
  // Probes and documents are polled by machines and carry no caller: recording them would drown the trail.
  excludeOperations: ['getLiveness', 'getReadiness', 'getMetrics', 'getOpenApiDocument', 'getApiReference', 'getApiReferenceAsset'],
};

export default definePlugin<AuditConfig>({
  name: 'audit',
  phase: 'record',
  order: 100,
  requires: [],
  failMode: 'open',
  description: "Records every API call in the organization's audit trail, and upstream token usage, in batches",
  configSchema: {
    type: 'object',
    additionalProperties: false,
    description:
      'Audit trail: time, organization, user, key id (never the key), method, route template, operationId, resource ids, status, latency and request id of every API call, success, error or client abort; plus the token usage of upstream calls. Written in batches off the request path and flushed on shutdown. Fails open: a store outage never fails a request (records are kept in memory and retried, up to maxBuffered).',
    properties: {
      enabled: { type: 'boolean', default: AUDIT_DEFAULTS.enabled, description: 'Record API calls.' },
      flushIntervalMs: {
        type: 'integer',
        minimum: 10,
        default: AUDIT_DEFAULTS.flushIntervalMs,
        description: 'Longest time a record waits in memory before it is written.',
      },
      batchSize: {
        type: 'integer',
        minimum: 1,
        default: AUDIT_DEFAULTS.batchSize,
        description: 'Calls per write (each with its audit and usage records); a full batch is written at once.',
      },
      maxBuffered: {
        type: 'integer',
        minimum: 1,
        default: AUDIT_DEFAULTS.maxBuffered,
        description: 'Records kept in memory while the store is failing; beyond this the oldest are dropped (logged).',
      },
      excludeOperations: {
        type: 'array',
        items: { type: 'string' },
        default: AUDIT_DEFAULTS.excludeOperations,
        description: 'operationIds not recorded (health probes, metrics and documents by default).',
      },
    },
  },
  create(partial, deps) {
    const config = { ...AUDIT_DEFAULTS, ...partial };
    const excluded = new Set(config.excludeOperations);
    // One writer for both kinds: a call's audit record and its usage records travel in the same batch,
    // written by one store call (one statement on the SQL stores) instead of two, as JSON text.
    const writer = new JsonBatchWriter({
      batchSize: config.batchSize,
      flushIntervalMs: config.flushIntervalMs,
      maxBuffered: config.maxBuffered,
      logger: deps.logger,
      write: (batch) => deps.store.audit.insertJson(batch),
      // agw_audit_pending_calls: a store that falls behind shows as a growing backlog.
      onPending: (calls) => deps.metrics.auditPending.set(calls),
    });
    const tokens = (org: string, model: string, kind: string) => deps.metrics.upstreamTokens.labels(org, model, kind);

    return {
      onFinish(ctx, info) {
        const at = isoNow();
        const recorded = !excluded.has(ctx.route.operationId);
        const principal = ctx.principal;
        if (principal) {
          for (const report of ctx.usage) {
            tokens(principal.orgId, report.model, 'prompt').inc(report.promptTokens);
            tokens(principal.orgId, report.model, 'completion').inc(report.completionTokens);
          }
        }
        // A call that made one upstream call (nearly all of them) carries its usage in its audit record:
        // one row per call in the SQL stores instead of two. Other usage becomes usage records.
        const own = recorded && principal && ctx.usage.length === 1 ? ctx.usage[0]! : null;
        const audit = recorded ? auditJsonOf(ctx, info, at, own) : null;
        const usage = own ? NO_USAGE : usageJsonOf(ctx, at);
        if (audit !== null || usage.length > 0) writer.add(audit, usage);
      },
      async close() {
        await writer.close();
      },
    };
  },
});
