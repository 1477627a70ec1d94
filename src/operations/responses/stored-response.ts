// The sink of a stored response (spec rule 9, "Stored response"): a turn of a stored conversation.
// Its record is written when the response starts (status in_progress, leased to this process so a
// crash leaves it failed, not in progress for ever; a conversation it starts is written with it), each
// event goes to the batched event log as the caller gets it (published live at once, stored off the
// hot path), and at its end the log's last events, the turn's items appended to the conversation and
// the final object are written in one commit. The beginning and the end go through the turn writer's
// group commit (src/responses/turn-writer.ts): concurrent responses share transactions.
import type { ConversationTurn } from '../../conversations/turn';
import type { RequestContext } from '../../pipeline/context';
import { responseExpiry } from '../../responses';
import type { AppServices } from '../../services';
import type { NewConversationItem, ResponseOutcome, ResponseStatus } from '../../store/types';
import type { ResponseEventPayload, ResponseSink } from './response-sink';
import { eventRecords, type QueuedEvent } from '../../responses/event-queue';

const FINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'incomplete', 'cancelled']);

export interface StoredResponseInit {
  model: string;
  inputItems: Record<string, unknown>[];
  turn: ConversationTurn;
  /** What the conversation keeps of the final response: its items and the context size (none when it failed). */
  ending(final: Record<string, unknown>): Promise<{ items: NewConversationItem[]; contextTokens: number | null }>;
}

export function storedResponse(
  ctx: RequestContext,
  services: Pick<AppServices, 'store' | 'responseStreams' | 'clock' | 'config' | 'logger'>,
  init: StoredResponseInit,
): ResponseSink {
  const { responseStreams: streams } = services;
  const { turn } = init;
  let id: string | null = null;
  return {
    async begin(snapshot) {
      id = String(snapshot['id']);
      const now = services.clock.now().toISOString();
      // A continuing turn's record was written with its claim; a first turn's (with its new
      // conversation) is written now.
      if (!turn.recordStored)
        await streams.turns.begin({
          conversation: turn.newConversation,
          turnUntil: turn.turnUntil,
          response: {
            id,
            orgId: ctx.principal?.orgId ?? 'default',
            userId: ctx.principal?.userId ?? 'anonymous',
            status: 'in_progress',
            model: init.model,
            conversationId: turn.conversation.id,
            previousResponseId: turn.previousResponseId,
            stored: true,
            body: snapshot,
            inputItems: init.inputItems,
            createdAt: now,
            updatedAt: now,
            expiresAt: responseExpiry(now, services.config.store.retentionDays),
            lease: streams.leases.leaseFor(),
          },
        });
      turn.begun();
      streams.leases.hold(id);
      ctx.resourceIds['response_id'] = id;
    },
    event(event: ResponseEventPayload, json?: string) {
      if (id === null) return;
      streams.log.append(
        id,
        json === undefined
          ? { sequenceNumber: event.sequence_number, event: event.type, data: event }
          : { sequenceNumber: event.sequence_number, event: event.type, data: event, json },
      );
    },
    async end(final) {
      if (id === null) return;
      // The log's last events go with the end: one commit, and a response read as finished has its log.
      let rest: QueuedEvent[] = [];
      try {
        rest = await streams.log.takeRest(id);
      } catch (err) {
        // The log is incomplete; the final object is still written (a plain GET stays right).
        services.logger.warn('response event log not fully stored', { responseId: id, errorName: err instanceof Error ? err.name : 'unknown' });
      }
      const status = String(final['status']);
      const outcome: ResponseOutcome = {
        status: (FINAL_STATUSES.has(status) ? status : 'failed') as Exclude<ResponseStatus, 'queued' | 'in_progress'>,
        body: FINAL_STATUSES.has(status) ? final : { ...final, status: 'failed' },
      };
      let ending: { items: NewConversationItem[]; contextTokens: number | null } = { items: [], contextTokens: null };
      try {
        ending = await init.ending(final);
      } catch (err) {
        // The response itself is still written: its caller got it; the conversation lacks this turn.
        services.logger.error('conversation turn items not built', { responseId: id, errorName: err instanceof Error ? err.name : 'unknown' });
      }
      try {
        await streams.turns.end({
          responseId: id,
          outcome,
          conversationId: turn.conversation.id,
          items: ending.items,
          contextTokens: ending.contextTokens,
          // A continuing turn's record was written before its input was inspected: its input items now.
          ...(turn.recordStored ? { inputItems: init.inputItems } : {}),
          ...(rest.length > 0 ? { events: eventRecords(rest) } : {}),
        });
      } finally {
        // Held until the end is written: an end waiting for a store that is away (TurnWriter) keeps the
        // response from the lapsed-lease sweeper meanwhile.
        streams.leases.release(id);
      }
      streams.log.storedWithEnd(rest);
    },
  };
}
