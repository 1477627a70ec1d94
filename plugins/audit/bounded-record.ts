// Every audit record is bounded in size: values a caller or an upstream chose (ids, a model name)
// could otherwise make one record as large as the request line, and the trail is written at the
// request rate. A record over the bound is rewritten with its values shortened, each cut value
// ending in "…", and `"truncated": true`.

/** Largest serialized record, in UTF-8 bytes. */
export const AUDIT_RECORD_MAX_BYTES = 2048;

/** A record of at most this many UTF-16 code units cannot exceed the bound (3 UTF-8 bytes each at most). */
const SURELY_WITHIN = Math.floor(AUDIT_RECORD_MAX_BYTES / 3);

const MARK = '…';

/** Budgets tried in turn, each tighter: a string field's JSON text, an object field's JSON text. */
const BUDGETS: readonly { text: number; object: number }[] = [
  { text: 96, object: 512 },
  { text: 48, object: 160 },
  { text: 24, object: 2 },
];

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/** `value` cut so that its JSON text (quotes and escapes included) takes at most `budget` bytes. */
function cutText(value: string, budget: number): string {
  if (jsonBytes(value) <= budget) return value;
  const room = budget - Buffer.byteLength(MARK);
  let cut = value.slice(0, room);
  for (let over = jsonBytes(cut) - room; over > 0; over = jsonBytes(cut) - room) {
    // An escaped character takes up to 6 bytes: drop at least as many characters as that explains.
    cut = cut.slice(0, Math.max(0, cut.length - Math.max(1, Math.ceil(over / 6))));
  }
  // Never end on half of a surrogate pair: PostgreSQL refuses a lone surrogate in JSON.
  if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1);
  return cut + MARK;
}

/** An object field (resource ids) with its keys and values cut, entries kept while they fit `budget`. */
function cutObject(value: Record<string, unknown>, text: number, budget: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let size = 2;
  for (const [key, item] of Object.entries(value)) {
    const k = cutText(key, text);
    const v = typeof item === 'string' ? cutText(item, text) : item;
    const added = jsonBytes(k) + 1 + jsonBytes(v) + (size > 2 ? 1 : 0);
    if (size + added > budget) break;
    out[k] = v;
    size += added;
  }
  return out;
}

function shortened(record: Record<string, unknown>, budget: { text: number; object: number }): string {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (typeof value === 'string') out[key] = cutText(value, budget.text);
    else if (value !== null && typeof value === 'object' && !Array.isArray(value))
      out[key] = cutObject(value as Record<string, unknown>, budget.text, budget.object);
    else out[key] = value;
  }
  out['truncated'] = true;
  return JSON.stringify(out);
}

/** The record's JSON text as it is when within the bound, else shortened to fit and marked. */
export function boundedRecord(json: string): string {
  if (json.length <= SURELY_WITHIN || Buffer.byteLength(json) <= AUDIT_RECORD_MAX_BYTES) return json;
  const record = JSON.parse(json) as Record<string, unknown>;
  let text = json;
  for (const budget of BUDGETS) {
    text = shortened(record, budget);
    if (Buffer.byteLength(text) <= AUDIT_RECORD_MAX_BYTES) break;
  }
  return text;
}
