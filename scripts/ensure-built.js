// "Builds if needed" for `npm start`, `npm run worker` and `npx agent-gateway`: compiles when dist/ is
// missing or older than any source file. The build's own output goes to stderr, so that
// `agent-gateway openapi > doc.json` on a fresh clone writes only the document to stdout.
'use strict';
const { statSync, readdirSync } = require('node:fs');
const { spawn } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const entry = path.join(root, 'dist/src/main.js');
const operatorConfig = path.join(root, 'config/gateway.yaml');

function newest(dir) {
  let latest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entryName of entries) {
    const full = path.join(dir, entryName.name);
    if (entryName.isDirectory()) latest = Math.max(latest, newest(full));
    // config/gateway.yaml is read at start-up, not compiled: editing it needs no rebuild.
    else if (full === operatorConfig) continue;
    else if (/\.(ts|js|ya?ml|json)$/.test(entryName.name)) latest = Math.max(latest, statSync(full).mtimeMs);
  }
  return latest;
}

function needsBuild() {
  let built = 0;
  try {
    built = statSync(entry).mtimeMs;
  } catch {
    built = 0;
  }
  const sources = Math.max(...['src', 'plugins', 'openapi', 'config', 'bench'].map((d) => newest(path.join(root, d))));
  return built === 0 || sources > built;
}

/**
 * Runs `npm run build` when needed. The build runs in a process group of its own, so that a SIGTERM or
 * SIGINT sent to this process (by npm, a service manager or a terminal) stops the whole build (npm,
 * its shell, tsc) rather than leaving it running; this process then exits as the signal asks.
 */
function ensureBuilt() {
  if (!needsBuild()) return Promise.resolve();
  process.stderr.write('agent-gateway: building (npm run build)...\n');
  return new Promise((resolve, reject) => {
    const build = spawn('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 2, 2], detached: true });
    const stop = (signal) => {
      try {
        process.kill(-build.pid, signal);
      } catch {
        // The build already ended.
      }
      build.once('exit', () => process.exit(128 + (signal === 'SIGINT' ? 2 : 15)));
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
    build.once('error', reject);
    build.once('exit', (code, signal) => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      if (code === 0) resolve();
      else reject(new Error(`the build failed (${signal ?? `exit code ${code}`}); run \`npm run build\` to see why`));
    });
  });
}

module.exports = { ensureBuilt };

// Run directly (`node scripts/ensure-built.js && ...`, as `npm run bench` does).
if (require.main === module) {
  ensureBuilt().catch((err) => {
    process.stderr.write(`agent-gateway: ${err.message}\n`);
    process.exit(1);
  });
}
