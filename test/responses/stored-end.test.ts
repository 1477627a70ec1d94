// A stored response's end writes the events its log has not stored yet in the same commit as its final
// state (one commit, not a log write and then a commit), on both SQL stores: the log never writes
// them, they are all in the store once the end resolved, and readers in other processes are told.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ConversationTurn } from '../../src/conversations/turn';
import { createMetrics } from '../../src/log/metrics';
import { storedResponse } from '../../src/operations/responses/stored-response';
import type { RequestContext } from '../../src/pipeline/context';
import { createResponseStreams, type ResponseStreams } from '../../src/responses/index';
import type { StoredRange } from '../../src/responses/live-events';
import type { TurnEnd } from '../../src/store/port';
import type { AppServices } from '../../src/services';
import type { ConversationRecord } from '../../src/store/types';
import { openTestStore, type TestStore } from '../helpers/store';
import { responseId, silentLogger } from './helpers';

for (const driver of ['embedded', 'postgres'] as const) {
  describe(`a stored response's end stores its last events with it (${driver})`, function () {
    this.timeout(30_000);
    let t: TestStore;
    let streams: ResponseStreams;
    const logWrites: number[] = [];
    const endEvents: number[] = [];
    const notices: StoredRange[] = [];

    before(async () => {
      t = await openTestStore(driver);
      const responses = t.store.responses;
      streams = createResponseStreams({
        config: { store: t.config, queue: { driver: 'inline', redisUrl: '', prefix: 'test', concurrency: 1, leaseSeconds: 30 } },
        redis: null,
        logger: silentLogger,
        responses: {
          ...responses,
          appendEvents(events) {
            logWrites.push(events.length);
            return responses.appendEvents(events);
          },
        },
        turns: {
          commit(begins, ends: readonly TurnEnd[]) {
            for (const end of ends) endEvents.push(end.events?.length ?? 0);
            return t.store.turns.commit(begins, ends);
          },
          refused: (err) => t.store.turns.refused(err),
        },
        metrics: createMetrics(),
        now: () => new Date(),
        owner: `test:${process.pid}`,
        leaseMs: 30_000,
        // No interval write during the test: what the log would store, it stores on a flush.
        eventLog: { flushIntervalMs: 60_000 },
      });
      const stored = streams.live.stored.bind(streams.live);
      streams.live.stored = (ranges) => {
        notices.push(...ranges);
        stored(ranges);
      };
    });

    after(async () => {
      await streams?.close();
      await t?.cleanup();
    });

    it('one commit writes the final state and the events; the event log writes none of them', async () => {
      const id = responseId();
      const now = new Date().toISOString();
      const conversation: ConversationRecord = {
        id: `conv_${randomUUID().replace(/-/g, '')}`,
        orgId: 'acme',
        userId: 'u',
        runId: null,
        metadata: {},
        createdAt: now,
      };
      const turn: ConversationTurn = {
        conversation,
        responseId: id,
        previousResponseId: null,
        newConversation: conversation,
        recordStored: false,
        turnUntil: new Date(Date.now() + 600_000).toISOString(),
        items: [],
        itemsFor: async () => [],
        begun: () => undefined,
        release: async () => false,
      };
      const ctx = { principal: { orgId: 'acme', userId: 'u' }, resourceIds: {} } as unknown as RequestContext;
      const services = {
        store: t.store,
        responseStreams: streams,
        clock: { now: () => new Date() },
        config: { store: t.config },
        logger: silentLogger,
      } as unknown as AppServices;
      const sink = storedResponse(ctx, services, { model: 'fake', inputItems: [], turn, ending: async () => ({ items: [], contextTokens: null }) });

      const snapshot = { id, object: 'response', status: 'in_progress', output: [] };
      await sink.begin(snapshot);
      const types = ['response.created', 'response.in_progress', 'response.output_text.delta', 'response.output_text.delta', 'response.completed'];
      types.forEach((type, n) => sink.event({ type, sequence_number: n } as never, JSON.stringify({ type, sequence_number: n })));
      await sink.end({ ...snapshot, status: 'completed' });

      assert.deepEqual(logWrites, [], 'the event log wrote nothing: the end took its events');
      assert.deepEqual(endEvents, [5]);
      const record = await t.store.responses.get(id);
      assert.equal(record?.status, 'completed');
      const events = await t.store.responses.listEvents(id, -1);
      assert.deepEqual(
        events.map((e) => e.event),
        types,
      );
      assert.equal(streams.log.pending, 0);
      assert.deepEqual(notices, [{ responseId: id, from: 0, to: 4 }], 'readers elsewhere are told what the end stored');
    });
  });
}
