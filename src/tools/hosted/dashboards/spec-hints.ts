// Hints that make the compiler's answers actionable for a model: an unknown mark type (the compiler
// itself fails on one with a TypeError about its internals), and encoding fields that are not in the
// data (the compiler draws those silently as empty or undefined).
import { createRequire } from 'node:module';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Every value under `key` anywhere in the spec. */
function valuesOf(node: unknown, key: string, out: unknown[] = []): unknown[] {
  if (Array.isArray(node)) for (const item of node) valuesOf(item, key, out);
  else if (isObject(node)) {
    for (const [k, v] of Object.entries(node)) {
      if (k === key) out.push(v);
      valuesOf(v, key, out);
    }
  }
  return out;
}

/** The mark types Vega-Lite knows, read from its own JSON schema (primitive and composite marks). */
function knownMarks(): Set<string> {
  const schema = createRequire(__filename)('vega-lite/vega-lite-schema.json') as { definitions: Record<string, { enum?: string[]; const?: string }> };
  const d = schema.definitions;
  return new Set([...(d['Mark']?.enum ?? []), ...['BoxPlot', 'ErrorBar', 'ErrorBand'].map((name) => d[name]?.const ?? '')].filter(Boolean));
}

/** "Unknown mark type …" for the first mark that is none of Vega-Lite's, else null. */
export function unknownMarkHint(spec: Json): string | null {
  const known = knownMarks();
  for (const mark of valuesOf(spec, 'mark')) {
    const type = typeof mark === 'string' ? mark : isObject(mark) ? mark['type'] : undefined;
    if (typeof type === 'string' && !known.has(type)) return `unknown mark type ${JSON.stringify(type)}; Vega-Lite's are ${[...known].join(', ')}.`;
  }
  return null;
}

/**
 * Encoding fields that are neither a key of the data nor a name a transform makes (`as`). Not checked
 * when a transform makes columns from values (pivot), or the spec repeats over fields: those names
 * cannot be known here.
 */
export function missingFieldWarnings(spec: Json, records: readonly Json[]): string[] {
  if (valuesOf(spec, 'pivot').length > 0 || valuesOf(spec, 'repeat').length > 0) return [];
  const known = new Set<string>();
  for (const record of records.slice(0, 1000)) for (const key of Object.keys(record)) known.add(key);
  for (const made of valuesOf(spec, 'as')) {
    for (const name of Array.isArray(made) ? made : [made]) if (typeof name === 'string') known.add(name);
  }
  // fold without `as` makes "key" and "value".
  if (valuesOf(spec, 'fold').length > 0) known.add('key').add('value');
  const missing = new Set<string>();
  for (const encoding of valuesOf(spec, 'encoding')) {
    for (const field of valuesOf(encoding, 'field')) {
      // A nested field ("a.b") is looked up by its first part; "a\.b" names a key with a dot.
      if (typeof field === 'string' && !known.has(field) && !known.has(field.split(/(?<!\\)\./)[0]!.replace(/\\\./g, '.'))) missing.add(field);
    }
  }
  if (missing.size === 0) return [];
  const have = [...known].slice(0, 30).join(', ');
  return [...missing].map((field) => `Field ${JSON.stringify(field)} is not in the data (its fields: ${have}).`);
}
