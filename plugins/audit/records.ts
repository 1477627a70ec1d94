import { randomUUID } from 'node:crypto';
import type { FinishInfo } from '../../src/pipeline/plugin';
import type { RequestContext } from '../../src/pipeline/context';
import type { AuditRecord, UsageRecord } from '../../src/store/types';

/**
 * A UUID version 7 (RFC 9562 §5.7): the millisecond time first, then random bits. Audit ids are the
 * primary key: random (v4) ids land on random pages of a B-tree that outgrows the database's cache
 * within minutes of sustained traffic, each insert then reading and dirtying a page of its own; the
 * embedded store fell behind at ~10,000 calls/s that way. Time-ordered ids are appended at the index's
 * right edge.
 */
export function timeOrderedId(now = Date.now()): string {
  const random = randomUUID(); // xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx (variant bits already set)
  const time = now.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}

/** The audit record of a finished call: who, what (route template, never the raw URL), outcome, timing. Never the key. */
export function auditRecordOf(ctx: RequestContext, info: FinishInfo, at: string): AuditRecord {
  const principal = ctx.principal;
  return {
    id: timeOrderedId(),
    at,
    orgId: principal?.orgId ?? null,
    userId: principal?.userId ?? null,
    keyId: principal?.keyId ?? null,
    method: ctx.route.method.toUpperCase(),
    route: ctx.route.template,
    operationId: ctx.route.operationId,
    resourceIds: ctx.resourceIds,
    status: info.status,
    latencyMs: Math.round(Number(process.hrtime.bigint() - ctx.startedAt) / 1e3) / 1e3,
    requestId: ctx.requestId,
  };
}

/** The usage records of the upstream calls a request made, each as JSON text (empty without an organization). */
export function usageJsonOf(ctx: RequestContext, at: string): string[] {
  const principal = ctx.principal;
  if (!principal || ctx.usage.length === 0) return NO_USAGE;
  return ctx.usage.map((u) =>
    JSON.stringify({
      at,
      orgId: principal.orgId,
      userId: principal.userId,
      keyId: principal.keyId,
      model: u.model,
      promptTokens: u.promptTokens,
      completionTokens: u.completionTokens,
      requestId: ctx.requestId,
    } satisfies UsageRecord),
  );
}

const NO_USAGE: string[] = [];
