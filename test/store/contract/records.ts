import assert from 'node:assert/strict';
import type { AuditRecord, ResponseRecord, UsageGroupRow, UsageRecord } from '../../../src/store/types';
import { at, principal, T0, uid, type StoreHandle } from './fixtures';

function response(overrides: Partial<ResponseRecord> = {}): ResponseRecord {
  return {
    id: uid('resp'),
    orgId: 'org-r',
    userId: 'u',
    status: 'in_progress',
    model: 'demo',
    conversationId: null,
    previousResponseId: null,
    stored: true,
    body: { object: 'response', output: [] },
    inputItems: [{ type: 'message', role: 'user', content: 'hi' }],
    createdAt: at(T0),
    updatedAt: at(T0),
    expiresAt: null,
    lease: null,
    ...overrides,
  };
}

function audit(orgId: string, atMs: number, overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    id: uid('aud'),
    at: at(atMs),
    orgId,
    userId: 'u',
    keyId: 'k',
    method: 'GET',
    route: '/v1/runs/{runId}',
    operationId: 'getRun',
    resourceIds: { runId: 'r1' },
    status: 200,
    latencyMs: 1.5,
    requestId: uid('req'),
    ...overrides,
  };
}

export function recordsContract(h: StoreHandle): void {
  describe('responses and their events', () => {
    it('creates, updates, and reads visible responses (same org, stored, not expired)', async () => {
      const r = response({ orgId: 'org-r', expiresAt: at(T0 + 60_000) });
      await h.store.responses.create(r);
      assert.deepEqual(await h.store.responses.get(r.id), r);
      const now = at(T0 + 1000);
      assert.equal((await h.store.responses.getVisible(principal('org-r', 'x'), r.id, now))?.id, r.id);
      assert.equal(await h.store.responses.getVisible(principal('org-other', 'x'), r.id, now), null);
      assert.equal(await h.store.responses.getVisible(principal('org-r', 'x'), r.id, at(T0 + 60_000)), null, 'expired');
      const unstored = response({ stored: false });
      await h.store.responses.create(unstored);
      assert.equal(await h.store.responses.getVisible(principal('org-r', 'x'), unstored.id, now), null);

      await h.store.responses.update(r.id, {
        status: 'completed',
        body: { object: 'response', output: [{ type: 'message' }] },
        conversationId: 'c1',
        expiresAt: null,
      });
      const updated = await h.store.responses.get(r.id);
      assert.equal(updated?.status, 'completed');
      assert.deepEqual(updated?.body, { object: 'response', output: [{ type: 'message' }] });
      assert.equal(updated?.conversationId, 'c1');
      assert.equal(updated?.expiresAt, null);
      assert.equal(updated?.model, 'demo');
    });

    it('lists events ascending by sequence number after a given one; re-sent events are kept once', async () => {
      const responseId = uid('resp');
      const ev = (n: number): { responseId: string; sequenceNumber: number; event: string; data: Record<string, unknown>; createdAt: string } => ({
        responseId,
        sequenceNumber: n,
        event: n === 0 ? 'response.created' : 'response.output_text.delta',
        data: { n },
        createdAt: at(T0 + n),
      });
      await h.store.responses.appendEvents([ev(2), ev(0)]);
      await h.store.responses.appendEvents([ev(1), ev(3), ev(2)]);
      await h.store.responses.appendEvents([]);
      const all = await h.store.responses.listEvents(responseId, -1);
      assert.deepEqual(
        all.map((e) => e.sequenceNumber),
        [0, 1, 2, 3],
      );
      assert.deepEqual(all[0], ev(0));
      assert.deepEqual(
        (await h.store.responses.listEvents(responseId, 1)).map((e) => e.sequenceNumber),
        [2, 3],
      );
      assert.deepEqual(await h.store.responses.listEvents(uid('none'), -1), []);
    });
  });

  describe('audit and usage', () => {
    it('lists audit records oldest first, keyset-paginated, filtered by org and since', async () => {
      const org = uid('org');
      // Inserted out of order, two sharing a timestamp (ordered by id), one in another org.
      const records = [audit(org, T0 + 3000), audit(org, T0 + 1000), audit(org, T0 + 2000), audit(org, T0 + 2000), audit(org, T0)];
      await h.store.audit.insertMany(records);
      await h.store.audit.insertMany([audit(uid('org'), T0 + 1500)]);
      await h.store.audit.insertMany(records.slice(0, 2)); // a retried flush does not duplicate
      const expected = [...records].sort((a, b) => (a.at === b.at ? (a.id < b.id ? -1 : 1) : a.at < b.at ? -1 : 1));

      const pages: string[][] = [];
      let after: { at: string; id: string } | null = null;
      for (;;) {
        const page = await h.store.audit.list({ orgId: org, since: null, limit: 2, after });
        if (page.length === 0) break;
        pages.push(page.map((r) => r.id));
        const last = page[page.length - 1]!;
        after = { at: last.at, id: last.id };
      }
      assert.deepEqual(
        pages.map((p) => p.length),
        [2, 2, 1],
      );
      assert.deepEqual(
        pages.flat(),
        expected.map((r) => r.id),
      );
      const first = await h.store.audit.list({ orgId: org, since: null, limit: 1, after: null });
      assert.deepEqual(first[0], expected[0]);
      const since = await h.store.audit.list({ orgId: org, since: at(T0 + 2000), limit: 10, after: null });
      assert.deepEqual(
        since.map((r) => r.id),
        expected.slice(2).map((r) => r.id),
        'since is inclusive',
      );
    });

    it('writes a batch of audit records and the usage records of the same calls in one call', async () => {
      const org = uid('org');
      const base = { orgId: org, userId: 'u', keyId: 'k', requestId: 'r' };
      const records = [audit(org, T0), audit(org, T0 + 1000)];
      await h.store.audit.insertMany(records, [
        { ...base, at: at(T0), model: 'a', promptTokens: 3, completionTokens: 1 },
        { ...base, at: at(T0 + 1000), model: 'a', promptTokens: 4, completionTokens: 2 },
      ]);
      // Usage alone (the calls' audit records excluded) and audit alone are written too.
      await h.store.audit.insertMany([], [{ ...base, at: at(T0 + 2000), model: 'b', promptTokens: 5, completionTokens: 5 }]);
      await h.store.audit.insertMany([audit(org, T0 + 3000)], []);
      const listed = await h.store.audit.list({ orgId: org, since: null, limit: 10, after: null });
      assert.equal(listed.length, 3);
      assert.deepEqual(await h.store.usage.totals(org, null), [
        { model: 'a', requests: 2, promptTokens: 7, completionTokens: 3 },
        { model: 'b', requests: 1, promptTokens: 5, completionTokens: 5 },
      ]);
    });

    it("counts a call's own usage carried in its audit record (insertJson) with the usage records; listings show the model call", async () => {
      const org = uid('org');
      const carrying: AuditRecord[] = [
        { ...audit(org, T0), model: 'm', provider: 'p', promptTokens: 10, completionTokens: 4 },
        { ...audit(org, T0 + 2000), model: 'm', provider: 'p', promptTokens: 1, completionTokens: 1 },
      ];
      const plain = audit(org, T0 + 1000);
      // A failed model call: model, provider and error code, no token counts (no usage).
      const failed: AuditRecord = { ...audit(org, T0 + 3000), status: 502, model: 'm', provider: 'p', errorCode: 'upstream_error' };
      const truncated: AuditRecord = { ...audit(org, T0 + 4000), truncated: true };
      const usage = [{ orgId: org, userId: 'u', keyId: 'k', requestId: plain.requestId, at: at(T0 + 1000), model: 'm', promptTokens: 5, completionTokens: 5 }];
      const json = (items: readonly unknown[]): Buffer => Buffer.from(JSON.stringify(items));
      await h.store.audit.insertJson({ audit: json([carrying[0], plain, carrying[1], failed, truncated]), usage: json(usage) });
      assert.deepEqual(await h.store.usage.totals(org, null), [{ model: 'm', requests: 3, promptTokens: 16, completionTokens: 10 }]);
      assert.deepEqual(await h.store.usage.totals(org, at(T0 + 1000)), [{ model: 'm', requests: 2, promptTokens: 6, completionTokens: 6 }]);
      const listed = await h.store.audit.list({ orgId: org, since: null, limit: 10, after: null });
      assert.deepEqual(listed, [carrying[0], plain, carrying[1], failed, truncated]);
    });

    it('writes the same from JSON texts (insertJson), and a retried batch adds no audit record twice', async () => {
      const org = uid('org');
      const base = { orgId: org, userId: 'u', keyId: 'k', requestId: 'r' };
      const records = [audit(org, T0), audit(org, T0 + 1000)];
      const usage = [{ ...base, at: at(T0), model: 'é-model', promptTokens: 3, completionTokens: 1 }];
      const json = (items: readonly unknown[]): Buffer => Buffer.from(JSON.stringify(items));
      await h.store.audit.insertJson({ audit: json(records), usage: json(usage) });
      await h.store.audit.insertJson({ audit: json(records.slice(1)), usage: json([]) });
      await h.store.audit.insertJson({ audit: json([]), usage: json([{ ...usage[0]!, at: at(T0 + 2000), promptTokens: 4 }]) });
      await h.store.audit.insertJson({ audit: json([]), usage: json([]) });
      const listed = await h.store.audit.list({ orgId: org, since: null, limit: 10, after: null });
      assert.deepEqual(listed, records);
      assert.deepEqual(await h.store.usage.totals(org, null), [{ model: 'é-model', requests: 2, promptTokens: 7, completionTokens: 2 }]);
    });

    it('totals usage per model for an organization since a time', async () => {
      const org = uid('org');
      const base = { orgId: org, userId: 'u', keyId: 'k', requestId: 'r' };
      await h.store.usage.insertMany([
        { ...base, at: at(T0), model: 'b', promptTokens: 10, completionTokens: 1 },
        { ...base, at: at(T0 + 1000), model: 'a', promptTokens: 5, completionTokens: 2 },
        { ...base, at: at(T0 + 2000), model: 'a', promptTokens: 7, completionTokens: 3 },
        { ...base, orgId: uid('org'), at: at(T0), model: 'a', promptTokens: 100, completionTokens: 100 },
      ]);
      assert.deepEqual(await h.store.usage.totals(org, null), [
        { model: 'a', requests: 2, promptTokens: 12, completionTokens: 5 },
        { model: 'b', requests: 1, promptTokens: 10, completionTokens: 1 },
      ]);
      assert.deepEqual(await h.store.usage.totals(org, at(T0 + 2000)), [{ model: 'a', requests: 1, promptTokens: 7, completionTokens: 3 }]);
      assert.deepEqual(await h.store.usage.totals(uid('none'), null), []);
    });

    it('groups usage by UTC day, month, model, user and key with cached prompt tokens and cost, from audit-carried and plain usage; sums a period for budgets', async () => {
      const org = uid('org');
      const DAY = 86_400_000;
      const json = (items: readonly unknown[]): Buffer => Buffer.from(JSON.stringify(items));
      // T0 is 2025-03-01T10:00Z; 23:30 on Feb 28 is still February in UTC whatever the server's zone.
      const feb = Date.parse('2025-02-28T23:30:00.000Z');
      const carried: AuditRecord = {
        ...audit(org, T0),
        userId: 'u1',
        keyId: 'k1',
        model: 'm1',
        provider: 'p',
        promptTokens: 10,
        completionTokens: 2,
        cachedPromptTokens: 4,
        cost: 0.25,
      };
      const uncosted: AuditRecord = { ...audit(org, T0 + DAY), userId: 'u2', keyId: null, model: 'm2', provider: 'p', promptTokens: 3, completionTokens: 1 };
      const usage = [
        {
          orgId: org,
          userId: 'u1',
          keyId: 'k2',
          requestId: 'r1',
          at: at(T0 + 1000),
          model: 'm1',
          promptTokens: 5,
          completionTokens: 5,
          cachedPromptTokens: 0,
          cost: 0.5,
        },
        { orgId: org, userId: 'u1', keyId: 'k1', requestId: 'r2', at: at(feb), model: 'm1', promptTokens: 1, completionTokens: 1, cost: 0.125 },
        { orgId: uid('org'), userId: 'u1', keyId: 'k1', requestId: 'r3', at: at(T0), model: 'm1', promptTokens: 100, completionTokens: 100, cost: 9 },
      ];
      await h.store.audit.insertJson({ audit: json([carried, uncosted, audit(org, T0 + 5)]), usage: json(usage) });
      const window = { orgId: org, since: at(feb - DAY), until: at(T0 + 2 * DAY), limit: 100 };
      assert.deepEqual(await h.store.usage.query({ ...window, groupBy: ['day'] }), [
        { day: '2025-02-28', requests: 1, promptTokens: 1, cachedPromptTokens: 0, completionTokens: 1, cost: 0.125 },
        { day: '2025-03-01', requests: 2, promptTokens: 15, cachedPromptTokens: 4, completionTokens: 7, cost: 0.75 },
        { day: '2025-03-02', requests: 1, promptTokens: 3, cachedPromptTokens: 0, completionTokens: 1, cost: 0 },
      ]);
      assert.deepEqual(await h.store.usage.query({ ...window, groupBy: ['month', 'model'] }), [
        { month: '2025-02', model: 'm1', requests: 1, promptTokens: 1, cachedPromptTokens: 0, completionTokens: 1, cost: 0.125 },
        { month: '2025-03', model: 'm1', requests: 2, promptTokens: 15, cachedPromptTokens: 4, completionTokens: 7, cost: 0.75 },
        { month: '2025-03', model: 'm2', requests: 1, promptTokens: 3, cachedPromptTokens: 0, completionTokens: 1, cost: 0 },
      ]);
      assert.deepEqual(await h.store.usage.query({ ...window, groupBy: ['user', 'key'] }), [
        { userId: 'u1', keyId: 'k1', requests: 2, promptTokens: 11, cachedPromptTokens: 4, completionTokens: 3, cost: 0.375 },
        { userId: 'u1', keyId: 'k2', requests: 1, promptTokens: 5, cachedPromptTokens: 0, completionTokens: 5, cost: 0.5 },
        { userId: 'u2', keyId: null, requests: 1, promptTokens: 3, cachedPromptTokens: 0, completionTokens: 1, cost: 0 },
      ]);
      // Filters, the end exclusive, and the limit.
      assert.deepEqual(await h.store.usage.query({ ...window, until: at(T0 + DAY), groupBy: ['key'], userId: 'u1', model: 'm1', keyId: 'k1' }), [
        { keyId: 'k1', requests: 2, promptTokens: 11, cachedPromptTokens: 4, completionTokens: 3, cost: 0.375 },
      ]);
      assert.equal((await h.store.usage.query({ ...window, groupBy: ['day'], limit: 2 })).length, 2);
      // A budget period's use: the organization's, one user's and one key's since the period start.
      assert.deepEqual(await h.store.usage.spent(org, 'u1', 'k1', at(Date.parse('2025-03-01T00:00:00.000Z'))), {
        organization: { tokens: 26, cost: 0.75 },
        user: { tokens: 22, cost: 0.75 },
        key: { tokens: 12, cost: 0.25 },
      });
      assert.deepEqual(await h.store.usage.spent(org, null, null, at(feb)), {
        organization: { tokens: 28, cost: 0.875 },
        user: { tokens: 0, cost: 0 },
        key: { tokens: 0, cost: 0 },
      });
    });

    describe('per-day usage totals', () => {
      const json = (items: readonly unknown[]): Buffer => Buffer.from(JSON.stringify(items));
      const day = (iso: string): number => Date.parse(iso);
      const usageRecord = (orgId: string, atMs: number, fields: Partial<UsageRecord> = {}): UsageRecord => ({
        orgId,
        userId: 'u1',
        keyId: 'k1',
        requestId: uid('req'),
        at: at(atMs),
        model: 'm1',
        promptTokens: 1,
        completionTokens: 1,
        ...fields,
      });
      const call = (orgId: string, atMs: number, fields: Partial<AuditRecord> = {}): AuditRecord => ({
        ...audit(orgId, atMs),
        userId: 'u1',
        keyId: 'k1',
        model: 'm1',
        provider: 'p',
        promptTokens: 1,
        completionTokens: 1,
        ...fields,
      });

      it('equal the raw sums after several batches (statements, JSON texts, a retried batch), the same day and key written twice', async () => {
        const org = uid('org');
        const d1 = day('2025-03-01T00:00:00.000Z');
        const d2 = day('2025-03-02T00:00:00.000Z');
        const first = [
          call(org, d1 + 1000, { promptTokens: 10, completionTokens: 2, cachedPromptTokens: 4, cost: 0.25 }),
          call(org, d1 + 2000, { keyId: null, promptTokens: 3, completionTokens: 1 }),
          audit(org, d1 + 3000),
        ];
        await h.store.audit.insertMany(first, [usageRecord(org, d1 + 4000, { promptTokens: 5, completionTokens: 5, cost: 0.5 })]);
        // The same day, user, key and model again, through the JSON path, and once more retried.
        const second = [call(org, d1 + 5000, { promptTokens: 7, completionTokens: 3, cost: 0.125 })];
        const secondUsage = [usageRecord(org, d2 + 1000, { model: 'm2', promptTokens: 2, completionTokens: 8, cachedPromptTokens: 1, cost: 0.5 })];
        await h.store.audit.insertJson({ audit: json(second), usage: json(secondUsage) });
        await h.store.audit.insertJson({ audit: json(second), usage: json([]) });
        await h.store.audit.insertMany([
          call(org, d2 + 2000, { promptTokens: 1, completionTokens: 1, cost: 0.25 }),
          call(uid('org'), d2, { promptTokens: 50 }),
        ]);
        await h.store.usage.insertMany([usageRecord(org, d2 + 3000, { userId: null, keyId: null, promptTokens: 4, completionTokens: 0 })]);
        // Whole UTC days: read from the totals only.
        const window = { orgId: org, since: at(d1), until: at(d2 + 86_400_000), limit: 100 };
        assert.deepEqual(await h.store.usage.query({ ...window, groupBy: ['day', 'model', 'user', 'key'] }), [
          { day: '2025-03-01', model: 'm1', userId: 'u1', keyId: null, requests: 1, promptTokens: 3, cachedPromptTokens: 0, completionTokens: 1, cost: 0 },
          {
            day: '2025-03-01',
            model: 'm1',
            userId: 'u1',
            keyId: 'k1',
            requests: 3,
            promptTokens: 22,
            cachedPromptTokens: 4,
            completionTokens: 10,
            cost: 0.875,
          },
          { day: '2025-03-02', model: 'm1', userId: null, keyId: null, requests: 1, promptTokens: 4, cachedPromptTokens: 0, completionTokens: 0, cost: 0 },
          { day: '2025-03-02', model: 'm1', userId: 'u1', keyId: 'k1', requests: 1, promptTokens: 1, cachedPromptTokens: 0, completionTokens: 1, cost: 0.25 },
          { day: '2025-03-02', model: 'm2', userId: 'u1', keyId: 'k1', requests: 1, promptTokens: 2, cachedPromptTokens: 1, completionTokens: 8, cost: 0.5 },
        ]);
        // The same windows read from the raw records (no whole day in them) give the same sums.
        const raw = async (since: number, until: number): Promise<UsageGroupRow[]> =>
          h.store.usage.query({ orgId: org, since: at(since), until: at(until), groupBy: ['day'], limit: 100 });
        const wholeDays = await h.store.usage.query({ ...window, groupBy: ['day'] });
        assert.deepEqual(wholeDays, [...(await raw(d1, d1 + 86_399_999)), ...(await raw(d2, d2 + 86_399_999))]);
        assert.deepEqual(wholeDays, [
          { day: '2025-03-01', requests: 4, promptTokens: 25, cachedPromptTokens: 4, completionTokens: 11, cost: 0.875 },
          { day: '2025-03-02', requests: 3, promptTokens: 7, cachedPromptTokens: 1, completionTokens: 9, cost: 0.75 },
        ]);
      });

      it('a window starting or ending mid-day counts only the records inside it', async () => {
        const org = uid('org');
        const d1 = day('2025-03-01T00:00:00.000Z');
        const HOUR = 3_600_000;
        await h.store.audit.insertMany(
          [call(org, d1 + HOUR, { promptTokens: 100 }), call(org, d1 + 10 * HOUR, { promptTokens: 10 })],
          [usageRecord(org, d1 + 20 * HOUR, { promptTokens: 20 })],
        );
        await h.store.audit.insertJson({
          audit: json([call(org, d1 + 24 * HOUR + HOUR, { promptTokens: 1 }), call(org, d1 + 48 * HOUR + 12 * HOUR, { promptTokens: 1000 })]),
          usage: json([usageRecord(org, d1 + 24 * HOUR + 12 * HOUR, { promptTokens: 2 })]),
        });
        const rows = await h.store.usage.query({ orgId: org, since: at(d1 + 9 * HOUR), until: at(d1 + 48 * HOUR + 6 * HOUR), groupBy: ['day'], limit: 100 });
        assert.deepEqual(
          rows.map((r) => [r.day, r.requests, r.promptTokens]),
          [
            ['2025-03-01', 2, 30],
            ['2025-03-02', 2, 3],
          ],
        );
        const [all] = await h.store.usage.query({ orgId: org, since: at(d1 + 10 * HOUR + 1), until: at(d1 + 48 * HOUR + 12 * HOUR), groupBy: [], limit: 100 });
        assert.equal(all?.promptTokens, 23);
        assert.equal(all?.requests, 3);
      });

      it('spent sums a UTC day and a UTC month from the totals', async () => {
        const org = uid('org');
        const march = day('2025-03-01T00:00:00.000Z');
        const d5 = day('2025-03-05T00:00:00.000Z');
        await h.store.audit.insertMany(
          [
            call(org, march - 1, { promptTokens: 1000, cost: 8 }),
            call(org, march, { promptTokens: 10, completionTokens: 0, cost: 0.25 }),
            call(org, d5 - 1, { keyId: 'k2', promptTokens: 20, completionTokens: 0, cost: 0.5 }),
          ],
          [usageRecord(org, d5 + 1000, { promptTokens: 3, completionTokens: 1, cost: 0.125 })],
        );
        await h.store.audit.insertJson({
          audit: json([call(org, d5 + 2000, { userId: 'u2', keyId: 'k3', promptTokens: 5, completionTokens: 5, cost: 0.5 })]),
          usage: json([usageRecord(org, d5 + 3000, { promptTokens: 1, completionTokens: 1 })]),
        });
        assert.deepEqual(await h.store.usage.spent(org, 'u1', 'k1', at(d5)), {
          organization: { tokens: 16, cost: 0.625 },
          user: { tokens: 6, cost: 0.125 },
          key: { tokens: 6, cost: 0.125 },
        });
        assert.deepEqual(await h.store.usage.spent(org, 'u1', 'k2', at(march)), {
          organization: { tokens: 46, cost: 1.375 },
          user: { tokens: 36, cost: 0.875 },
          key: { tokens: 20, cost: 0.5 },
        });
      });
    });
  });
}
