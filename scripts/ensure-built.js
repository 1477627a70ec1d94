// `npm start` "builds if needed": compiles when dist/ is missing or older than any source file.
'use strict';
const { statSync, readdirSync } = require('node:fs');
const { execSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const entry = path.join(root, 'dist/src/main.js');
const operatorConfig = path.join(root, 'config/gateway.yaml');

function newest(dir) {
  let latest = 0;
  for (const entryName of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entryName.name);
    if (entryName.isDirectory()) latest = Math.max(latest, newest(full));
    // config/gateway.yaml is read at start-up, not compiled: editing it needs no rebuild.
    else if (full === operatorConfig) continue;
    else if (/\.(ts|js|ya?ml|json)$/.test(entryName.name)) latest = Math.max(latest, statSync(full).mtimeMs);
  }
  return latest;
}

let built = 0;
try {
  built = statSync(entry).mtimeMs;
} catch {
  built = 0;
}
const sources = Math.max(...['src', 'plugins', 'openapi', 'config'].map((d) => newest(path.join(root, d))));
if (built === 0 || sources > built) {
  process.stderr.write('agent-gateway: building (npm run build)...\n');
  execSync('npm run build --silent', { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
}
