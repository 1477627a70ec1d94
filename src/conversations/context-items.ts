// What a conversation item weighs in a model's context, and how it reads in a transcript. Items are
// Responses-shaped: a stored ConversationItemRecord flattened (`type`, `role` and its `data`), or an
// item of a request's `input` as the caller sent it (a message's `content` a string or parts, a call's
// `call_id`/`name`/`arguments`, an output's `call_id`/`output`).
import type { JsonObject } from '../canonical/model';
import type { ConversationItemRecord } from '../store/types';
import type { TokenCounter } from './tokens';

/**
 * Tokens of an image part, whatever its size: OpenAI bills a 1024×1024 `high` image 765 tokens and
 * Anthropic about 1,600 for its largest; this sits between (the count only decides when to compact).
 */
export const IMAGE_TOKENS = 1_000;
/** Per-item framing (role markers, separators): OpenAI's published message overhead is 3-4 tokens. */
export const ITEM_OVERHEAD_TOKENS = 4;

const isRecord = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);
const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/** A stored item as the Responses item it stands for. */
export function flatItem(record: Pick<ConversationItemRecord, 'type' | 'role' | 'data'>): JsonObject {
  return { ...record.data, type: record.type, ...(record.role === null ? {} : { role: record.role }) };
}

/** The items of a request's `input` (a string is one user message). */
export function inputItems(input: unknown): JsonObject[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return Array.isArray(input) ? input.filter(isRecord) : [];
}

interface ItemWeight {
  texts: string[];
  images: number;
}

/** The texts of a content value (a string or parts) and how many images it holds. */
function contentWeight(content: unknown, into: ItemWeight): void {
  if (typeof content === 'string') {
    into.texts.push(content);
    return;
  }
  if (!Array.isArray(content)) return;
  for (const part of content) {
    if (!isRecord(part)) continue;
    const type = part['type'];
    if (type === 'input_image' || type === 'image') into.images += 1;
    else if (typeof part['text'] === 'string') into.texts.push(part['text']);
    else if (typeof part['refusal'] === 'string') into.texts.push(part['refusal']);
  }
}

/** What of an item reaches the model's context: its texts and images. */
function weightOf(item: JsonObject): ItemWeight {
  const weight: ItemWeight = { texts: [], images: 0 };
  const type = str(item['type']) || 'message';
  if (type === 'message') {
    contentWeight(item['content'], weight);
  } else if (type === 'reasoning') {
    // Readable reasoning summaries; encrypted reasoning is opaque and its size not the model's count.
    const summary = item['summary'];
    if (Array.isArray(summary)) for (const part of summary) if (isRecord(part)) weight.texts.push(str(part['text']));
    contentWeight(item['content'], weight);
  } else if (type.endsWith('_call_output')) {
    contentWeight(item['output'], weight);
  } else if (type.endsWith('_call') && typeof item['arguments'] === 'string') {
    weight.texts.push(str(item['name']), item['arguments']);
  } else {
    // Anything else (hosted tool items, MCP listings): its fields as the model would be shown them.
    const { type: _type, id: _id, status: _status, ...fields } = item;
    weight.texts.push(JSON.stringify(fields));
  }
  return weight;
}

/** Tokens of an item by `counter`. */
export function itemTokens(item: JsonObject, counter: TokenCounter): number {
  const { texts, images } = weightOf(item);
  let tokens = ITEM_OVERHEAD_TOKENS + images * IMAGE_TOKENS;
  for (const text of texts) tokens += counter.count(text);
  return tokens;
}

/**
 * An upper bound of an item's tokens without a tokenizer: no tokenizer makes a token of less than one
 * byte of UTF-8, so its texts' byte length bounds their tokens (an image counts IMAGE_TOKENS).
 */
export function itemTokenBound(item: JsonObject): number {
  const { texts, images } = weightOf(item);
  let bound = ITEM_OVERHEAD_TOKENS + images * IMAGE_TOKENS;
  for (const text of texts) bound += Buffer.byteLength(text, 'utf8');
  return bound;
}

/** The characters of an item's texts (the raw estimate calibration compares with reported usage). */
export function itemChars(item: JsonObject): number {
  let chars = 0;
  for (const text of weightOf(item).texts) chars += text.length;
  return chars;
}

/** The call an item opens (`*_call` with a call_id) or closes (`*_call_output`), if any. */
export function callLink(item: JsonObject): { opens: string } | { closes: string } | null {
  const type = str(item['type']);
  const callId = item['call_id'];
  if (typeof callId !== 'string') return null;
  if (type.endsWith('_call_output')) return { closes: callId };
  if (type.endsWith('_call')) return { opens: callId };
  return null;
}

/** Whether an item begins a turn of the conversation: a user message. */
export function startsTurn(item: JsonObject): boolean {
  return (str(item['type']) || 'message') === 'message' && item['role'] === 'user';
}

const SPEAKERS: Record<string, string> = { user: 'User', assistant: 'Assistant', system: 'System', developer: 'Developer' };

/** An item as a transcript entry for the summariser (null: nothing worth summarising). */
export function transcriptEntry(item: JsonObject): string | null {
  const type = str(item['type']) || 'message';
  if (type === 'reasoning') return null;
  const { texts, images } = weightOf(item);
  const text = texts.join('\n') + (images > 0 ? `${texts.length > 0 ? '\n' : ''}[${images} image${images === 1 ? '' : 's'}]` : '');
  if (type === 'message') return `${SPEAKERS[str(item['role'])] ?? 'Message'}: ${text}`;
  if (type.endsWith('_call_output')) return `Tool result (${str(item['call_id'])}): ${text}`;
  if (type.endsWith('_call') && typeof item['arguments'] === 'string') {
    return `Assistant called tool ${str(item['name'])} (${str(item['call_id'])}) with: ${item['arguments']}`;
  }
  return `[${type}] ${text}`;
}
