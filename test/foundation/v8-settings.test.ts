import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { servingNodeFlags } from '../../bench/gateway-config';
import { childGcFlags, HEAP_GROWING_PERCENT, heapGrowthFlag, MAIN_THREAD_GC_FLAGS, mainThreadGcFlags } from '../../src/v8-settings';

describe('V8 settings of the serving processes', () => {
  it('sets V8 heap growth to 1.5x unless the operator chose a value (node flag or NODE_OPTIONS)', () => {
    assert.equal(HEAP_GROWING_PERCENT, 50);
    assert.equal(heapGrowthFlag([], undefined), '--heap-growing-percent=50');
    assert.equal(heapGrowthFlag(['--enable-source-maps'], '--max-old-space-size=512'), '--heap-growing-percent=50');
    assert.equal(heapGrowthFlag(['--heap-growing-percent=20'], undefined), null);
    assert.equal(heapGrowthFlag([], '--inspect --heap_growing_percent=80'), null);
    assert.equal(heapGrowthFlag(['--heap-growing-percent-typo'], undefined), '--heap-growing-percent=50');
  });

  it('collects on the main thread only when the process has one CPU, unless the operator chose a collector flag', () => {
    assert.deepEqual(mainThreadGcFlags(2, [], undefined), []);
    assert.deepEqual(mainThreadGcFlags(1, [], undefined), MAIN_THREAD_GC_FLAGS);
    assert.ok(MAIN_THREAD_GC_FLAGS.includes('--no-concurrent-marking'));
    assert.deepEqual(mainThreadGcFlags(1, ['--concurrent-marking'], undefined), []);
    assert.deepEqual(mainThreadGcFlags(1, [], '--single-threaded-gc'), []);
    assert.deepEqual(mainThreadGcFlags(1, ['--no_parallel_scavenge'], undefined), []);
    assert.deepEqual(mainThreadGcFlags(1, ['--concurrent-marking-typo'], undefined), MAIN_THREAD_GC_FLAGS);
    assert.deepEqual(childGcFlags(1), ['--single-threaded-gc']);
    assert.deepEqual(childGcFlags(4), []);
  });

  it('each main-thread collector flag can be set in a running process that then collects (V8 aborts on some flags)', () => {
    // A flag V8 refuses after start (e.g. --single-threaded-gc) kills the process with a fatal error:
    // this runs the same sequence of calls in a child and makes it collect, young and old generations.
    const script = `const v8 = require('node:v8');
      for (const flag of ${JSON.stringify(MAIN_THREAD_GC_FLAGS)}) v8.setFlagsFromString(flag);
      let keep = [];
      for (let i = 0; i < 2e6; i++) { keep.push({ i, text: 'x' + i }); if (keep.length > 2e5) keep = []; }
      global.gc(); process.stdout.write('collected');`;
    const child = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout, 'collected');
  });

  it('npm start and npm run worker keep the young generation at 8 MB semi-spaces (the bench reads the same flags)', () => {
    const scripts = (JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const flags = servingNodeFlags(scripts['start']!);
    assert.deepEqual(flags, ['--max-semi-space-size=8']);
    assert.deepEqual(servingNodeFlags(scripts['worker']!), flags);
    // The flag is one node takes at start (V8 ignores it once the heap is set up): a process started with
    // it that allocates a lot of short-lived objects keeps its new space at two semi-spaces of 8 MB.
    const script = `let keep = [];
      for (let i = 0; i < 3e6; i++) { keep.push({ i, text: 'x' + i }); if (keep.length > 3e4) keep = []; }
      const space = require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
      process.stdout.write(String(space.space_size));`;
    const sized = (nodeFlags: string[]): number => {
      const child = spawnSync(process.execPath, [...nodeFlags, '-e', script], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(child.status, 0, child.stderr);
      return Number(child.stdout);
    };
    const MiB = 1024 * 1024;
    assert.ok(sized(flags) <= 16 * MiB, `new space ${sized(flags)} bytes`);
    assert.ok(sized([]) > 16 * MiB, 'without the flag V8 grows it to 2 x 16 MB (the test would not tell otherwise)');
  });
});
