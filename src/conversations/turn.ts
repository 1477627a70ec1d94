// One turn of a stored Responses conversation (spec "POST /v1/responses" rules 2-5): which
// conversation the request continues (`conversation`, `previous_response_id`, or a new one for
// `store: true` alone), the turn held for this response so two requests never interleave their turns
// in one conversation, the prior history loaded server-side, and at the end the turn's items appended.
//
// Concurrent turns are refused, not queued: a second request continuing a conversation whose turn is
// held gets 409 `conversation_locked` at once (the OpenAI Conversations API's answer too). Queueing
// would hold an HTTP request open for as long as another model call lasts, with nothing to show for
// it, and the caller's retry knows better what to send once it has read the first answer.
import { GatewayError } from '../http/errors';
import type { Store } from '../store/port';
import type { ConversationItemRecord, ConversationRecord, NewConversationItem, Principal, ResponseRecord } from '../store/types';
import { newConversationId } from '../runs/ids';
import { storedItem } from './history';

type Json = Record<string, unknown>;

/**
 * The backstop on a held turn: a continuing turn's leased response record is written with its claim
 * (and a first turn's conversation with its record), so a dead holder's turn is freed once the
 * sweeper fails its response; this deadline only bounds a turn whose record is somehow missing.
 */
export const TURN_START_MS = 10 * 60_000;

/** Page size of the history load (a conversation's items after its summary). */
const HISTORY_PAGE = 500;

export interface TurnRequest {
  conversation?: unknown;
  previous_response_id?: unknown;
}

export interface ConversationTurn {
  readonly conversation: ConversationRecord;
  readonly responseId: string;
  /** The response this turn continues from (echoed in the response object), or null. */
  readonly previousResponseId: string | null;
  /** The conversation this turn starts (`store: true` alone): written with the response record, its turn held by it. */
  readonly newConversation: ConversationRecord | null;
  /**
   * The response's record was written with the claim (a continuing turn: no write at its first byte;
   * its input items and final object are written at its end). A first turn's is written at its start.
   */
  readonly recordStored: boolean;
  /** Until when the turn is held before its response exists (TURN_START_MS from its claim). */
  readonly turnUntil: string;
  /** The stored items the model is sent before the new turn (after the summary). */
  readonly items: readonly ConversationItemRecord[];
  /** The items a completed turn appends: its input (as inspected), then its output; ids unique in the conversation. */
  itemsFor(input: readonly Json[], output: readonly Json[]): Promise<NewConversationItem[]>;
  /** The response's record is stored: from now on the turn ends with the response's terminal write. */
  begun(): void;
  /**
   * Undoes the turn when it ends before its response began (nothing appended, a record written with
   * the claim deleted, the conversation freed); true when it did. Else nothing. Safe to call twice.
   */
  release(): Promise<boolean>;
}

export interface TurnDeps {
  store: Store;
  now(): Date;
}

function conversationIdOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && typeof (value as Json)['id'] === 'string') return (value as Json)['id'] as string;
  return null;
}

/** A new conversation for a first turn: written with the turn's response record (TurnRepository.commit). */
function newConversation(deps: TurnDeps, principal: Principal): ConversationRecord {
  // A first turn that fails before its response begins leaves no empty conversation behind, and
  // nobody knows its id before then: nobody to race for its turn.
  return {
    id: newConversationId(),
    orgId: principal.orgId,
    userId: principal.userId,
    runId: null,
    metadata: { source: 'responses' },
    createdAt: deps.now().toISOString(),
    summary: null,
    contextTokens: null,
  };
}

/**
 * The conversation a continuing request names, visible to the caller, with its turn claimed for the
 * response (one store round trip): 404s and the 409 as the spec's table and the module comment say.
 */
async function claimedConversation(
  deps: TurnDeps,
  principal: Principal,
  request: TurnRequest,
  response: ResponseRecord,
  now: Date,
  until: string,
): Promise<{ conversation: ConversationRecord; items?: ConversationItemRecord[] }> {
  const previous = typeof request.previous_response_id === 'string' ? request.previous_response_id : null;
  const wanted = previous === null ? conversationIdOf(request.conversation) : null;
  const ref = previous !== null ? { previousResponseId: previous } : { conversationId: wanted ?? '' };
  const opened = await deps.store.conversations.openTurn(principal, ref, response, now.toISOString(), until);
  const param = previous !== null ? 'previous_response_id' : 'conversation';
  switch (opened.kind) {
    case 'claimed':
      return opened;
    case 'not_found':
      if (previous !== null) throw new GatewayError('previous_response_not_found', `Previous response with id '${previous}' not found.`, { param });
      throw new GatewayError('not_found', `Conversation with id '${wanted}' not found.`, { param });
    case 'run':
      // A run's conversation is written by the run's execution; a Responses turn would interleave with it.
      throw new GatewayError(
        'bad_request',
        `Conversation '${opened.conversationId}' belongs to a run; read it with GET /v1/conversations/${opened.conversationId}/items.`,
        { param },
      );
    case 'locked':
      throw new GatewayError(
        'conversation_locked',
        `Another response is being generated in conversation '${opened.conversationId}'; send this turn again once it has finished.`,
        { param },
      );
  }
}

async function loadItems(store: Store, conversation: ConversationRecord): Promise<ConversationItemRecord[]> {
  const items: ConversationItemRecord[] = [];
  let after = conversation.summary?.through;
  for (;;) {
    const page = await store.conversations.listItems(conversation.id, {
      order: 'asc',
      limit: HISTORY_PAGE,
      ...(after !== undefined ? { afterPosition: after } : {}),
    });
    items.push(...page);
    if (page.length < HISTORY_PAGE) return items;
    after = page[page.length - 1]!.position;
  }
}

/**
 * Opens the turn of response `responseId`: the conversation resolved (and visible to the caller), its
 * turn claimed (409 when another response holds it), its history loaded. A new conversation has no
 * history and nobody to race: it is held from its insert on.
 */
export async function beginTurn(deps: TurnDeps, principal: Principal, request: TurnRequest, response: ResponseRecord): Promise<ConversationTurn> {
  const responseId = response.id;
  const { store } = deps;
  const now = deps.now();
  const turnUntil = new Date(now.getTime() + TURN_START_MS).toISOString();
  const continuing = request.previous_response_id != null || request.conversation != null;
  const opened: { conversation: ConversationRecord; items?: ConversationItemRecord[] } = continuing
    ? await claimedConversation(deps, principal, request, response, now, turnUntil)
    : { conversation: newConversation(deps, principal) };
  const current = opened.conversation;
  const previous = typeof request.previous_response_id === 'string' ? request.previous_response_id : null;
  let open = continuing;
  const release = async (): Promise<boolean> => {
    if (!open) return false;
    open = false;
    await store.conversations.abandonTurn(current.id, responseId);
    return true;
  };
  let items: ConversationItemRecord[] = opened.items ?? [];
  if (continuing && !opened.items) {
    try {
      // Read after the claim: nothing can be appended to the conversation meanwhile.
      items = await loadItems(store, current);
    } catch (err) {
      await release().catch(() => undefined);
      throw err;
    }
  }
  return {
    conversation: current,
    responseId,
    previousResponseId: previous,
    newConversation: continuing ? null : current,
    recordStored: continuing,
    turnUntil,
    items,
    async itemsFor(input, output) {
      // Items a summary covers were not loaded: an upstream id among them is looked up (compaction).
      const earlier = current.summary ? await storedIds(store, current.id, output) : [];
      return turnItems(input, output, responseId, [...items.map((item) => item.id), ...earlier]);
    },
    begun() {
      open = false;
    },
    release,
  };
}

/** The ids among the output's that items of the conversation already have. */
async function storedIds(store: Store, conversationId: string, output: readonly Json[]): Promise<string[]> {
  const ids = output.flatMap((item) => (typeof item['id'] === 'string' && item['id'] !== '' ? [item['id']] : []));
  const found = await Promise.all(ids.map((id) => store.conversations.getItem(conversationId, id)));
  return found.flatMap((item) => (item ? [item.id] : []));
}

/** The items a turn appends: its input, then its output; ids unique in the conversation (`existing`: ids in use). */
function turnItems(input: readonly Json[], output: readonly Json[], responseId: string, existing: readonly string[]): NewConversationItem[] {
  const taken = new Set(existing);
  return [...input.map((item) => ({ ...item, id: undefined })), ...output].map((item) => {
    const stored = storedItem(item, responseId);
    // An upstream's item ids need not be unique (ours are): a repeated one gets a fresh id.
    if (taken.has(stored.id)) return storedItem({ ...item, id: undefined }, responseId);
    taken.add(stored.id);
    return stored;
  });
}
