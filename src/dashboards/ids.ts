import { randomUUID } from 'node:crypto';

/** A dashboard id: random, so it tells nothing of other dashboards (access needs an API key or a signed link). */
export const newDashboardId = (): string => `dash_${randomUUID().replaceAll('-', '')}`;
