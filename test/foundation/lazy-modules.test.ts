// The gateway loads the heavy libraries of its optional tools only when a call needs them: playwright-core
// (~70 MB resident once loaded) on the first browser launch, the MCP SDK (~26 MB) on the first MCP
// connection. A gateway that serves only model traffic keeps them out of memory: loading the
// application (every module a started gateway loads) must not load them. Nor does it compile JSON
// schemas: the request and configuration validators are generated at build time (AJV's compiler at
// start took ~170 ms and ~30 MB), so AJV's compiler is never loaded, only its small runtime helpers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

describe('optional tool libraries are loaded on first use', function () {
  this.timeout(60_000);

  it('loading the application loads neither playwright-core nor the MCP SDK', () => {
    const script = `require('./src/app.ts');
const loaded = Object.keys(require.cache);
process.stdout.write(JSON.stringify({ total: loaded.length, heavy: loaded.filter((m) => /[\\\\/]node_modules[\\\\/](playwright-core|@modelcontextprotocol)[\\\\/]/.test(m)) }));`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    const result = JSON.parse(child.stdout) as { total: number; heavy: string[] };
    // The application did load (hundreds of modules), and none of those libraries among them.
    assert.ok(result.total > 100, `only ${result.total} modules loaded`);
    assert.deepEqual(result.heavy, []);
  });

  it('loading the application and validating a configuration does not load the AJV schema compiler', () => {
    const script = `require('./src/app.ts');
require('./src/config/load.ts').loadConfig('config/gateway.yaml', { OPENAI_API_KEY: 'k' }).then((config) => {
  const loaded = Object.keys(require.cache);
  process.stdout.write(JSON.stringify({
    organizations: config.organizations.length,
    runtime: loaded.filter((m) => /[\\/]node_modules[\\/]ajv[\\/]dist[\\/]runtime[\\/]/.test(m)).length,
    compiler: loaded.filter((m) => /[\\/]node_modules[\\/]ajv[\\/]dist[\\/](compile|core|ajv)[\\/.]/.test(m)),
  }));
});`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    const result = JSON.parse(child.stdout) as { organizations: number; runtime: number; compiler: string[] };
    // The configuration was validated (the generated validator's runtime helpers are loaded), and compiled nowhere.
    assert.ok(result.organizations > 0);
    assert.ok(result.runtime > 0, 'the generated validators use ajv/dist/runtime');
    assert.deepEqual(result.compiler, []);
  });

  it('the start-up check of the browser tools launches Chromium outside the process: no playwright-core, no promise hooks', () => {
    // With Node's promise hooks on (playwright-core's AsyncLocalStorage turns them on once it runs),
    // every new promise carries its async ids as symbol-keyed properties.
    const script = `const { BrowserPool } = require('./src/tools/hosted/browser/pool.ts');
const pool = new BrowserPool({ executablePath: '/usr/bin/chromium' }, null, null, null);
pool.check().then((reason) => {
  const loaded = Object.keys(require.cache).filter((m) => /[\\/]node_modules[\\/]playwright-core[\\/]/.test(m));
  process.stdout.write(JSON.stringify({ reason, loaded, promiseIds: Object.getOwnPropertySymbols(Promise.resolve()).length }));
});`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    assert.equal(child.status, 0, child.stderr);
    const result = JSON.parse(child.stdout) as { reason: string | null; loaded: string[]; promiseIds: number };
    // Chromium started (the check ran a real launch), and this process loaded nothing of it.
    assert.equal(result.reason, null);
    assert.deepEqual(result.loaded, []);
    assert.equal(result.promiseIds, 0);
  });
});
