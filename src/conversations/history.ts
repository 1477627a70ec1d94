// A stored conversation as the model is sent it, and a turn's items as the conversation stores them
// (spec "POST /v1/responses" rules 4-6, "Responses input items"). Stored items are OpenAI
// conversation-item shaped (id, type, role, content, status); the model gets Responses input items
// without ids (they are ours, unknown to any upstream) and without what the stateful path does not
// carry: an image's `detail` hint, file parts, reasoning (provider-private state).
import { mintId } from '../formats/responses';
import type { ConversationItemRecord, ConversationRecord, NewConversationItem } from '../store/types';

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The text the model is sent in place of the turns a compaction summarised. */
export function summaryMessage(summary: string, role: 'developer' | 'user' = 'developer'): Json {
  return { type: 'message', role, content: `Summary of the earlier part of this conversation:\n${summary}` };
}

/** A content part as the stateful path carries it: images without `detail`, no files; else as given. */
function statefulPart(part: unknown): unknown {
  if (!isRecord(part)) return part;
  if (part['type'] === 'input_file') return undefined;
  if (part['type'] === 'input_image' && 'detail' in part) {
    const { detail: _detail, ...rest } = part;
    return rest;
  }
  return part;
}

function statefulContent(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  return content.map(statefulPart).filter((part) => part !== undefined);
}

/**
 * The new turn's input as the stateful path sends and stores it: a string is one user message; every
 * message's parts lose `detail` and file parts; `item_reference`s to items already in the history are
 * dropped (the history carries them), others to items of the conversation are resolved to those items.
 */
export function statefulInput(input: unknown, resolved: ReadonlyMap<string, Json>, inHistory: ReadonlySet<string>): Json[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  if (!Array.isArray(input)) return [];
  const items: Json[] = [];
  for (const entry of input) {
    if (!isRecord(entry)) continue;
    if (entry['type'] === 'item_reference') {
      const id = String(entry['id']);
      if (inHistory.has(id)) continue;
      const item = resolved.get(id);
      if (item) items.push(toModelItem(item) ?? item);
      continue;
    }
    const type = entry['type'] ?? 'message';
    if (type === 'message') {
      const { id: _id, status: _status, ...rest } = entry;
      items.push({ ...rest, type: 'message', content: statefulContent(entry['content']) });
    } else {
      items.push(entry);
    }
  }
  return items;
}

/** The item ids an input references with `item_reference`, with their positions in `input`. */
export function referencedItemIds(input: unknown): Array<{ id: string; index: number }> {
  if (!Array.isArray(input)) return [];
  return input.flatMap((e: unknown, index) => (isRecord(e) && e['type'] === 'item_reference' && typeof e['id'] === 'string' ? [{ id: e['id'], index }] : []));
}

/** One stored item as the model is sent it, or null for what the model is not sent. */
function toModelItem(data: Json): Json | null {
  switch (data['type']) {
    case 'message':
      return { type: 'message', role: data['role'], content: statefulContent(data['content']) };
    case 'function_call':
      return { type: 'function_call', call_id: data['call_id'], name: data['name'], arguments: data['arguments'] };
    case 'function_call_output':
      return { type: 'function_call_output', call_id: data['call_id'], output: data['output'] };
    case 'svc_call':
      // A call the gateway ran: the model reads it as its own call and the result it was shown.
      return { type: 'svc_call', call_id: data['call_id'], name: data['name'], arguments: data['arguments'], output: data['output'], error: data['error'] };
    case 'mcp_call':
      // A Responses turn's mcp_call is its own call (its id); an agent run's also names the call_id
      // of the function_call it answers.
      return {
        type: 'mcp_call',
        id: data['id'],
        ...(typeof data['call_id'] === 'string' ? { call_id: data['call_id'] } : {}),
        server_label: data['server_label'],
        name: data['name'],
        arguments: data['arguments'],
        output: data['output'],
        error: data['error'],
      };
    default:
      // reasoning (provider-private), compaction (sent as the summary), anything else: not sent.
      return null;
  }
}

/**
 * A stored item as the model is sent it, or null for what the model is not sent. The item's id is
 * kept beside its data (storedItem moves it out): an `mcp_call` has no call id of its own but that.
 */
export function historyItem(item: Pick<ConversationItemRecord, 'id' | 'type' | 'role' | 'data'>): Json | null {
  return toModelItem({ ...item.data, id: item.id, type: item.type, ...(item.role !== null ? { role: item.role } : {}) });
}

/** The input items the model is sent for a conversation's stored history (summary first). */
export function historyInput(conversation: Pick<ConversationRecord, 'summary'>, items: readonly ConversationItemRecord[]): Json[] {
  const input: Json[] = [];
  for (const item of items) {
    const sent = historyItem(item);
    if (sent) input.push(sent);
  }
  if (!conversation.summary) return input;
  // A cut inside a turn leaves history that starts with the model's side (an assistant message, a
  // call's output): providers that need a conversation to open with the user (the Anthropic family)
  // get the summary as that opening user message.
  const first = input[0];
  const opensWithUser = first === undefined || (first['type'] === 'message' && first['role'] === 'user');
  return [summaryMessage(conversation.summary.text, opensWithUser ? 'developer' : 'user'), ...input];
}

type ItemPrefix = Parameters<typeof mintId>[0];

const PREFIX: Readonly<Record<string, ItemPrefix>> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', reasoning: 'rs' };

/** A turn's item (input as inspected, or output as generated) as the conversation stores it. */
export function storedItem(item: Json, responseId: string): NewConversationItem {
  const type = typeof item['type'] === 'string' ? item['type'] : 'message';
  const existing = item['id'];
  const id = typeof existing === 'string' && existing !== '' ? existing : mintId(PREFIX[type] ?? 'msg');
  const textType = item['role'] === 'assistant' ? 'output_text' : 'input_text';
  const content = type === 'message' && typeof item['content'] === 'string' ? [{ type: textType, text: item['content'] }] : item['content'];
  const data: Json = { ...item, type, ...(content !== undefined ? { content } : {}) };
  delete data['id'];
  const status = typeof item['status'] === 'string' ? item['status'] : 'completed';
  delete data['status'];
  return { id, type, role: typeof item['role'] === 'string' ? item['role'] : null, data, status, idempotencyKey: null, responseId };
}
