import { dashboardAsset } from '../../dashboards/assets';
import { GatewayError } from '../../http/errors';
import type { Handler } from '../types';

/** GET /v1/dashboard_assets/{asset}: the dashboard page's scripts, from the installed packages. */
export const getDashboardAsset: Handler = async (ctx) => {
  const name = ctx.params['asset'] ?? '';
  const data = dashboardAsset(name);
  if (!data) throw new GatewayError('not_found', `No asset named ${name}.`, { param: 'asset' });
  return {
    status: 200,
    headers: { 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' },
    raw: { contentType: 'application/javascript; charset=utf-8', data: await data },
  };
};
