// .ci/run fails on pending tests: the reporter records each pending test by title and file, and
// .ci/unexpected-pending.js lists those not allowed to be pending (all but the MongoDB store contract
// skipped for want of MONGODB_URL). Runs mocha itself on a fixture with skips and on that contract.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT, tempDir } from '../helpers/process';

const run = promisify(execFile);

describe('.ci/run: pending tests fail the run', function () {
  this.timeout(120_000);

  it('records pending tests by title and file, and flags every one but the MongoDB contract skip', async () => {
    const dir = tempDir('agw-ci-');
    const results = path.join(dir, 'results.json');
    try {
      const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'], HOME: process.env['HOME'], TEST_RESULTS_FILE: results };
      await run(
        process.execPath,
        [
          path.join(ROOT, 'node_modules/mocha/bin/mocha.js'),
          'test/store/contract.test.ts',
          'test/fixtures/ci/skips.fixture.ts',
          '--grep',
          '^(store contract: mongodb|ci fixture) ',
        ],
        { cwd: ROOT, env },
      );
      const recorded = JSON.parse(readFileSync(results, 'utf8')) as { passed: number; pending: number; pendingTests: { title: string; file: string }[] };
      assert.equal(recorded.passed, 1);
      assert.ok(recorded.pendingTests.some((t) => t.file === 'test/store/contract.test.ts' && t.title.startsWith('store contract: mongodb ')));
      assert.equal(recorded.pending, recorded.pendingTests.length);
      const { stdout } = await run(process.execPath, [path.join(ROOT, '.ci/unexpected-pending.js'), results], { cwd: ROOT });
      assert.deepEqual(stdout.trimEnd().split('\n'), [
        'ci fixture is skipped (test/fixtures/ci/skips.fixture.ts)',
        'ci fixture skips itself at run time (test/fixtures/ci/skips.fixture.ts)',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
