// The gateway loads the heavy libraries of its optional tools only when a call needs them: playwright-core
// (~70 MB resident once loaded) on the first browser launch, the MCP SDK (~26 MB) on the first MCP
// connection. A gateway that serves only model traffic keeps them out of memory: loading the
// application (every module a started gateway loads) must not load them.
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
});
