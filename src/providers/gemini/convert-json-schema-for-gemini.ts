// JSON Schema (as OpenAI clients send it in `response_format.json_schema.schema` and tool
// `parameters`) to the subset Gemini's `responseJsonSchema` / `parametersJsonSchema` accept.
// Gemini documents that only these keywords are honoured: $id, $defs, $ref, $anchor, type, format,
// title, description, enum, items, prefixItems, minItems, maxItems, minimum, maximum, anyOf, oneOf,
// properties, additionalProperties, required (plus its own propertyOrdering), and that a sub-schema
// carrying $ref may hold nothing but `$` keywords. Anything else is dropped rather than sent, and
// `const` (common in generated schemas) becomes a one-value `enum`, which means the same.
import type { JsonObject } from '../types';

const KEPT = new Set([
  '$id',
  '$anchor',
  'type',
  'format',
  'title',
  'description',
  'enum',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'required',
  'propertyOrdering',
]);

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

function convertMap(value: unknown): JsonObject | undefined {
  if (!isObject(value)) return undefined;
  const out: JsonObject = {};
  for (const [key, schema] of Object.entries(value)) out[key] = convertJsonSchemaForGemini(schema);
  return out;
}

function convertDefs(schema: JsonObject): JsonObject | undefined {
  const merged = { ...(isObject(schema['definitions']) ? schema['definitions'] : {}), ...(isObject(schema['$defs']) ? schema['$defs'] : {}) };
  return Object.keys(merged).length > 0 ? convertMap(merged) : undefined;
}

/** Returns a new schema; the input is never modified. Booleans (true/false schemas) pass through. */
export function convertJsonSchemaForGemini(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  const defs = convertDefs(schema);
  if (defs) out['$defs'] = defs;
  const ref = schema['$ref'];
  if (typeof ref === 'string') {
    // Draft-7 `definitions` moved under `$defs`, so their pointers follow; beside a $ref only `$`
    // keywords may stand.
    out['$ref'] = ref.replace(/^#\/definitions\//, '#/$defs/');
    for (const key of ['$id', '$anchor']) if (typeof schema[key] === 'string') out[key] = schema[key];
    return out;
  }
  for (const [key, value] of Object.entries(schema)) {
    if (KEPT.has(key)) out[key] = value;
  }
  if ('const' in schema && !('enum' in schema)) out['enum'] = [schema['const']];
  const properties = convertMap(schema['properties']);
  if (properties) out['properties'] = properties;
  const items = schema['items'];
  // Draft-7 tuples (`items: [...]`) are 2020-12 `prefixItems`, the form Gemini reads.
  if (Array.isArray(items)) out['prefixItems'] = items.map(convertJsonSchemaForGemini);
  else if (items !== undefined) out['items'] = convertJsonSchemaForGemini(items);
  if ('additionalProperties' in schema) out['additionalProperties'] = convertJsonSchemaForGemini(schema['additionalProperties']);
  for (const key of ['prefixItems', 'anyOf', 'oneOf'] as const) {
    const list = schema[key];
    if (Array.isArray(list)) out[key] = list.map(convertJsonSchemaForGemini);
  }
  // allOf is not honoured; a single-member allOf (a common wrapper around a $ref) is the member itself.
  const allOf = schema['allOf'];
  if (Array.isArray(allOf) && allOf.length === 1 && !('anyOf' in out)) out['anyOf'] = [convertJsonSchemaForGemini(allOf[0])];
  return out;
}

/** True for `{type: object}` with no properties: Gemini wants such parameters left out. */
export function isEmptyObjectSchema(schema: unknown): boolean {
  if (!isObject(schema)) return false;
  const properties = schema['properties'];
  return (
    schema['type'] === 'object' &&
    (!isObject(properties) || Object.keys(properties).length === 0) &&
    !isObject(schema['additionalProperties']) &&
    schema['additionalProperties'] !== true
  );
}
