// The pieces every format's DLP walk is made of. Walks run on the request's own deep copy (the
// caller's parsed body is never touched) and edit it in place; what they leave is what goes upstream,
// re-serialised, so what is forwarded is exactly what was inspected.
import { parseBoundedJson } from '../../http/json-depth';
import type { Redactor } from '../../pipeline/context';

export type JsonRecord = Record<string, unknown>;

export const isRecord = (value: unknown): value is JsonRecord => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Redacts `holder[key]` when it is a string. */
export function redactField(holder: JsonRecord, key: string, redactor: Redactor): void {
  const value = holder[key];
  if (typeof value === 'string' && value !== '') holder[key] = redactor.redact(value).text;
}

/**
 * Redacts every string value under `value` (object keys are names, not text, and stay), skipping the
 * properties named in `keep` (ids, types, signatures: structure the upstream checks, not text).
 */
export function redactStrings(value: unknown, redactor: Redactor, keep: ReadonlySet<string> = NO_KEYS): unknown {
  if (typeof value === 'string') return value === '' ? value : redactor.redact(value).text;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) value[i] = redactStrings(value[i], redactor, keep);
  } else if (isRecord(value)) {
    for (const key of Object.keys(value)) if (!keep.has(key)) value[key] = redactStrings(value[key], redactor, keep);
  }
  return value;
}

const NO_KEYS: ReadonlySet<string> = new Set();

/**
 * Redacts JSON carried as text (tool-call arguments): its string values when it parses, so the
 * result stays JSON; the raw text when it does not. Unchanged text is kept as it was written.
 */
export function redactJsonText(holder: JsonRecord, key: string, redactor: Redactor): void {
  const text = holder[key];
  if (typeof text !== 'string' || text === '') return;
  let parsed: unknown;
  try {
    parsed = parseBoundedJson(text);
  } catch {
    holder[key] = redactor.redact(text).text;
    return;
  }
  const before = JSON.stringify(parsed);
  const after = JSON.stringify(redactStrings(parsed, redactor));
  if (after !== before) holder[key] = after;
}
