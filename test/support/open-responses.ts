// Checks Responses objects and stream events two ways: against the public Open Responses specification
// (test/fixtures/open-responses/openapi.json, vendored verbatim) and against our own document
// (src/generated/openapi.json). Use it in any test that sees what the gateway emits:
//
//   assertOpenResponsesObject(body)   a response object is valid by the Open Responses spec
//   assertOpenResponsesEvent(payload) a stream event is, its schema picked by `type`
//   assertOurResponseObject(body) / assertOurEvent(payload) / assertOurSchema(name, value): by our document
//
// Each throws an Error whose message lists the violations (JSON pointer and reason), or returns.
//
// The spec closes vocabularies we extend (output item types, tool types, tool_choice forms, annotation
// types, event types). A value of a type the spec does not define is checked against OUR schema for it
// and left out of the spec check (it becomes `null` where the spec allows `null`, is removed from its
// array, or, for tool_choice, becomes `"auto"`); the rest is checked against the spec. So extensions are
// never unchecked, and everything of a type the spec defines is checked by it.
//
// Validators are compiled once, on first use (compiling the spec takes a moment; most tests never need it).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

const ROOT = path.resolve(__dirname, '../..');
const SPEC_FILE = path.join(ROOT, 'test/fixtures/open-responses/openapi.json');
const OUR_FILE = path.join(ROOT, 'src/generated/openapi.json');

type Json = Record<string, unknown>;

/**
 * Defects of the vendored spec version, patched in the compiled copy only (the file stays verbatim).
 * Each patch says why; the first two would reject what the OpenAI Responses API itself returns, the
 * third leaves a documented state machine unchecked.
 */
const SPEC_PATCHES: readonly { schema: string; why: string; patch: (schema: Json, schemas: Record<string, Json>) => void }[] = [
  {
    schema: 'JsonSchemaResponseFormat',
    why: '`schema` is typed `null`, so an echoed json_schema text format (which carries the JSON Schema object) could never validate',
    patch: (schema) => {
      (schema['properties'] as Json)['schema'] = { type: 'object' };
    },
  },
  {
    schema: 'ReasoningEffortEnum',
    why: '`minimal` is described in `x-enumDescriptions` but missing from `enum`',
    patch: (schema) => {
      const values = schema['enum'] as string[];
      if (!values.includes('minimal')) values.push('minimal');
    },
  },
  {
    schema: 'ResponseResource',
    why:
      '`status` is a bare string, though the spec (prose, "State machines") makes the response a state machine whose states ' +
      'are named by its lifecycle events (response.queued, .in_progress, .completed, .failed, .incomplete); `cancelled` is ' +
      "added as the OpenAI Responses API's state of a cancelled background response, which the spec does not exclude",
    patch: (schema, schemas) => {
      const states = Object.values(schemas)
        .filter((s) => (s['properties'] as Record<string, Json> | undefined)?.['response'] !== undefined)
        .flatMap((s) => (((s['properties'] as Record<string, Json>)['type'] ?? {})['enum'] as string[] | undefined) ?? [])
        .map((type) => /^response\.(\w+)$/.exec(type)?.[1])
        .filter((state): state is string => state !== undefined && state !== 'created');
      (schema['properties'] as Record<string, Json>)['status'] = { type: 'string', enum: [...new Set([...states, 'cancelled'])] };
    },
  },
];

/** One OpenAPI document's component schemas, compiled on demand. */
class SchemaSet {
  private readonly ajv: Ajv2020;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(
    readonly label: string,
    private readonly doc: Json,
    options: { discriminator: boolean; formats: boolean },
  ) {
    // verbose: errors carry the failing schema, which `focus` uses to explain a failed oneOf.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, verbose: true, discriminator: options.discriminator });
    if (options.formats) addFormats(this.ajv);
    this.ajv.addSchema({ $id: label, components: doc['components'] });
  }

  schemas(): Record<string, Json> {
    return (this.doc['components'] as Json)['schemas'] as Record<string, Json>;
  }

  resolve = (schema: Json): Json => {
    let current = schema;
    while (typeof current['$ref'] === 'string') {
      const pointer = current['$ref'].replace(/^#\//, '').split('/');
      current = pointer.reduce<Json>((node, key) => node[key] as Json, this.doc);
    }
    return current;
  };

  named(name: string): ValidateFunction {
    return this.compiled(`#/components/schemas/${name}`, () => {
      const validate = this.ajv.getSchema(`${this.label}#/components/schemas/${name}`);
      if (!validate) throw new Error(`${this.label}: no schema ${name}`);
      return validate;
    });
  }

  /** A schema taken from this document (its local refs resolved against it). */
  inline(schema: Json): ValidateFunction {
    const text = JSON.stringify(schema);
    return this.compiled(text, () => this.ajv.compile(JSON.parse(text.replace(/"#\/components\//g, `"${this.label}#/components/`)) as object));
  }

  private compiled(key: string, make: () => ValidateFunction): ValidateFunction {
    let validate = this.cache.get(key);
    if (!validate) {
      validate = make();
      this.cache.set(key, validate);
    }
    return validate;
  }
}

interface Validators {
  spec: SchemaSet;
  ours: SchemaSet;
  /** Spec event schema name by event type. */
  specEvents: ReadonlyMap<string, string>;
  /** Our event schema name by event type. */
  ourEvents: ReadonlyMap<string, string>;
  /** The `type` values the spec defines at each open position. */
  specTypes: {
    item: ReadonlySet<string>;
    tool: ReadonlySet<string>;
    toolChoice: ReadonlySet<string>;
    allowedTool: ReadonlySet<string>;
    annotation: ReadonlySet<string>;
  };
}

let validators: Validators | undefined;

function load(): Validators {
  if (validators) return validators;
  const specDoc = JSON.parse(readFileSync(SPEC_FILE, 'utf8')) as Json;
  const specSchemas = (specDoc['components'] as Json)['schemas'] as Record<string, Json>;
  for (const { schema, patch } of SPEC_PATCHES) {
    const target = specSchemas[schema];
    if (!target) throw new Error(`open-responses: the patched schema ${schema} is gone from the vendored spec; review SPEC_PATCHES`);
    patch(target, specSchemas);
  }
  // The spec's `discriminator` keywords sit on schemas without `oneOf` (which Ajv's discriminator
  // support refuses); they are hints only, so the spec is compiled without them.
  const spec = new SchemaSet('open-responses', specDoc, { discriminator: false, formats: false });
  const ours = new SchemaSet('agent-gateway', JSON.parse(readFileSync(OUR_FILE, 'utf8')) as Json, { discriminator: true, formats: true });

  const createResponse = ((((specDoc['paths'] as Json)['/responses'] as Json)['post'] as Json)['responses'] as Json)['200'] as Json;
  const specStream = ((createResponse['content'] as Json)['text/event-stream'] as Json)['schema'] as Json;
  const resourceProps = specSchemas['ResponseResource']!['properties'] as Record<string, Json>;
  const toolChoiceObjects = ((resourceProps['tool_choice']!['oneOf'] as Json[] | undefined) ?? []).map(spec.resolve).filter((s) => s['type'] === 'object');
  const allowedTools = toolChoiceObjects.find((s) => typeValues(s, spec.resolve).has('allowed_tools'));

  validators = {
    spec,
    ours,
    specEvents: eventSchemas(specStream, spec.resolve),
    ourEvents: eventSchemas(ours.schemas()['ResponseStreamEvent']!, ours.resolve),
    specTypes: {
      item: typeValues(specSchemas['ItemField']!, spec.resolve),
      tool: typeValues(specSchemas['Tool']!, spec.resolve),
      toolChoice: new Set(toolChoiceObjects.flatMap((s) => [...typeValues(s, spec.resolve)])),
      allowedTool: allowedTools ? typeValues(((allowedTools['properties'] as Json)['tools'] as Json)['items'] as Json, spec.resolve) : new Set(),
      annotation: typeValues(specSchemas['Annotation']!, spec.resolve),
    },
  };
  return validators;
}

/** The `type` values a (union) schema admits: its `properties.type` enum/const, through $ref/oneOf/anyOf. */
function typeValues(schema: Json, resolve: (schema: Json) => Json): Set<string> {
  const out = new Set<string>();
  const add = (values: unknown) => {
    for (const value of Array.isArray(values) ? values : [values]) if (typeof value === 'string') out.add(value);
  };
  const visit = (node: Json) => {
    const resolved = resolve(node);
    for (const key of ['oneOf', 'anyOf'] as const) {
      for (const branch of (resolved[key] as Json[] | undefined) ?? []) visit(branch);
    }
    const type = (resolved['properties'] as Record<string, Json> | undefined)?.['type'];
    if (!type) return;
    const typeSchema = resolve(type);
    add(typeSchema['const']);
    add(typeSchema['enum']);
    for (const branch of (typeSchema['anyOf'] as Json[] | undefined) ?? []) add(resolve(branch)['enum']);
  };
  visit(schema);
  return out;
}

/** Event type -> component name, from a oneOf of $refs to event schemas. */
function eventSchemas(union: Json, resolve: (schema: Json) => Json): Map<string, string> {
  const out = new Map<string, string>();
  for (const branch of (union['oneOf'] as Json[] | undefined) ?? []) {
    const name = String(branch['$ref']).split('/').pop()!;
    for (const type of typeValues(branch, resolve)) out.set(type, name);
  }
  return out;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeOf(value: unknown): string | undefined {
  return isObject(value) && typeof value['type'] === 'string' ? value['type'] : undefined;
}

function at(value: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .reduce<unknown>(
      (node, key) => (node !== null && typeof node === 'object' ? (node as Json)[key.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined),
      value,
    );
}

function excerpt(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * The errors worth reading. A failed oneOf/anyOf reports every branch; when the value's `type` (or its
 * being non-null) picks one branch, the errors of that branch alone say what is wrong, so the value is
 * validated again against it (recursively) and those errors replace everything reported under it.
 */
function focus(errors: readonly ErrorObject[], value: unknown, set: SchemaSet): ErrorObject[] {
  const unions = errors
    .filter((e) => (e.keyword === 'oneOf' || e.keyword === 'anyOf') && Array.isArray(e.schema))
    .sort((a, b) => a.instancePath.length - b.instancePath.length);
  for (const union of unions) {
    const found = at(value, union.instancePath);
    const branches = union.schema as Json[];
    const type = typeOf(found);
    const byType = type === undefined ? [] : branches.filter((b) => typeValues(b, set.resolve).has(type));
    const notNull = found === null ? [] : branches.filter((b) => set.resolve(b)['type'] !== 'null');
    const branch = byType.length === 1 ? byType[0] : notNull.length === 1 ? notNull[0] : undefined;
    if (!branch) continue;
    const validate = set.inline(branch);
    if (validate(found)) continue;
    const inner = focus(validate.errors ?? [], found, set).map((e) => ({ ...e, instancePath: `${union.instancePath}${e.instancePath}` }));
    const under = (e: ErrorObject) => e.instancePath === union.instancePath || e.instancePath.startsWith(`${union.instancePath}/`);
    return focus([...errors.filter((e) => !under(e)), ...inner], value, set);
  }
  return [...errors];
}

function violations(errors: readonly ErrorObject[], value: unknown, set: SchemaSet): string {
  const lines = focus(errors, value, set)
    // The deepest errors first: they say what is wrong; the ones above only say that something is.
    .sort((a, b) => b.instancePath.split('/').length - a.instancePath.split('/').length)
    .map((e) => {
      const params = e.params as Record<string, unknown>;
      const found = at(value, e.instancePath);
      const detail =
        e.keyword === 'required'
          ? `must have '${String(params['missingProperty'])}'`
          : e.keyword === 'additionalProperties'
            ? `must not have '${String(params['additionalProperty'])}'`
            : e.keyword === 'enum'
              ? `must be one of ${JSON.stringify(params['allowedValues'])}`
              : (e.message ?? e.keyword);
      const shown =
        e.keyword === 'type' || e.keyword === 'enum' || e.keyword === 'const'
          ? ` (is ${excerpt(found)})`
          : e.keyword === 'oneOf' || e.keyword === 'anyOf'
            ? ` (its type is ${excerpt(typeOf(found) ?? found)})`
            : '';
      return `  ${e.instancePath || '(root)'}: ${detail}${shown}`;
    });
  const unique = [...new Set(lines)];
  return unique.length > 12 ? [...unique.slice(0, 12), `  ... ${unique.length - 12} more`].join('\n') : unique.join('\n');
}

function check(set: SchemaSet, name: string, value: unknown, what: string): void {
  const validate = set.named(name);
  if (validate(value)) return;
  throw new Error(`${what} is not valid by ${set.label} ${name}:\n${violations(validate.errors ?? [], value, set)}\nvalue: ${excerpt(value)}`);
}

/** A value of a type the spec does not define, to be checked against our schema instead. */
interface Extension {
  where: string;
  schema: string;
  value: unknown;
}

/** Removes from an `output_text` part the annotations of types the spec does not define. */
function pruneContentPart(part: unknown, where: string, v: Validators, out: Extension[]): void {
  if (!isObject(part) || !Array.isArray(part['annotations'])) return;
  part['annotations'] = part['annotations'].filter((annotation, n) => {
    const type = typeOf(annotation);
    if (type === undefined || v.specTypes.annotation.has(type)) return true;
    out.push({ where: `${where}/annotations/${n}`, schema: 'ResponseAnnotation', value: annotation });
    return false;
  });
}

function pruneItemContent(item: unknown, where: string, v: Validators, out: Extension[]): void {
  if (!isObject(item) || !Array.isArray(item['content'])) return;
  item['content'].forEach((part, n) => pruneContentPart(part, `${where}/content/${n}`, v, out));
}

/** The spec's view of a response object: extension output items, tools and tool_choice forms taken out. */
function pruneResponse(response: unknown, where: string, v: Validators, out: Extension[]): void {
  if (!isObject(response)) return;
  if (Array.isArray(response['output'])) {
    response['output'] = response['output'].filter((item, n) => {
      const type = typeOf(item);
      if (type !== undefined && !v.specTypes.item.has(type)) {
        out.push({ where: `${where}/output/${n}`, schema: 'ResponseOutputItem', value: item });
        return false;
      }
      pruneItemContent(item, `${where}/output/${n}`, v, out);
      return true;
    });
  }
  if (Array.isArray(response['tools'])) {
    response['tools'] = response['tools'].filter((tool, n) => {
      const type = typeOf(tool);
      if (type === undefined || v.specTypes.tool.has(type)) return true;
      out.push({ where: `${where}/tools/${n}`, schema: 'ResponseToolEcho', value: tool });
      return false;
    });
  }
  const choice = response['tool_choice'];
  const choiceType = typeOf(choice);
  if (choiceType !== undefined && isObject(choice)) {
    const allowed = Array.isArray(choice['tools']) ? choice['tools'].map(typeOf) : [];
    if (!v.specTypes.toolChoice.has(choiceType) || allowed.some((t) => t !== undefined && !v.specTypes.allowedTool.has(t))) {
      out.push({ where: `${where}/tool_choice`, schema: 'ResponseToolChoiceEcho', value: choice });
      response['tool_choice'] = 'auto';
    }
  }
}

function checkExtensions(extensions: readonly Extension[], v: Validators, what: string): void {
  for (const { where, schema, value } of extensions) check(v.ours, schema, value, `${what} at ${where} (a type the spec does not define)`);
}

/** Throws unless `response` is a valid Open Responses `ResponseResource` (extensions by our schema). */
export function assertOpenResponsesObject(response: unknown): void {
  const v = load();
  const view = structuredClone(response);
  const extensions: Extension[] = [];
  pruneResponse(view, '', v, extensions);
  check(v.spec, 'ResponseResource', view, 'the response');
  checkExtensions(extensions, v, 'the response');
}

/**
 * Throws unless `event` is a valid Open Responses streaming event of its `type`. Event types of our own
 * extension (e.g. `response.svc_call_arguments.delta`) are checked against our schema only.
 */
export function assertOpenResponsesEvent(event: unknown): void {
  const v = load();
  const type = typeOf(event);
  if (type === undefined) throw new Error(`the event has no string \`type\`: ${excerpt(event)}`);
  const specSchema = v.specEvents.get(type);
  if (!specSchema) {
    const ourSchema = v.ourEvents.get(type);
    if (!ourSchema) throw new Error(`'${type}' is an event type of neither the Open Responses spec nor our document`);
    check(v.ours, ourSchema, event, `the ${type} event (an extension event type)`);
    return;
  }
  const view = structuredClone(event) as Json;
  const extensions: Extension[] = [];
  if ('response' in view) pruneResponse(view['response'], '/response', v, extensions);
  if ('item' in view) {
    const itemType = typeOf(view['item']);
    if (itemType !== undefined && !v.specTypes.item.has(itemType)) {
      // The spec allows `item: null`; the extension item is checked against ours below.
      extensions.push({ where: '/item', schema: 'ResponseOutputItem', value: view['item'] });
      view['item'] = null;
    } else pruneItemContent(view['item'], '/item', v, extensions);
  }
  if ('part' in view) pruneContentPart(view['part'], '/part', v, extensions);
  if ('annotation' in view) {
    const annotationType = typeOf(view['annotation']);
    if (annotationType !== undefined && !v.specTypes.annotation.has(annotationType)) {
      extensions.push({ where: '/annotation', schema: 'ResponseAnnotation', value: view['annotation'] });
      view['annotation'] = null;
    }
  }
  check(v.spec, specSchema, view, `the ${type} event`);
  checkExtensions(extensions, v, `the ${type} event`);
}

/** Throws unless `value` is valid by the named component schema of our document. */
export function assertOurSchema(name: string, value: unknown): void {
  check(load().ours, name, value, 'the value');
}

/** Throws unless `response` is a valid response object by our document (`Response`). */
export function assertOurResponseObject(response: unknown): void {
  check(load().ours, 'Response', response, 'the response');
}

/** Throws unless `event` is a valid stream event by our document, its schema picked by `type`. */
export function assertOurEvent(event: unknown): void {
  const v = load();
  const type = typeOf(event);
  if (type === undefined) throw new Error(`the event has no string \`type\`: ${excerpt(event)}`);
  const name = v.ourEvents.get(type);
  if (!name) throw new Error(`'${type}' is not an event type of our document (ResponseStreamEvent)`);
  check(v.ours, name, event, `the ${type} event`);
}

/** The event types each document defines (for tests that must cover every one). */
export function responseEventTypes(): { spec: string[]; ours: string[] } {
  const v = load();
  return { spec: [...v.specEvents.keys()].sort(), ours: [...v.ourEvents.keys()].sort() };
}
