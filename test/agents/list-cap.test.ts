// The agent list's single page is capped at 500 (spec Limits) and asks the store for no more: the
// cap is applied in the query, and total always equals the number of items returned.
import assert from 'node:assert/strict';
import { listAgents } from '../../src/operations/agents/list-agents';
import type { RequestContext } from '../../src/pipeline/context';
import type { AppServices } from '../../src/services';
import type { Principal, VisibleAgent } from '../../src/store/types';

describe('GET /v1/agents/list cap', () => {
  it('asks the store for at most 500 and answers total = items.length', async () => {
    const principal: Principal = { orgId: 'acme', userId: 'u', keyId: null, role: 'admin', groups: [] };
    let asked = 0;
    const agent = (i: number) =>
      ({
        id: `a${i}`,
        name: `n${i}`,
        description: '',
        createdAt: '2024-01-01T00:00:00.000Z',
        creatorName: 'c',
        permissions: ['view'],
      }) as unknown as VisibleAgent;
    const services = {
      store: {
        agents: {
          listVisible: async (_p: Principal, limit: number) => {
            asked = limit;
            // A store ignoring the limit must still not break the page size.
            return Array.from({ length: 600 }, (_, i) => agent(i));
          },
        },
      },
    } as unknown as AppServices;
    const reply = await listAgents({ principal } as unknown as RequestContext, services);
    const body = reply?.body as { items: unknown[]; total: number };
    assert.equal(asked, 500);
    assert.equal(body.items.length, 500);
    assert.equal(body.total, 500);
  });
});
