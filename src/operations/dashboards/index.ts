import type { Handler } from '../types';
import { getDashboardAsset } from './assets';
import { deleteDashboard, getDashboard, listDashboards, viewDashboard } from './dashboards';

export const dashboardHandlers: Readonly<Record<string, Handler>> = { listDashboards, getDashboard, deleteDashboard, viewDashboard, getDashboardAsset };
