// The MongoDB store stores a call's usage as a usage document, whether it came as a usage record or
// inside the call's audit record (its token counts): the split runs without a MongoDB server.
import assert from 'node:assert/strict';
import { sumDays, usageCarriedBy } from '../../src/store/mongo/records-repositories';
import type { AuditRecord } from '../../src/store/types';

describe('mongodb store: usage carried by audit records', () => {
  it('becomes usage records; records without token counts or without an organization carry none', () => {
    const base = {
      at: '2026-11-25T10:00:00.000Z',
      userId: 'u',
      keyId: 'k',
      method: 'POST',
      route: '/v1/chat/completions',
      operationId: 'createChatCompletion',
      resourceIds: {},
      status: 200,
      latencyMs: 1,
    };
    const records: AuditRecord[] = [
      { ...base, id: 'a', orgId: 'acme', requestId: 'r1', model: 'm', promptTokens: 3, completionTokens: 2 },
      { ...base, id: 'b', orgId: 'acme', requestId: 'r2' },
      { ...base, id: 'c', orgId: null, requestId: 'r3', model: 'm', promptTokens: 1, completionTokens: 1 },
      // A failed model call names its model and provider but carries no usage.
      { ...base, id: 'd', orgId: 'acme', requestId: 'r4', model: 'm', provider: 'p', errorCode: 'upstream_error', status: 502 },
    ];
    assert.deepEqual(usageCarriedBy(records), [
      { at: base.at, orgId: 'acme', userId: 'u', keyId: 'k', model: 'm', promptTokens: 3, completionTokens: 2, requestId: 'r1' },
    ]);
  });
});

describe('mongodb store: usage day totals', () => {
  it('sums a batch per organization, UTC day, model, user and key (the same key twice adds up)', () => {
    const call = (at: string, promptTokens: number, extra: { keyId?: string | null; cost?: number; cachedPromptTokens?: number } = {}) => ({
      at: new Date(at),
      orgId: 'acme',
      userId: 'u',
      keyId: 'k',
      model: 'm',
      promptTokens,
      completionTokens: 1,
      ...extra,
    });
    const groups = sumDays([
      call('2025-03-01T23:59:59.999Z', 3, { cost: 0.25, cachedPromptTokens: 2 }),
      call('2025-03-01T00:00:00.000Z', 4, { cost: 0.5 }),
      call('2025-03-02T00:00:00.000Z', 5),
      call('2025-03-01T12:00:00.000Z', 6, { keyId: null }),
    ]);
    assert.deepEqual(
      groups.map((g) => [g.day, g.keyId, g.requests, g.promptTokens, g.cachedPromptTokens, g.completionTokens, g.cost]),
      [
        ['2025-03-01', 'k', 2, 7, 2, 2, 0.75],
        ['2025-03-02', 'k', 1, 5, 0, 1, 0],
        ['2025-03-01', null, 1, 6, 0, 1, 0],
      ],
    );
    assert.equal(groups[0]!._id, JSON.stringify(['acme', '2025-03-01', 'm', 'u', 'k']));
  });
});
