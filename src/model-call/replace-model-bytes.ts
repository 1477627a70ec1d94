// Byte-level model-name replacement for pass-through bodies: when the provider's own model name
// differs from the one the caller used, only the value of the top-level `"model"` key changes and every
// other byte goes upstream as the caller sent it. Inside a JSON string every `"` is escaped, so the
// unescaped token `"model"` followed by `:` can only be a key; the replacement happens only when exactly
// one such key carries the caller's value, otherwise the caller re-serialises (returns null).

import { isSpace } from '../formats/shared/json-members';

const KEY = Buffer.from('"model"');

export function replaceModelBytes(raw: Buffer, from: string, to: string): Buffer | null {
  const value = Buffer.from(JSON.stringify(from));
  let match: { start: number; end: number } | null = null;
  for (let at = raw.indexOf(KEY); at >= 0; at = raw.indexOf(KEY, at + KEY.length)) {
    let i = at + KEY.length;
    while (isSpace(raw[i])) i += 1;
    if (raw[i] !== 0x3a /* : */) continue;
    i += 1;
    while (isSpace(raw[i])) i += 1;
    if (raw.compare(value, 0, value.length, i, i + value.length) !== 0) continue;
    if (match) return null; // ambiguous: a nested "model" key with the same value
    match = { start: i, end: i + value.length };
  }
  if (!match) return null;
  return Buffer.concat([raw.subarray(0, match.start), Buffer.from(JSON.stringify(to)), raw.subarray(match.end)]);
}
