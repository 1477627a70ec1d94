import { GatewayError } from '../../http/errors';
import type { Handler } from '../types';
import { decodeAuditCursor, encodeAuditCursor } from './audit-cursor';

const DEFAULT_LIMIT = 100;

/** GET /v1/admin/audit: the caller's organization audit trail, oldest first; org admins only. */
export const listAuditRecords: Handler = async (ctx, { store }) => {
  const principal = ctx.principal;
  if (!principal || principal.role !== 'admin') {
    throw new GatewayError('forbidden', 'Only organization admins may read the audit trail.');
  }
  const since = typeof ctx.query['since'] === 'string' ? new Date(ctx.query['since']).toISOString() : null;
  const limit = typeof ctx.query['limit'] === 'number' ? ctx.query['limit'] : DEFAULT_LIMIT;
  const after = typeof ctx.query['after'] === 'string' ? decodeAuditCursor(ctx.query['after']) : null;
  // One more than asked tells whether another page exists without a second query.
  const records = await store.audit.list({ orgId: principal.orgId, since, limit: limit + 1, after });
  const items = records.slice(0, limit);
  const last = items[items.length - 1];
  const nextCursor = records.length > limit && last ? encodeAuditCursor({ at: last.at, id: last.id }) : null;
  return { status: 200, body: { items, nextCursor } };
};
