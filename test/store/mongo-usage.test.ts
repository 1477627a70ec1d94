// The MongoDB store stores a call's usage as a usage document, whether it came as a usage record or
// inside the call's audit record (its token counts): the split runs without a MongoDB server.
import assert from 'node:assert/strict';
import { usageCarriedBy } from '../../src/store/mongo/records-repositories';
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
