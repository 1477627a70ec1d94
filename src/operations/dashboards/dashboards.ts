// GET /v1/dashboards, GET/DELETE /v1/dashboards/{dashboard_id} (API key, the caller's organization
// only), and GET /v1/dashboards/{dashboard_id}/view: the page, spec or PNG through a signed link.
import { callerOf } from '../../agents/access';
import { checkDashboardLink, dashboardLinkSecret, signDashboardLink } from '../../dashboards/links';
import { publicBaseUrl, requestBaseUrl } from '../../files/share-link';
import { dashboardPage, DASHBOARD_PAGE_HEADERS, servedSpec } from '../../dashboards/page';
import { RendererUnavailableError } from '../../dashboards/png-renderer';
import { GatewayError } from '../../http/errors';
import type { RequestContext } from '../../pipeline/context';
import type { AppServices } from '../../services';
import type { DashboardSummary } from '../../store/tool-records';
import type { Handler } from '../types';
import { unixSeconds } from '../knowledge/presenters';

const dashboardNotFound = (id: string): GatewayError => new GatewayError('not_found', `No dashboard found with id '${id}'.`, { param: 'dashboard_id' });

/** The page's scripts, relative to /v1/dashboards/{id}/view (a reverse proxy's path prefix is kept). */
const ASSET_BASE = '../../dashboard_assets/';

/** Links start with server.publicUrl when set, else the address the caller reached us at. */
function baseUrl(ctx: RequestContext, services: AppServices): string {
  const { server } = services.config;
  return publicBaseUrl(server, requestBaseUrl(ctx.req, server.trustProxy));
}

function presentSummary(d: DashboardSummary): Record<string, unknown> {
  return { id: d.id, object: 'dashboard', title: d.title, version: d.version, created_at: unixSeconds(d.createdAt), updated_at: unixSeconds(d.updatedAt) };
}

export const listDashboards: Handler = async (ctx, { store }) => {
  const limit = typeof ctx.query['limit'] === 'number' ? ctx.query['limit'] : 20;
  const dashboards = await store.dashboards.listByOrg(callerOf(ctx).orgId, limit);
  return { status: 200, body: { object: 'list', data: dashboards.map(presentSummary) } };
};

export const getDashboard: Handler = async (ctx, services) => {
  const id = ctx.params['dashboard_id'] ?? '';
  const dashboard = await services.store.dashboards.getInOrg(callerOf(ctx).orgId, id);
  if (!dashboard) throw dashboardNotFound(id);
  const expiresAt = Math.floor(services.clock.now().getTime() / 1000) + services.config.tools.dashboards.linkTtlSeconds;
  const link = signDashboardLink(await dashboardLinkSecret(services.store), baseUrl(ctx, services), dashboard.id, expiresAt);
  return { status: 200, body: { ...presentSummary(dashboard), spec: servedSpec(dashboard), url: link.url, url_expires_at: link.expiresAt } };
};

export const deleteDashboard: Handler = async (ctx, { store }) => {
  const id = ctx.params['dashboard_id'] ?? '';
  if (!(await store.dashboards.delete(callerOf(ctx).orgId, id))) throw dashboardNotFound(id);
  return { status: 200, body: { id, object: 'dashboard.deleted', deleted: true } };
};

export const viewDashboard: Handler = async (ctx, services) => {
  const id = ctx.params['dashboard_id'] ?? '';
  const expires = ctx.query['expires'] as number;
  const signature = ctx.query['signature'] as string;
  const check = checkDashboardLink(await dashboardLinkSecret(services.store), id, expires, signature, Math.floor(services.clock.now().getTime() / 1000));
  if (check === 'invalid') throw dashboardNotFound(id);
  if (check === 'expired') throw new GatewayError('forbidden', 'This dashboard link has expired; ask for a new one.', { wireCode: 'link_expired' });
  const dashboard = await services.store.dashboards.get(id);
  if (!dashboard) throw dashboardNotFound(id);
  const format = ctx.query['format'] ?? 'html';
  if (format === 'json') return { status: 200, headers: { 'cache-control': 'no-store' }, body: servedSpec(dashboard) };
  const page = dashboardPage(dashboard, ASSET_BASE);
  if (format === 'png') {
    try {
      const png = await services.dashboardRenderer.render(page);
      return { status: 200, headers: { 'cache-control': 'no-store' }, raw: { contentType: 'image/png', data: png } };
    } catch (err) {
      if (err instanceof RendererUnavailableError) throw new GatewayError('unavailable', `PNG rendering is not available on this gateway: ${err.message}`);
      throw err;
    }
  }
  return { status: 200, headers: { ...DASHBOARD_PAGE_HEADERS }, raw: { contentType: 'text/html; charset=utf-8', data: page } };
};
