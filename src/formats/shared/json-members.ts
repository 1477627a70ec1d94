// Edits of a JSON object's top-level members in its bytes, for bodies that pass through: removing the
// fields that are ours from a request, setting the echoed fields of a reply. Re-serialising the parsed
// object costs as much as parsing it again; these splices copy the other members' bytes as they came.
// They are only given bytes that JSON.parse accepted (a body already parsed): on anything else they
// return null, and the caller serialises its parsed object instead.
import { jsonStringEnd } from '../../http/json-depth';

/** One top-level member's byte offsets: its key's opening quote, the key's end, its value's start and end. */
interface Member {
  start: number;
  keyEnd: number;
  valueStart: number;
  end: number;
}

/** An object's members and the offset of its closing brace. */
interface Members {
  list: Member[];
  close: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** JSON's whitespace: space, line feed, carriage return, tab. */
export function isSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function skipSpace(bytes: Buffer, at: number): number {
  while (isSpace(bytes[at])) at += 1;
  return at;
}

/** The index after the value starting at `at` (-1 if malformed). */
function valueEnd(bytes: Buffer, at: number): number {
  const first = bytes[at];
  // An unterminated string ends at the text's end, where no member can: the callers refuse it.
  if (first === QUOTE) return jsonStringEnd(bytes, at);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let i = at; i < bytes.length; i += 1) {
      const byte = bytes[i];
      if (byte === QUOTE) {
        i = jsonStringEnd(bytes, i) - 1;
      } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
        depth += 1;
      } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        depth -= 1;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  // A number, true, false or null: up to the next delimiter.
  let i = at;
  while (i < bytes.length) {
    const byte = bytes[i];
    if (byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET || isSpace(byte)) break;
    i += 1;
  }
  return i > at ? i : -1;
}

/** The top-level members of the JSON object in `bytes`, in order; null when it is not one. */
function topLevelMembers(bytes: Buffer): Members | null {
  let at = skipSpace(bytes, 0);
  if (bytes[at] !== OPEN_BRACE) return null;
  at = skipSpace(bytes, at + 1);
  const list: Member[] = [];
  if (bytes[at] === CLOSE_BRACE) return skipSpace(bytes, at + 1) === bytes.length ? { list, close: at } : null;
  for (;;) {
    if (bytes[at] !== QUOTE) return null;
    const start = at;
    const keyEnd = jsonStringEnd(bytes, at);
    at = skipSpace(bytes, keyEnd);
    if (bytes[at] !== COLON) return null;
    const valueStart = skipSpace(bytes, at + 1);
    const end = valueEnd(bytes, valueStart);
    if (end < 0) return null;
    list.push({ start, keyEnd, valueStart, end });
    at = skipSpace(bytes, end);
    if (bytes[at] === COMMA) {
      at = skipSpace(bytes, at + 1);
      continue;
    }
    if (bytes[at] !== CLOSE_BRACE) return null;
    return skipSpace(bytes, at + 1) === bytes.length ? { list, close: at } : null;
  }
}

/** Names to look for, with their bytes (a key is compared as written; decoded only when it has an escape). */
class Names {
  private readonly encoded: { name: string; bytes: Buffer }[];
  constructor(names: Iterable<string>) {
    this.encoded = [...names].map((name) => ({ name, bytes: Buffer.from(name, 'utf8') }));
  }

  /** The name the member's key is, if it is one of them. */
  of(bytes: Buffer, member: Member): string | undefined {
    const from = member.start + 1;
    const to = member.keyEnd - 1;
    for (let i = from; i < to; i += 1) {
      if (bytes[i] === BACKSLASH) {
        const key = JSON.parse(bytes.toString('utf8', member.start, member.keyEnd)) as string;
        return this.encoded.find((entry) => entry.name === key)?.name;
      }
    }
    const length = to - from;
    for (const entry of this.encoded) if (entry.bytes.length === length && bytes.compare(entry.bytes, 0, length, from, to) === 0) return entry.name;
    return undefined;
  }
}

const SEPARATOR = Buffer.from(',');

/** What editMembers does: members to cut (every copy), and members to set to JSON texts. */
export interface MemberEdit {
  remove?: Iterable<string> | undefined;
  set?: ReadonlyMap<string, string> | undefined;
}

const NO_VALUES: ReadonlyMap<string, string> = new Map();

/**
 * The object rebuilt from runs of its own bytes (consecutive kept members stay one slice): every copy
 * of a `remove`d member cut (JSON.parse keeps a duplicated key's last copy; none of them may travel),
 * each `set` member given its JSON text as `Object.assign` would set it (a member present keeps its
 * first place, its other copies dropped; one absent is appended). The same bytes when nothing changes;
 * null when `bytes` is not a JSON object.
 */
export function editMembers(bytes: Buffer, edit: MemberEdit): Buffer | null {
  const members = topLevelMembers(bytes);
  if (members === null) return null;
  const removed = new Set(edit.remove ?? []);
  const values = edit.set ?? NO_VALUES;
  const names = new Names([...removed, ...values.keys()]);
  const placed = new Set<string>();
  const { list, close } = members;
  const parts: Buffer[] = [bytes.subarray(0, list[0]?.start ?? close)];
  let changed = false;
  let runStart = -1;
  let runEnd = -1;
  let emitted = false;
  for (const member of list) {
    const name = names.of(bytes, member);
    if (name !== undefined && (removed.has(name) || placed.has(name))) {
      changed = true;
      if (runStart >= 0 && runEnd > runStart) parts.push(bytes.subarray(runStart, runEnd));
      runStart = -1;
      continue;
    }
    if (runStart < 0) {
      if (emitted) parts.push(SEPARATOR);
      runStart = member.start;
    }
    emitted = true;
    if (name === undefined) {
      runEnd = member.end;
      continue;
    }
    changed = true;
    placed.add(name);
    parts.push(bytes.subarray(runStart, member.valueStart), Buffer.from(values.get(name)!));
    // The next kept member continues from this value's end (the comma between them included).
    runStart = member.end;
    runEnd = member.end;
  }
  if (runStart >= 0 && runEnd > runStart) parts.push(bytes.subarray(runStart, runEnd));
  for (const [key, value] of values) {
    if (placed.has(key)) continue;
    if (emitted) parts.push(SEPARATOR);
    parts.push(Buffer.from(`${JSON.stringify(key)}:${value}`));
    emitted = true;
    changed = true;
  }
  if (!changed) return bytes;
  parts.push(bytes.subarray(list.at(-1)?.end ?? close));
  return Buffer.concat(parts);
}

/** The object's bytes without the named top-level members (editMembers' `remove`). */
export function withoutMembers(bytes: Buffer, names: Iterable<string>): Buffer | null {
  return editMembers(bytes, { remove: names });
}

/** The object's bytes with top-level members set to the given JSON texts (editMembers' `set`). */
export function withMembers(bytes: Buffer, values: ReadonlyMap<string, string>): Buffer | null {
  return editMembers(bytes, { set: values });
}
