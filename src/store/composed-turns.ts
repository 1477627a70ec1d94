// TurnRepository over the single-record operations, for a backend without multi-document
// transactions (MongoDB): each beginning and end is written on its own, in order. Not all or nothing:
// a failure part-way leaves what was written (a beginning's conversation without its response is an
// empty conversation whose turn lapses; an end's items without its finish are the turn's output,
// and the response is failed by the lapsed-lease sweeper).
import type { ConversationRepository, ResponseRepository, TurnRepository } from './port';

export function composedTurns(conversations: ConversationRepository, responses: ResponseRepository, refused: (err: unknown) => boolean): TurnRepository {
  return {
    refused,
    async commit(begins, ends) {
      for (const begin of begins) {
        if (begin.conversation) {
          await conversations.create(begin.conversation);
          await conversations.claimTurn(begin.conversation.id, begin.response.id, begin.response.createdAt, begin.turnUntil);
        }
        await responses.create(begin.response);
      }
      const finished: string[] = [];
      for (const end of ends) {
        // The log before the terminal write: a response read as finished has its whole log.
        if (end.events && end.events.length > 0) await responses.appendEvents(end.events);
        await conversations.endTurn(end.conversationId, end.responseId, end.items, end.contextTokens);
        if (end.inputItems) await responses.update(end.responseId, { inputItems: end.inputItems });
        if (await responses.finish(end.responseId, end.outcome, { whenStatus: 'in_progress' })) finished.push(end.responseId);
      }
      return { finished };
    },
  };
}
