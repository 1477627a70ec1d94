// The pieces every format's DLP walk is made of. Walks run on the request's own deep copy (the
// caller's parsed body is never touched) and edit it in place; what they leave is what goes upstream,
// re-serialised, so what is forwarded is exactly what was inspected.
import { jsonStringEnd, parseBoundedJson } from '../../http/json-depth';
import type { Redactor } from '../../pipeline/context';

export type JsonRecord = Record<string, unknown>;

export const isRecord = (value: unknown): value is JsonRecord => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Redacts `holder[key]`: a string, or every string under a value of another type (a field the format
 * says is text but which the caller sent as an array or an object still reaches the upstream; it is
 * deep-copied first, since it may be the caller's own).
 */
export function redactField(holder: JsonRecord, key: string, redactor: Redactor): void {
  const value = holder[key];
  if (typeof value === 'string') {
    if (value !== '') holder[key] = redactor.redact(value).text;
  } else if (typeof value === 'object' && value !== null) {
    holder[key] = redactStrings(structuredClone(value), redactor);
  }
}

/** Redacts a file's name, keeping its extension (the upstream may read the type from it). */
export function redactFilename(holder: JsonRecord, key: string, redactor: Redactor): void {
  const name = holder[key];
  if (typeof name !== 'string' || name === '') return;
  const redacted = redactor.redact(name);
  if (redacted.count === 0) return;
  const extension = /\.[A-Za-z0-9]{1,10}$/.exec(name)?.[0] ?? '';
  const keep = extension !== '' && !redacted.text.endsWith(extension) && redactor.redact(extension).count === 0;
  holder[key] = keep ? redacted.text + extension : redacted.text;
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
 * Redacts data the caller wrote as JSON (tool-call arguments and inputs, tool outputs): every string
 * value, and every object key too, since there keys are data the model reads (a map keyed by e-mail
 * address) rather than the format's field names. A key redacted into one already present gets a
 * ` (2)`, ` (3)`... suffix, so no value is lost. Returns the value (a renamed object is a new one).
 */
export function redactData(value: unknown, redactor: Redactor): unknown {
  if (typeof value === 'string') return value === '' ? value : redactor.redact(value).text;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) value[i] = redactData(value[i], redactor);
    return value;
  }
  if (!isRecord(value)) return value;
  let renamed: [string, string][] | null = null;
  for (const key of Object.keys(value)) {
    value[key] = redactData(value[key], redactor);
    const name = key === '' ? key : redactor.redact(key).text;
    if (name !== key) (renamed ??= []).push([key, name]);
  }
  if (renamed === null) return value;
  const names = new Map(renamed);
  const out: JsonRecord = {};
  for (const key of Object.keys(value)) {
    const name = names.get(key) ?? key;
    let unique = name;
    for (let n = 2; Object.hasOwn(out, unique); n += 1) unique = `${name} (${n})`;
    // defineProperty: a key such as `__proto__` stays an own property, as JSON.parse made it.
    Object.defineProperty(out, unique, { value: value[key], enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * Whether an object of the JSON `text` (text JSON.parse accepted) names a key twice, escapes decoded
 * (`"a"` and `"\u0061"` are one key). Parsed, such an object keeps only the last copy: the others
 * were never inspected. One pass, one set of keys per open object.
 */
export function hasDuplicateKeys(text: string): boolean {
  const open: (Set<string> | null)[] = []; // the keys of each open object; null for an array
  let keyNext = false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      const end = jsonStringEnd(text, i);
      const keys = open[open.length - 1];
      if (keyNext && keys) {
        const written = text.slice(i, end);
        const name = written.includes('\\') ? (JSON.parse(written) as string) : written.slice(1, -1);
        if (keys.has(name)) return true;
        keys.add(name);
        keyNext = false;
      }
      i = end - 1;
    } else if (code === 0x7b) {
      open.push(new Set());
      keyNext = true;
    } else if (code === 0x5b) {
      open.push(null);
    } else if (code === 0x7d || code === 0x5d) {
      open.pop();
      keyNext = false;
    } else if (code === 0x2c) {
      keyNext = (open[open.length - 1] ?? null) !== null;
    }
  }
  return false;
}

/**
 * Redacts JSON carried as text (tool-call arguments): its string values when it parses, so the
 * result stays JSON; the raw text when it does not. Unchanged text is kept as it was written, unless
 * it names a key twice: then what was inspected (the last copy) is what goes, re-serialised, since
 * the upstream model reads the text, first copies included.
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
  const after = JSON.stringify(redactData(parsed, redactor));
  if (after !== before || hasDuplicateKeys(text)) holder[key] = after;
}
