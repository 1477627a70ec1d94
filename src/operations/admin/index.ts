// Admin-only extension endpoints.
import type { Handler } from '../types';
import { listAuditRecords } from './list-audit-records';

export const adminHandlers: Readonly<Record<string, Handler>> = {
  listAuditRecords,
};
