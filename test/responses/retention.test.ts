// Retention of stored responses: each carries its expiry (responseExpiry, from store.retentionDays when
// it is created) and the gateway's retention task deletes expired ones with their event logs, whatever
// retentionDays says now (here 0, "keep forever", for new records).
import assert from 'node:assert/strict';
import { responseExpiry } from '../../src/responses/index';
import { startTestGateway } from '../helpers/gateway';
import { openTestStore } from '../helpers/store';
import { inProgressResponse, textEvent, waitUntil } from './helpers';

describe('response retention', function () {
  this.timeout(30_000);

  it('expiresAt is createdAt plus retentionDays; 0 keeps the response', () => {
    assert.equal(responseExpiry('2025-03-01T10:00:00.000Z', 30), '2025-03-31T10:00:00.000Z');
    assert.equal(responseExpiry('2025-03-01T10:00:00.000Z', 0), null);
  });

  it('the running gateway prunes expired responses and their events, and keeps the others', async () => {
    const t = await openTestStore('postgres');
    try {
      const past = new Date(Date.now() - 60_000).toISOString();
      const expired = inProgressResponse({ status: 'completed', expiresAt: past });
      const kept = inProgressResponse({ status: 'completed', expiresAt: new Date(Date.now() + 86_400_000).toISOString() });
      for (const r of [expired, kept]) {
        await t.store.responses.create(r);
        await t.store.responses.appendEvents([{ responseId: r.id, ...textEvent(0), createdAt: past }]);
      }
      const gw = await startTestGateway({ store: t.store, config: { store: { driver: 'postgres', url: t.config.url, retentionDays: 0 } } });
      try {
        await waitUntil('the prune', async () => (await t.store.responses.get(expired.id)) === null);
        assert.equal(await t.store.responses.lastSequenceNumber(expired.id), -1, 'its events went with it');
        assert.ok(await t.store.responses.get(kept.id));
        assert.equal(await t.store.responses.lastSequenceNumber(kept.id), 0);
      } finally {
        await gw.close();
      }
    } finally {
      await t.cleanup();
    }
  });
});
