// Admin-only extension endpoints.
import { pending } from '../pending';
import type { Handler } from '../types';

export const adminHandlers: Readonly<Record<string, Handler>> = {
  listAuditRecords: pending('listAuditRecords'),
};
