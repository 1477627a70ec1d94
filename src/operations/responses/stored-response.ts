// The sink of a `store: true` response (spec rule 9, "Stored response"): the record is created when the
// response starts (status in_progress, leased to this process so a crash leaves it failed, not in
// progress for ever), each event goes to the batched event log as the caller gets it (published live
// at once, stored off the hot path), and the final object is written once the log is durable and the
// turn's items are in its conversation.
import type { RequestContext } from '../../pipeline/context';
import { responseExpiry } from '../../responses';
import type { AppServices } from '../../services';
import type { ResponseOutcome, ResponseStatus } from '../../store/types';
import type { ResponseEventPayload, ResponseSink } from './response-sink';

const FINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'incomplete', 'cancelled']);

export interface StoredResponseInit {
  model: string;
  inputItems: Record<string, unknown>[];
  conversationId: string;
  previousResponseId: string | null;
  /**
   * Runs with the final object once the event log is stored, before the terminal write: the
   * conversation's items are appended before a reader can see the response finished.
   */
  beforeFinish(final: Record<string, unknown>): Promise<void>;
}

export function storedResponse(
  ctx: RequestContext,
  services: Pick<AppServices, 'store' | 'responseStreams' | 'clock' | 'config' | 'logger'>,
  init: StoredResponseInit,
): ResponseSink {
  const { store, responseStreams: streams } = services;
  let id: string | null = null;
  return {
    async begin(snapshot) {
      id = String(snapshot['id']);
      const now = services.clock.now().toISOString();
      await store.responses.create({
        id,
        orgId: ctx.principal?.orgId ?? 'default',
        userId: ctx.principal?.userId ?? 'anonymous',
        status: 'in_progress',
        model: init.model,
        conversationId: init.conversationId,
        previousResponseId: init.previousResponseId,
        stored: true,
        body: snapshot,
        inputItems: init.inputItems,
        createdAt: now,
        updatedAt: now,
        expiresAt: responseExpiry(now, services.config.store.retentionDays),
        lease: streams.leases.leaseFor(),
      });
      streams.leases.hold(id);
      ctx.resourceIds['response_id'] = id;
    },
    event(event: ResponseEventPayload) {
      if (id !== null) streams.log.append(id, { sequenceNumber: event.sequence_number, event: event.type, data: event });
    },
    async end(final) {
      if (id === null) return;
      try {
        await streams.log.flush(id);
      } catch (err) {
        // The log is incomplete; the final object is still written (a plain GET stays right).
        services.logger.warn('response event log not fully stored', { responseId: id, errorName: err instanceof Error ? err.name : 'unknown' });
      } finally {
        streams.leases.release(id);
      }
      const status = String(final['status']);
      try {
        await init.beforeFinish(final);
      } catch (err) {
        // The response itself is still written: its caller got it; the conversation lacks this turn.
        services.logger.error('conversation turn not stored', { responseId: id, errorName: err instanceof Error ? err.name : 'unknown' });
      }
      const outcome: ResponseOutcome = {
        status: (FINAL_STATUSES.has(status) ? status : 'failed') as Exclude<ResponseStatus, 'queued' | 'in_progress'>,
        body: FINAL_STATUSES.has(status) ? final : { ...final, status: 'failed' },
      };
      await store.responses.finish(id, outcome, { whenStatus: 'in_progress' });
    },
  };
}
