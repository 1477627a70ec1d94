// The soak's per-core busy figure: parsed from /proc/stat's per-core lines, idle counting iowait.
import assert from 'node:assert/strict';
import { busyPercent, parseCoreTimes, readCoreTimes } from '../../bench/core-busy';

const STAT = (core0: string, core1: string): string => `cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 ${core0} 0 0\ncpu1 ${core1} 0 0\nintr 12345 1 2\nctxt 99\n`;

describe('bench: per-core busy time', () => {
  it('reads each core’s idle (idle + iowait) and total ticks, skipping the all-cores line', () => {
    assert.deepEqual(parseCoreTimes(STAT('10 0 5 80 5 0 0 0', '50 1 9 30 0 3 2 5')), [
      { idle: 85, total: 100 },
      { idle: 30, total: 100 },
    ]);
  });

  it('gives each core’s busy share of the ticks between two readings', () => {
    const before = parseCoreTimes(STAT('10 0 5 80 5 0 0 0', '50 1 9 30 0 3 2 5'));
    const after = parseCoreTimes(STAT('70 0 15 90 5 0 0 0', '52 1 9 126 0 3 2 5'));
    const [core0, core1] = busyPercent(before, after);
    assert.ok(Math.abs(core0! - 87.5) < 1e-9, String(core0));
    assert.ok(Math.abs(core1! - (2 / 98) * 100) < 1e-9, String(core1));
  });

  it('reads this machine’s cores (Linux)', async () => {
    const times = await readCoreTimes();
    assert.ok(times && times.length >= 1 && times.every((core) => core.total >= core.idle && core.idle >= 0));
  });
});
