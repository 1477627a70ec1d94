// The output items of recent stateless responses (src/responses/output-item-cache.ts).
import assert from 'node:assert/strict';
import { OutputItemCache } from '../../src/responses/output-item-cache';

describe('OutputItemCache: recent output items for item_reference', () => {
  it('resolves an item by id within its organization only', () => {
    const cache = new OutputItemCache();
    cache.remember('acme', [{ id: 'msg_1', type: 'message' }, { type: 'message' }, 'junk']);
    assert.deepEqual(cache.resolve('acme', 'msg_1'), { id: 'msg_1', type: 'message' });
    assert.equal(cache.resolve('other', 'msg_1'), undefined);
    assert.equal(cache.size, 1, 'items without an id are not kept');
  });

  it('forgets an item after its time, and the oldest past the bound', () => {
    let now = 1_000;
    const cache = new OutputItemCache(3, 100, () => now);
    cache.remember('acme', [{ id: 'a' }, { id: 'b' }]);
    now += 50;
    cache.remember('acme', [{ id: 'c' }, { id: 'd' }]);
    assert.equal(cache.size, 3, 'bounded');
    assert.equal(cache.resolve('acme', 'a'), undefined, 'the oldest went first');
    assert.deepEqual(cache.resolve('acme', 'b'), { id: 'b' });
    now += 60;
    assert.equal(cache.resolve('acme', 'b'), undefined, 'expired');
    assert.deepEqual(cache.resolve('acme', 'd'), { id: 'd' });
  });
});
