import assert from 'node:assert/strict';
import { createLogger } from '../../../src/log/logger';
import { createStore } from '../../../src/store/index';
import type { Store } from '../../../src/store/port';
import { openTestStore, type TestStoreDriver } from '../../helpers/store';
import { agentUpsert, at, runRecord, T0, uid } from './fixtures';

const logger = createLogger({ level: 'error', silent: true });

export function lifecycleContract(driver: TestStoreDriver): void {
  describe('prune', () => {
    it('deletes finished runs (verdicts, conversation), audit and usage older than the cutoff; responses go by their own expiry', async () => {
      const t = await openTestStore(driver);
      try {
        const s = t.store;
        const cutoff = at(T0 + 10_000);
        const org = uid('org');
        const agentId = uid('agent');
        const oldRun = runRecord({ orgId: org, agentId, createdAt: at(T0), status: 'success' });
        const oldActive = runRecord({ orgId: org, agentId, createdAt: at(T0) });
        const newRun = runRecord({ orgId: org, agentId, createdAt: at(T0 + 20_000), status: 'failure' });
        for (const r of [oldRun, oldActive, newRun]) await s.runs.create(r);
        await s.steps.init(oldRun.id, [{ stepNumber: 1, name: null }]);
        await s.steps.init(newRun.id, [{ stepNumber: 1, name: null }]);
        await s.conversations.create({ id: oldRun.conversationId, orgId: org, userId: 'u', runId: oldRun.id, metadata: {}, createdAt: at(T0) });
        await s.conversations.append(oldRun.conversationId, [
          { id: 'm1', type: 'message', role: 'user', data: {}, status: 'completed', idempotencyKey: null, responseId: null },
        ]);
        const resp = (id: string, ms: number) => ({
          id,
          orgId: org,
          userId: 'u',
          status: 'completed' as const,
          model: 'demo',
          conversationId: null,
          previousResponseId: null,
          stored: true,
          body: {},
          inputItems: [],
          createdAt: at(ms),
          updatedAt: at(ms),
          expiresAt: null,
        });
        await s.responses.create(resp('old-resp', T0));
        await s.responses.create(resp('new-resp', T0 + 20_000));
        await s.responses.appendEvents([{ responseId: 'old-resp', sequenceNumber: 0, event: 'e', data: {}, createdAt: at(T0) }]);
        await s.responses.appendEvents([{ responseId: 'new-resp', sequenceNumber: 0, event: 'e', data: {}, createdAt: at(T0 + 20_000) }]);
        const auditRecord = (id: string, ms: number) => ({
          id,
          at: at(ms),
          orgId: org,
          userId: null,
          keyId: null,
          method: 'GET',
          route: '/x',
          operationId: null,
          resourceIds: {},
          status: 200,
          latencyMs: 1,
          requestId: id,
        });
        await s.audit.insertMany([auditRecord('old-audit', T0), auditRecord('new-audit', T0 + 20_000)]);
        await s.usage.insertMany([
          { at: at(T0), orgId: org, userId: null, keyId: null, model: 'old', promptTokens: 1, completionTokens: 1, requestId: 'a' },
          { at: at(T0 + 20_000), orgId: org, userId: null, keyId: null, model: 'new', promptTokens: 1, completionTokens: 1, requestId: 'b' },
        ]);

        // Responses conversations: one idle since before the cutoff goes with its items; one with a
        // recent item, one whose turn is in progress and a new one stay.
        const idle = uid('conv');
        const active = uid('conv');
        const busy = uid('conv');
        const fresh = uid('conv');
        for (const [id, ms] of [
          [idle, T0],
          [active, T0],
          [busy, T0],
          [fresh, T0 + 20_000],
        ] as const) {
          await s.conversations.create({ id, orgId: org, userId: 'u', runId: null, metadata: {}, createdAt: at(ms) });
        }
        const message = { id: 'm1', type: 'message', role: 'user', data: {}, status: 'completed', idempotencyKey: null, responseId: null };
        await s.conversations.append(active, [message]); // appended now: after the cutoff
        assert.equal(await s.conversations.claimTurn(busy, 'resp_busy', at(T0), at(T0 + 60_000)), true);

        const pruned = await s.prune(cutoff);
        assert.deepEqual({ runs: pruned.runs, conversations: pruned.conversations }, { runs: 1, conversations: 1 });
        // The caller is told which conversations went (their workspaces and tool sessions go next).
        assert.deepEqual(
          [...pruned.gone].sort((a, b) => a.id.localeCompare(b.id)),
          [
            { orgId: org, id: oldRun.conversationId },
            { orgId: org, id: idle },
          ].sort((a, b) => a.id.localeCompare(b.id)),
        );
        assert.equal(await s.conversations.get(idle), null);
        for (const id of [active, busy, fresh]) assert.ok(await s.conversations.get(id), id);
        assert.equal((await s.conversations.listItems(active, { order: 'asc', limit: 10 })).length, 1);

        assert.equal(await s.runs.get(oldRun.id), null);
        assert.ok(await s.runs.get(oldActive.id), 'in-progress runs are left to their worker');
        assert.ok(await s.runs.get(newRun.id));
        assert.deepEqual(await s.steps.list(oldRun.id), []);
        assert.equal((await s.steps.list(newRun.id)).length, 1);
        assert.equal(await s.conversations.get(oldRun.conversationId), null);
        assert.deepEqual(await s.conversations.listItems(oldRun.conversationId, { order: 'asc', limit: 10 }), []);
        // Responses carry their own expiry (responses.prune, in the responses contract): an old one
        // without an expiry is not the run cutoff's to delete.
        assert.ok(await s.responses.get('old-resp'));
        assert.equal((await s.responses.listEvents('old-resp', -1)).length, 1);
        assert.ok(await s.responses.get('new-resp'));
        assert.equal((await s.responses.listEvents('new-resp', -1)).length, 1);
        assert.deepEqual(
          (await s.audit.list({ orgId: org, since: null, limit: 10, after: null })).map((r) => r.id),
          ['new-audit'],
        );
        assert.deepEqual(
          (await s.usage.totals(org, null)).map((u) => u.model),
          ['new'],
        );
        assert.deepEqual(await s.prune(cutoff), { runs: 0, conversations: 0, gone: [] });
      } finally {
        await t.cleanup();
      }
    });
  });

  describe('durability and migration', () => {
    it('keeps everything across a close and reopen of the same store; migrate is idempotent', async () => {
      const t = await openTestStore(driver);
      let reopened: Store | null = null;
      try {
        const org = uid('org');
        await t.store.organizations.upsert({ id: org, name: 'Durable', models: ['*'], rateLimit: null, dlp: null });
        await t.store.users.upsert({ id: 'dana', orgId: org, name: 'Dana', role: 'admin' });
        await t.store.keys.create({
          id: 'key-1',
          orgId: org,
          userId: 'dana',
          name: 'k',
          hash: 'durable-hash',
          prefix: 'agw_dura',
          source: 'bootstrap',
          createdAt: at(T0),
          lastUsedAt: null,
          revokedAt: null,
          expiresAt: null,
          models: null,
          budgets: [],
        });
        await t.store.audit.insertMany([
          {
            id: 'a1',
            at: at(T0),
            orgId: org,
            userId: 'dana',
            keyId: 'key-1',
            method: 'GET',
            route: '/v1/models',
            operationId: 'listModels',
            resourceIds: {},
            status: 200,
            latencyMs: 2,
            requestId: 'r1',
          },
        ]);
        const { agent } = await t.store.agents.upsert(agentUpsert({ id: 'agent-d', orgId: org }));
        const run = runRecord({ orgId: org, agentId: agent.id });
        await t.store.runs.create(run);
        await t.store.conversations.create({ id: run.conversationId, orgId: org, userId: 'dana', runId: run.id, metadata: {}, createdAt: at(T0) });
        await t.store.conversations.append(run.conversationId, [
          { id: 'm1', type: 'message', role: 'user', data: { text: 'x' }, status: 'completed', idempotencyKey: 'k1', responseId: null },
        ]);
        const secret = await t.store.settings.setIfAbsent('webhook-secret', 's3cr3t');
        await t.store.close();

        reopened = await createStore(t.config, { logger });
        await reopened.migrate();
        await reopened.ping();
        assert.equal((await reopened.keys.resolve('durable-hash'))?.user.name, 'Dana');
        assert.deepEqual(
          (await reopened.audit.list({ orgId: org, since: null, limit: 10, after: null })).map((r) => r.id),
          ['a1'],
        );
        assert.deepEqual(await reopened.runs.get(run.id), run);
        assert.equal((await reopened.agents.get('agent-d'))?.definitionHash, agent.definitionHash);
        assert.equal(await reopened.settings.get('webhook-secret'), secret);
        const appended = await reopened.conversations.append(run.conversationId, [
          { id: 'm1b', type: 'message', role: 'user', data: {}, status: 'completed', idempotencyKey: 'k1', responseId: null },
          { id: 'm2', type: 'message', role: 'assistant', data: {}, status: 'completed', idempotencyKey: null, responseId: null },
        ]);
        assert.deepEqual(
          appended.map((i) => [i.id, i.position]),
          [
            ['m1', 1],
            ['m2', 2],
          ],
          'positions and idempotency keys survive',
        );
      } finally {
        await reopened?.close();
        await t.cleanup();
      }
    });
  });
}
