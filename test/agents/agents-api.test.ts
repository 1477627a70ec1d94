// GET /v1/agents/list and GET /v1/agents/{agentId} over HTTP: visibility (creator, shared user, group,
// admin, other user, other organization), the detail shape, legacy vs paginated paths, paging through
// a busy agent, date filters, cursors, and the flat error envelope.
import assert from 'node:assert/strict';
import request from 'supertest';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { AGENTS, agentsConfig, insertRun } from './fixtures';

const ALL = ['view', 'edit', 'delete', 'share'];

describe('agents API', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ config: agentsConfig() });
  });
  after(() => gw.close());

  const get = (path: string, who: 'admin' | 'member' | 'viewer' | 'outsider' = 'admin') => request(gw.url).get(path).set(gw.auth(who));

  describe('GET /v1/agents/list', () => {
    const listed = async (who: 'admin' | 'member' | 'viewer' | 'outsider') => {
      const res = await get('/v1/agents/list', who).expect(200);
      assert.equal(res.body.total, res.body.items.length);
      return new Map<string, string[]>(
        res.body.items.map((i: { agentId: string; metadata: { userPermissions: string[] } }) => [i.agentId, i.metadata.userPermissions]),
      );
    };

    it('shows an org admin every agent of the organization with full permissions', async () => {
      const seen = await listed('admin');
      assert.deepEqual([...seen.keys()].sort(), Object.values(AGENTS).sort());
      for (const perms of seen.values()) assert.deepEqual(perms, ALL);
    });
    it('shows the creator their agents, and an agent shared with them with the shared permissions', async () => {
      const seen = await listed('member');
      assert.deepEqual(seen.get(AGENTS.group), ALL);
      assert.deepEqual(seen.get(AGENTS.private), ALL);
      assert.deepEqual(seen.get(AGENTS.main), ['view']);
    });
    it('shows a user what is shared with them directly or through a group, nothing else', async () => {
      const seen = await listed('viewer');
      assert.deepEqual(
        [...seen.entries()].sort(),
        [
          [AGENTS.group, ['view']],
          [AGENTS.user, ['view', 'edit']],
        ].sort(),
      );
    });
    it('shows another organization nothing', async () => {
      assert.equal((await listed('outsider')).size, 0);
    });
    it('answers the list item shape', async () => {
      const res = await get('/v1/agents/list').expect(200);
      const item = res.body.items.find((i: { agentId: string }) => i.agentId === AGENTS.main);
      assert.deepEqual(Object.keys(item).sort(), ['agentId', 'createdAt', 'creatorName', 'description', 'metadata', 'name']);
      assert.equal(item.name, 'Main agent');
      assert.equal(item.creatorName, 'Admin');
      assert.ok(!Number.isNaN(Date.parse(item.createdAt)));
      assert.equal(res.body.items.find((i: { agentId: string }) => i.agentId === AGENTS.group).creatorName, 'Member');
    });
    it('answers 401 in the flat envelope without a key or with a bad one', async () => {
      const none = await request(gw.url).get('/v1/agents/list').expect(401);
      assert.deepEqual(Object.keys(none.body).sort(), ['error', 'message']);
      assert.equal(none.body.error, 'Unauthorized');
      const bad = await request(gw.url).get('/v1/agents/list').set({ authorization: 'Bearer agw_nope' }).expect(401);
      assert.equal(bad.body.error, 'Unauthorized');
    });
  });

  describe('GET /v1/agents/{agentId}', () => {
    it('answers the detail: inputs sorted, hasTriggers, modelsInUse, permissions, legacy shape without nextCursor', async () => {
      const res = await get(`/v1/agents/${AGENTS.main}`).expect(200);
      assert.deepEqual(res.body.inputs, ['Audience', 'notes', 'Topic']);
      assert.equal(res.body.hasTriggers, true);
      assert.deepEqual(res.body.modelsInUse, ['demo']);
      assert.deepEqual(res.body.metadata, { userPermissions: ALL });
      assert.equal(res.body.agentId, AGENTS.main);
      assert.equal(res.body.name, 'Main agent');
      assert.equal(res.body.description, 'The one with inputs and triggers.');
      assert.ok(!('nextCursor' in res.body));
      const member = await get(`/v1/agents/${AGENTS.group}`, 'viewer').expect(200);
      assert.equal(member.body.hasTriggers, false);
      assert.deepEqual(member.body.metadata.userPermissions, ['view']);
    });

    it('is 404 (never 403) for an agent the caller may not see, another organization, or no such agent', async () => {
      for (const [who, id] of [
        ['viewer', AGENTS.private],
        ['viewer', AGENTS.main],
        ['outsider', AGENTS.main],
        ['admin', '99999999-9999-4999-8999-999999999999'],
      ] as const) {
        const res = await get(`/v1/agents/${id}`, who).expect(404);
        assert.deepEqual(res.body, { error: 'Not found', message: `Agent ${id} not found.` });
      }
    });

    it('is 400 for an agentId that is not a UUID', async () => {
      const res = await get('/v1/agents/not-a-uuid').expect(400);
      assert.equal(res.body.error, 'Bad Request');
      assert.match(res.body.message, /agentId/);
    });

    describe('runs', () => {
      // A dedicated agent's runs at known times: 2024-03-01T00:00Z + i hours, i = 0..11.
      const agent = AGENTS.user;
      const at = (hour: number) => new Date(Date.UTC(2024, 2, 1, hour)).toISOString();
      const ids: string[] = [];
      before(async () => {
        for (let i = 0; i < 12; i++) ids.push((await insertRun(gw.store, agent, at(i), 'success', 'u-member')).id);
      });
      const newestFirst = () => [...ids].reverse();

      it('legacy path: at most 5 recentRunIds, newest first, no nextCursor field', async () => {
        const res = await get(`/v1/agents/${agent}`).expect(200);
        assert.deepEqual(res.body.recentRunIds, newestFirst().slice(0, 5));
        assert.ok(!('nextCursor' in res.body));
        assert.equal(res.body.lastRunAtUtc, at(11));
      });

      it('stays on the legacy path for query parameters other than the four paging ones', async () => {
        const res = await get(`/v1/agents/${agent}?foo=1`).expect(200);
        assert.equal(res.body.recentRunIds.length, 5);
        assert.ok(!('nextCursor' in res.body));
      });

      it('paginated path: default limit 20, nextCursor present and null on the last page', async () => {
        const res = await get(`/v1/agents/${agent}?startDate=2024-01-01T00:00:00Z`).expect(200);
        assert.deepEqual(res.body.recentRunIds, newestFirst());
        assert.ok('nextCursor' in res.body);
        assert.equal(res.body.nextCursor, null);
      });

      it('pages through every run once, newest first, while new runs are created between pages', async () => {
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const query: string = cursor === null ? '?limit=5' : `?limit=5&cursor=${encodeURIComponent(cursor)}`;
          const res = await get(`/v1/agents/${agent}${query}`).expect(200);
          assert.ok(res.body.recentRunIds.length <= 5);
          seen.push(...res.body.recentRunIds);
          cursor = res.body.nextCursor;
          pages++;
          // A busy agent: new runs arrive while the client pages (newer than everything it has seen).
          if (cursor !== null) await insertRun(gw.store, agent, new Date(Date.UTC(2024, 5, 1, pages)).toISOString());
        } while (cursor !== null);
        assert.deepEqual(seen, newestFirst());
        assert.equal(new Set(seen).size, seen.length);
        assert.equal(pages, 3);
      });

      it('filters by inclusive startDate/endDate, and lastRunAtUtc stays the true latest run', async () => {
        const res = await get(`/v1/agents/${agent}?startDate=${at(2)}&endDate=${at(4)}`).expect(200);
        assert.deepEqual(res.body.recentRunIds, [ids[4], ids[3], ids[2]]);
        assert.equal(res.body.nextCursor, null);
        const latest = (await get(`/v1/agents/${agent}`).expect(200)).body.lastRunAtUtc;
        assert.equal(res.body.lastRunAtUtc, latest);
        assert.ok(latest > at(11));
        // Offsets are honoured: 03:00+01:00 is 02:00Z.
        const offset = await get(`/v1/agents/${agent}?startDate=${encodeURIComponent('2024-03-01T03:00:00+01:00')}&endDate=${at(2)}`).expect(200);
        assert.deepEqual(offset.body.recentRunIds, [ids[2]]);
        // A date-only endDate covers its whole day.
        const day = await get(`/v1/agents/${agent}?startDate=2024-03-01&endDate=2024-03-01&limit=100`).expect(200);
        assert.deepEqual(day.body.recentRunIds, newestFirst());
      });

      it('keeps the date filters across pages when the client re-sends them', async () => {
        const range = `startDate=${at(1)}&endDate=${at(8)}`;
        const first = await get(`/v1/agents/${agent}?limit=5&${range}`).expect(200);
        assert.deepEqual(first.body.recentRunIds, [ids[8], ids[7], ids[6], ids[5], ids[4]]);
        const second = await get(`/v1/agents/${agent}?limit=5&${range}&cursor=${encodeURIComponent(first.body.nextCursor)}`).expect(200);
        assert.deepEqual(second.body.recentRunIds, [ids[3], ids[2], ids[1]]);
        assert.equal(second.body.nextCursor, null);
      });

      it('is 400 for a cursor that is not ours, one of another agent, a bad limit, bad dates, or startDate > endDate', async () => {
        const page = await get(`/v1/agents/${agent}?limit=2`).expect(200);
        const bad = [
          '?cursor=abc',
          `?cursor=${encodeURIComponent(`${page.body.nextCursor}x`)}`,
          '?limit=0',
          '?limit=101',
          '?limit=abc',
          '?startDate=yesterday',
          `?startDate=${at(5)}&endDate=${at(4)}`,
        ];
        for (const query of bad) {
          const res = await get(`/v1/agents/${agent}${query}`);
          assert.equal(res.status, 400, query);
          assert.deepEqual(Object.keys(res.body).sort(), ['error', 'message']);
          assert.equal(res.body.error, 'Bad Request');
        }
        const foreign = await get(`/v1/agents/${AGENTS.main}?cursor=${encodeURIComponent(page.body.nextCursor)}`).expect(400);
        assert.match(foreign.body.message, /cursor/);
      });

      it('accepts limit 1 and 100 (bounds inclusive)', async () => {
        assert.equal((await get(`/v1/agents/${agent}?limit=1`).expect(200)).body.recentRunIds.length, 1);
        assert.ok((await get(`/v1/agents/${agent}?limit=100`).expect(200)).body.recentRunIds.length > 12);
      });

      it('answers lastRunAtUtc null and an empty page for an agent that never ran', async () => {
        const res = await get(`/v1/agents/${AGENTS.private}?limit=10`).expect(200);
        assert.equal(res.body.lastRunAtUtc, null);
        assert.deepEqual(res.body.recentRunIds, []);
        assert.equal(res.body.nextCursor, null);
      });
    });
  });
});
