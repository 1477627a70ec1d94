import assert from 'node:assert/strict';
import { HEAP_GROWING_PERCENT, heapGrowthFlag } from '../../src/heap-growth';

describe('heap growth limit of the serving processes', () => {
  it('sets V8 heap growth to 1.5x unless the operator chose a value (node flag or NODE_OPTIONS)', () => {
    assert.equal(HEAP_GROWING_PERCENT, 50);
    assert.equal(heapGrowthFlag([], undefined), '--heap-growing-percent=50');
    assert.equal(heapGrowthFlag(['--enable-source-maps'], '--max-old-space-size=512'), '--heap-growing-percent=50');
    assert.equal(heapGrowthFlag(['--heap-growing-percent=20'], undefined), null);
    assert.equal(heapGrowthFlag([], '--inspect --heap_growing_percent=80'), null);
    assert.equal(heapGrowthFlag(['--heap-growing-percent-typo'], undefined), '--heap-growing-percent=50');
  });
});
