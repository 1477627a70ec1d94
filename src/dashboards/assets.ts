// The dashboard page's scripts, served by the gateway itself (GET /v1/dashboard_assets/{asset}): the
// browser builds of Vega, Vega-Lite and vega-embed from the installed packages, and the page's own
// script. Nothing is fetched at run time; the files are read once (they change only with an upgrade).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The page's own script: draws the inert spec element with vega-embed (SVG, so the marks are
 * elements) and says how it went in body[data-state] (`rendered` or `failed`), which the PNG renderer
 * waits for. The editor action would open the spec on an external site: off.
 */
const PAGE_SCRIPT = `(function () {
  'use strict';
  var chart = document.getElementById('chart');
  function failed(err) {
    var p = document.createElement('p');
    p.className = 'error';
    p.textContent = 'The chart could not be drawn: ' + ((err && err.message) || String(err));
    chart.appendChild(p);
    document.body.setAttribute('data-state', 'failed');
  }
  try {
    var spec = JSON.parse(document.getElementById('dashboard-spec').textContent);
    vegaEmbed(chart, spec, { renderer: 'svg', actions: { export: true, source: false, compiled: false, editor: false } }).then(
      function () { document.body.setAttribute('data-state', 'rendered'); },
      failed
    );
  } catch (err) {
    failed(err);
  }
})();
`;

/** Asset name → the package file it is (relative to the package's directory). */
const PACKAGE_FILES: Readonly<Record<string, { pkg: string; file: string }>> = {
  'vega.min.js': { pkg: 'vega', file: 'build/vega.min.js' },
  'vega-lite.min.js': { pkg: 'vega-lite', file: 'build/vega-lite.min.js' },
  'vega-embed.min.js': { pkg: 'vega-embed', file: 'build/vega-embed.min.js' },
};

export const DASHBOARD_ASSET_NAMES: readonly string[] = [...Object.keys(PACKAGE_FILES), 'dashboard.js'];

const loaded = new Map<string, Promise<Buffer>>();

/** The package's directory (its package.json is not an export of these ESM packages, so found by walking up). */
function packageDir(pkg: string): string {
  for (const base of require.resolve.paths(pkg) ?? []) {
    const dir = path.join(base, pkg);
    if (existsSync(path.join(dir, 'package.json'))) return dir;
  }
  throw new Error(`the ${pkg} package is not installed`);
}

/** The asset's bytes, or null for a name that is not one. */
export function dashboardAsset(name: string): Promise<Buffer> | null {
  if (name === 'dashboard.js') return Promise.resolve(Buffer.from(PAGE_SCRIPT));
  const entry = PACKAGE_FILES[name];
  if (!entry) return null;
  let data = loaded.get(name);
  if (!data) {
    data = readFile(path.join(packageDir(entry.pkg), entry.file));
    // A failed read is not kept: the next request tries again.
    data.catch(() => loaded.delete(name));
    loaded.set(name, data);
  }
  return data;
}
