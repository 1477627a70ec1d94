// Every DLP detector, built-in and custom, runs in time linear in its input: each is fed 1 MiB of
// every adversarial input (test/plugins/dlp-adversarial-inputs.ts) in a worker thread, which is
// terminated when one input takes longer than the bound. The bound is generous for a slow shared
// machine (linear time is well under a second for every input here) and far below what a rescanning
// detector takes on the same input (unterminated PEM blocks: ~23 s; a catastrophic custom pattern:
// minutes for 30 characters, never for 1 MiB), so the test fails only for a real reason.
import assert from 'node:assert/strict';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { DETECTORS } from '../../plugins/dlp/detectors';
import type { DlpDetector, DlpPolicyConfig } from '../../src/config/types';
import type { Timing, TimingRequest } from './dlp-adversarial-inputs';

const MIB = 1 << 20;
const BOUND_MS = 8000;
const WORKER = path.join(__dirname, 'dlp-adversarial-inputs.ts');

/** Redacts every adversarial input with `policy`; rejects naming the first input over the bound. */
function timeAll(policy: DlpPolicyConfig): Promise<Timing[]> {
  const request: TimingRequest = { policy, size: MIB };
  const worker = new Worker(`require('tsx/cjs'); require(${JSON.stringify(WORKER)});`, { eval: true, workerData: request });
  const timings: Timing[] = [];
  return new Promise<Timing[]>((resolve, reject) => {
    let deadline: NodeJS.Timeout | undefined;
    const fail = (err: Error): void => {
      clearTimeout(deadline);
      void worker.terminate();
      reject(err);
    };
    worker.on('message', (timing: Timing) => {
      clearTimeout(deadline);
      if (timing.ms < 0) {
        deadline = setTimeout(() => fail(new Error(`"${timing.input}" (1 MiB) still running after ${BOUND_MS} ms`)), BOUND_MS);
      } else timings.push(timing);
    });
    worker.on('error', fail);
    worker.on('exit', () => {
      clearTimeout(deadline);
      resolve(timings);
    });
  });
}

const policyOf = (detectors: DlpDetector[], custom: DlpPolicyConfig['custom'] = []): DlpPolicyConfig => ({ enabled: true, detectors, custom });

describe('plugins/dlp linear time', function () {
  // Worker start-up (TypeScript compilation) plus up to 19 inputs of 1 MiB each on a busy machine.
  this.timeout(19 * BOUND_MS + 60_000);

  for (const detector of Object.keys(DETECTORS) as DlpDetector[]) {
    it(`runs the ${detector} detector over 1 MiB of each adversarial input within the bound`, async () => {
      const timings = await timeAll(policyOf([detector]));
      assert.ok(timings.length >= 19, `timed ${timings.length} inputs`);
      for (const { input, ms } of timings) assert.ok(ms < BOUND_MS, `${detector} on "${input}": ${ms.toFixed(0)} ms`);
    });
  }

  it('runs custom patterns that backtrack catastrophically on a backtracking engine within the bound', async () => {
    const timings = await timeAll(
      policyOf(
        [],
        [
          { name: 'nested', pattern: '(a+)+$' },
          { name: 'alternation', pattern: '(a|aa)*b' },
          { name: 'words', pattern: '(\\w+\\s?)*!' },
        ],
      ),
    );
    assert.ok(timings.length >= 19, `timed ${timings.length} inputs`);
    for (const { input, ms } of timings) assert.ok(ms < BOUND_MS, `custom patterns on "${input}": ${ms.toFixed(0)} ms`);
  });
});
