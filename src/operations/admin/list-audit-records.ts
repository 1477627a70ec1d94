import { GatewayError } from '../../http/errors';
import type { Handler } from '../types';
import { decodeAuditCursor, encodeAuditCursor } from './audit-cursor';

const DEFAULT_LIMIT = 100;

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const time = (value: unknown): string | null => (typeof value === 'string' ? new Date(value).toISOString() : null);

/** `404` → that status; `4xx` → the class (the document's pattern has checked the shape). */
function statusFilter(value: unknown): { from: number; to: number } | null {
  if (typeof value !== 'string') return null;
  const cls = /^([1-5])xx$/.exec(value);
  if (cls) return { from: Number(cls[1]) * 100, to: Number(cls[1]) * 100 + 99 };
  const status = Number(value);
  return { from: status, to: status };
}

/**
 * GET /v1/admin/audit: the caller's organization audit trail, oldest first (order=desc: newest first),
 * filtered in the store query; org admins only.
 */
export const listAuditRecords: Handler = async (ctx, { store }) => {
  const principal = ctx.principal;
  if (!principal || principal.role !== 'admin') {
    throw new GatewayError('forbidden', 'Only organization admins may read the audit trail.');
  }
  const q = ctx.query;
  const limit = typeof q['limit'] === 'number' ? q['limit'] : DEFAULT_LIMIT;
  const after = typeof q['after'] === 'string' ? decodeAuditCursor(q['after']) : null;
  // One more than asked tells whether another page exists without a second query.
  const records = await store.audit.list({
    orgId: principal.orgId,
    since: time(q['since']),
    until: time(q['until']),
    userId: text(q['userId']),
    keyId: text(q['keyId']),
    model: text(q['model']),
    operationId: text(q['operationId']),
    status: statusFilter(q['status']),
    order: q['order'] === 'desc' ? 'desc' : 'asc',
    limit: limit + 1,
    after,
  });
  const items = records.slice(0, limit);
  const last = items[items.length - 1];
  const nextCursor = records.length > limit && last ? encodeAuditCursor({ at: last.at, id: last.id }) : null;
  return { status: 200, body: { items, nextCursor } };
};
