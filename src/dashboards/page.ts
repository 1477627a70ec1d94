// The dashboard page: the Vega-Lite spec (data filled in) as inert JSON, drawn by vega-embed with the
// scripts this gateway serves from its own node_modules (assets.ts): no CDN, so the page works on a
// network without internet. The spec is the model's, so the page is locked down: scripts only from
// this gateway, no request to anywhere (connect-src none: a spec cannot load or send data), images
// only inline. 'unsafe-eval' because Vega compiles its expressions with the Function constructor.
import type { DashboardRecord } from '../store/tool-records';

export const DASHBOARD_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  // The link carries its signature: never pass it on in a Referer header.
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** The spec as served: the stored spec with the stored records as its inline data. */
export function servedSpec(dashboard: Pick<DashboardRecord, 'spec' | 'data'>): Record<string, unknown> {
  return { ...dashboard.spec, data: { values: dashboard.data } };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** JSON safe inside a <script> element: no `</script>` or `<!--` can end or change it. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

/**
 * The page. `assetBase`: where the scripts are, relative to the page (`../../dashboard_assets/` from
 * `/v1/dashboards/{id}/view`, so a path prefix added by a reverse proxy is kept).
 */
export function dashboardPage(dashboard: Pick<DashboardRecord, 'title' | 'spec' | 'data' | 'version' | 'updatedAt'>, assetBase: string): string {
  const title = escapeHtml(dashboard.title);
  const script = (name: string): string => `<script src="${assetBase}${name}"></script>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1f2328; }
h1 { font-size: 1.4rem; margin: 0 0 0.25rem; }
.meta { color: #59636e; font-size: 0.85rem; margin: 0 0 1rem; }
.error { color: #b42318; }
</style>
${script('vega.min.js')}
${script('vega-lite.min.js')}
${script('vega-embed.min.js')}
</head>
<body data-state="loading">
<h1>${title}</h1>
<p class="meta">Version ${dashboard.version}, updated ${escapeHtml(dashboard.updatedAt)}</p>
<div id="chart"></div>
<script type="application/json" id="dashboard-spec">${scriptJson(servedSpec(dashboard))}</script>
${script('dashboard.js')}
</body>
</html>
`;
}
