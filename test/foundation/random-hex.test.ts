// Conversation and item ids draw their randomness from a pool (src/security/random-hex.ts): every id is
// fresh across the pool's refills, of the size asked, in lowercase hex; the id formats stay as they were.
import assert from 'node:assert/strict';
import { randomHex } from '../../src/security/random-hex';
import { newConversationId, newItemId } from '../../src/runs/ids';

describe('random hex for identifiers', () => {
  it('hands out each pooled byte once: ids across several refills of the pool are all distinct', () => {
    const seen = new Set<string>();
    // 24 bytes an id, 2,000 ids: 48,000 bytes, about a dozen refills of the 4 KiB pool.
    for (let i = 0; i < 2000; i++) {
      const hex = randomHex(24);
      assert.match(hex, /^[0-9a-f]{48}$/);
      seen.add(hex);
    }
    assert.equal(seen.size, 2000);
  });

  it('takes sizes that do not divide the pool, and refuses sizes it cannot serve', () => {
    for (let i = 0; i < 500; i++) assert.match(randomHex(7), /^[0-9a-f]{14}$/);
    assert.equal(randomHex(4096).length, 8192);
    assert.throws(() => randomHex(0), RangeError);
    assert.throws(() => randomHex(4097), RangeError);
    assert.throws(() => randomHex(1.5), RangeError);
  });

  it('keeps the id formats: conv_ and item prefixes with 48 hex digits', () => {
    assert.match(newConversationId(), /^conv_[0-9a-f]{48}$/);
    assert.match(newItemId('fc'), /^fc_[0-9a-f]{48}$/);
    assert.notEqual(newConversationId(), newConversationId());
  });
});
