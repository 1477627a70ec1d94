import assert from 'node:assert/strict';
import type { ConsoleSessionRecord } from '../../../src/store/types';
import { at, T0, uid, type StoreHandle } from './fixtures';

export function consoleSessionsContract(h: StoreHandle): void {
  describe('console sessions', () => {
    async function setup(): Promise<{ org: string; user: string; session: ConsoleSessionRecord }> {
      const org = uid('org');
      const user = uid('u');
      await h.store.users.upsert({ id: user, orgId: org, name: 'Sam', role: 'member' });
      await h.store.groups.upsert({ id: 'ops', orgId: org, name: 'Ops', members: [user] });
      const session: ConsoleSessionRecord = {
        id: uid('cs'),
        orgId: org,
        userId: user,
        tokenHash: null,
        ticketHash: uid('ticket'),
        ticketExpiresAt: at(T0 + 60_000),
        subject: 'sub-1',
        createdAt: at(T0),
        expiresAt: at(T0 + 3_600_000),
        revokedAt: null,
      };
      await h.store.consoleSessions.create(session);
      return { org, user, session };
    }

    it('redeems a ticket exactly once, then resolves the token with user and groups', async () => {
      const { org, user, session } = await setup();
      const token = uid('token');
      assert.equal(await h.store.consoleSessions.resolve(token, at(T0 + 1000)), null, 'no token before redemption');
      const [first, second] = await Promise.all([
        h.store.consoleSessions.redeemTicket(session.ticketHash!, token, at(T0 + 1000)),
        h.store.consoleSessions.redeemTicket(session.ticketHash!, uid('other-token'), at(T0 + 1000)),
      ]);
      const redeemed = [first, second].filter((s) => s !== null);
      assert.equal(redeemed.length, 1, 'concurrent redemptions: one wins');
      const winner = redeemed[0]!;
      assert.equal(winner.id, session.id);
      assert.equal(winner.ticketHash, null);
      assert.equal(await h.store.consoleSessions.redeemTicket(session.ticketHash!, uid('t'), at(T0 + 2000)), null, 'a ticket works once');
      const resolved = await h.store.consoleSessions.resolve(winner.tokenHash!, at(T0 + 2000));
      assert.deepEqual(resolved?.user, { id: user, orgId: org, name: 'Sam', role: 'member' });
      assert.deepEqual(resolved?.groups, ['ops']);
      assert.equal(resolved?.session.id, session.id);
      assert.equal(resolved?.session.subject, 'sub-1');
      assert.equal(resolved?.session.expiresAt, at(T0 + 3_600_000));
      assert.deepEqual(await h.store.consoleSessions.get(session.id), winner);
    });

    it('refuses an expired ticket and resolves no expired session', async () => {
      const { session } = await setup();
      assert.equal(await h.store.consoleSessions.redeemTicket(session.ticketHash!, uid('token'), at(T0 + 60_000)), null, 'ticket expired');
      const live = await setup();
      const token = uid('token');
      assert.ok(await h.store.consoleSessions.redeemTicket(live.session.ticketHash!, token, at(T0 + 1000)));
      assert.ok(await h.store.consoleSessions.resolve(token, at(T0 + 3_599_999)));
      assert.equal(await h.store.consoleSessions.resolve(token, at(T0 + 3_600_000)), null, 'session expired');
    });

    it('revokes once, reports revokedSince, and a revoked session neither resolves nor redeems', async () => {
      const { session } = await setup();
      const token = uid('token');
      assert.ok(await h.store.consoleSessions.redeemTicket(session.ticketHash!, token, at(T0 + 1000)));
      const unredeemed = await setup();
      const revokedAt = new Date().toISOString();
      assert.equal(await h.store.consoleSessions.revoke(session.id, revokedAt), true);
      assert.equal(await h.store.consoleSessions.revoke(session.id, revokedAt), false);
      assert.equal(await h.store.consoleSessions.revoke(uid('missing'), revokedAt), false);
      assert.equal(await h.store.consoleSessions.resolve(token, at(T0 + 2000)), null);
      assert.equal(await h.store.consoleSessions.revoke(unredeemed.session.id, revokedAt), true);
      assert.equal(await h.store.consoleSessions.redeemTicket(unredeemed.session.ticketHash!, uid('token'), at(T0 + 2000)), null);
      const since = await h.store.consoleSessions.revokedSince(new Date(Date.parse(revokedAt) - 1000).toISOString());
      assert.ok(since.includes(session.id) && since.includes(unredeemed.session.id));
      assert.equal((await h.store.consoleSessions.revokedSince(new Date(Date.parse(revokedAt) + 1000).toISOString())).includes(session.id), false);
    });

    it('resolves no session whose user left its organization', async () => {
      const { org, user, session } = await setup();
      const token = uid('token');
      assert.ok(await h.store.consoleSessions.redeemTicket(session.ticketHash!, token, at(T0 + 1000)));
      await h.store.users.upsert({ id: user, orgId: uid('elsewhere'), name: 'Sam', role: 'admin' });
      assert.equal(await h.store.consoleSessions.resolve(token, at(T0 + 2000)), null);
      await h.store.users.upsert({ id: user, orgId: org, name: 'Sam', role: 'admin' });
      assert.equal((await h.store.consoleSessions.resolve(token, at(T0 + 2000)))?.user.role, 'admin', 'the role is read at resolution');
    });

    it('prunes sessions expired before the cutoff, keeping live ones', async () => {
      const old = await setup();
      const live = { ...old.session, id: uid('cs'), ticketHash: uid('ticket'), expiresAt: at(Date.now() + 3_600_000) };
      await h.store.consoleSessions.create(live);
      let pruned = 0;
      for (let n = -1; n !== 0;) pruned += n = await h.store.consoleSessions.prune(at(T0 + 3_600_001), 1000);
      assert.ok(pruned >= 1);
      assert.equal(await h.store.consoleSessions.get(old.session.id), null);
      assert.ok(await h.store.consoleSessions.get(live.id));
    });
  });
}
