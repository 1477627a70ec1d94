// DLP on the JSON Schemas a request carries (chat tool `parameters`, Anthropic `input_schema`, a
// `response_format` json_schema): the model reads their annotations and values as prompt text, so a
// secret in a property's description, title, enum, const, default or examples reaches the upstream.
// Those string values are redacted; what gives the schema its meaning stays as written: keywords,
// property names (the keys of `properties`, `$defs`, ...), `required`, `type`, `format`, `pattern`,
// `$ref` and the other keywords listed in MEANING.
import type { Redactor } from '../../pipeline/context';
import { isRecord, redactStrings } from './redact-values';

/** Keywords whose string values are structure (names, types, regexes, references), never text. */
const MEANING: ReadonlySet<string> = new Set([
  'type',
  'format',
  'pattern',
  'required',
  'dependentRequired',
  'contentMediaType',
  'contentEncoding',
  '$ref',
  '$id',
  '$schema',
  '$anchor',
  '$dynamicRef',
  '$dynamicAnchor',
  '$recursiveRef',
  '$recursiveAnchor',
  '$vocabulary',
  'discriminator',
]);
/** Keywords holding one subschema (or, for `items` in older drafts, a list of them). */
const SUBSCHEMA: ReadonlySet<string> = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
]);
/** Keywords holding a list of subschemas. */
const SUBSCHEMA_LIST: ReadonlySet<string> = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords holding subschemas by name: the names stay, the subschemas are walked. */
const SUBSCHEMA_MAP: ReadonlySet<string> = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);

/**
 * Redacts the text of a JSON Schema in place: annotations (`description`, `title`, `$comment`,
 * `examples`), values (`enum`, `const`, `default`) and any keyword not known to carry structure.
 */
export function redactJsonSchema(schema: unknown, redactor: Redactor): void {
  if (Array.isArray(schema)) {
    for (const entry of schema) redactJsonSchema(entry, redactor);
    return;
  }
  if (!isRecord(schema)) return; // true / false schemas
  for (const key of Object.keys(schema)) {
    const value = schema[key];
    if (MEANING.has(key)) continue;
    if (SUBSCHEMA.has(key) || SUBSCHEMA_LIST.has(key)) redactJsonSchema(value, redactor);
    else if (SUBSCHEMA_MAP.has(key)) {
      // `dependencies` may name properties (an array of names: structure) instead of a schema.
      if (isRecord(value)) for (const name of Object.keys(value)) if (!Array.isArray(value[name])) redactJsonSchema(value[name], redactor);
    } else schema[key] = redactStrings(value, redactor);
  }
}
