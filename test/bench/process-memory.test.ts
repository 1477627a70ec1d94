// The bench takes the gateway's peak RSS over the Responses points alone: the peak of the chat matrix
// before them is reset (clear_refs), so a peak read afterwards covers only what came after the reset.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { resetPeakRss, rssOf } from '../../bench/process-memory';

describe('bench: the peak RSS reset', function () {
  this.timeout(30_000);

  it('brings a process peak down to its current RSS, and the peak then grows again with new allocations', async () => {
    // A child that touches 96 MB, lets it go, and then waits to be told to allocate again.
    const script = `
      let big = Buffer.alloc(96 * 1024 * 1024, 1);
      big = null;
      globalThis.gc();
      process.stdout.write('freed\\n');
      process.stdin.once('data', () => { const again = Buffer.alloc(64 * 1024 * 1024, 1); process.stdout.write('again ' + again.length + '\\n'); });
    `;
    const child = spawn(process.execPath, ['--expose-gc', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const lines: string[] = [];
      const waitFor = (text: string): Promise<void> =>
        new Promise((resolve) => {
          const check = (): void => {
            if (lines.some((line) => line.startsWith(text))) resolve();
            else child.stdout.once('data', (chunk: Buffer) => (lines.push(...chunk.toString().split('\n')), check()));
          };
          check();
        });
      await waitFor('freed');
      const pid = child.pid!;
      const before = rssOf(pid, 'VmHWM');
      assert.ok(before - rssOf(pid, 'VmRSS') > 64, `the peak (${before} MB) is well above the current RSS after the buffer was freed`);
      assert.equal(resetPeakRss(pid), true);
      const reset = rssOf(pid, 'VmHWM');
      assert.ok(reset < before - 64, `the peak fell from ${before} MB to ${reset} MB`);
      child.stdin.write('go\n');
      await waitFor('again');
      assert.ok(rssOf(pid, 'VmHWM') > reset + 48, 'a later allocation raises the peak again');
    } finally {
      child.kill('SIGTERM');
    }
  });
});
