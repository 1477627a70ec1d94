// The console's build (dist/console) for the console tests: `npm test` builds it first (npm run build);
// a targeted run builds it here when it is missing or older than the app's sources.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { consoleBuildDir } from '../../src/operations/meta/console';

export const ROOT = path.resolve(__dirname, '../..');
const APP = path.join(ROOT, 'src/console/app');

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return latest;
}

export function ensureConsoleBuilt(): string {
  const dir = consoleBuildDir();
  let built = 0;
  try {
    built = statSync(path.join(dir, 'index.html')).mtimeMs;
  } catch {
    built = 0;
  }
  if (built === 0 || newest(APP) > built) {
    const run = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', APP, '--logLevel', 'warn'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`vite build failed: ${run.stderr}`);
  }
  return dir;
}
