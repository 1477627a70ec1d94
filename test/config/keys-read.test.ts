// Every key config/gateway.schema.json accepts is read by some code: a key nothing reads is a promise
// the gateway does not keep (an operator sets it and nothing changes). The check is by name: some
// source file under src/ or plugins/ (not the schema, not the mirrored types, not generated code) reads
// a property of that name.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Keys the operator contract names for a feature not built yet, with the feature that will read them:
 * accepted (configs written to the contract keep loading) and not checked here until that feature is built.
 */
const RESERVED: Record<string, string> = {
  // providers.*.responses: forward /v1/responses natively or translate it onto chat completions.
  responses: 'the Responses operations',
};

/**
 * Keys kept only so that existing configs keep loading: accepted, documented as no longer needed, and
 * read by nothing on purpose.
 */
const ACCEPTED_FOR_OLD_CONFIGS: Record<string, string> = {
  // Provider URLs are trusted as the operator wrote them; the SSRF guard is for request- and tool-supplied URLs.
  allowPrivateNetwork: 'providers.*: no longer needed, provider URLs are trusted',
};

type Schema = {
  $ref?: string;
  definitions?: Record<string, Schema>;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  then?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
};

/** Every property name in the schema, with the paths it appears at. */
function schemaKeys(root: Schema, schema: Schema = root, at = '', out = new Map<string, string[]>()): Map<string, string[]> {
  const ref = schema.$ref?.match(/^#\/definitions\/(.+)$/)?.[1];
  if (ref !== undefined && root.definitions?.[ref]) schemaKeys(root, root.definitions[ref], at, out);
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    out.set(key, [...(out.get(key) ?? []), `${at}.${key}`]);
    schemaKeys(root, child, `${at}.${key}`, out);
  }
  if (schema.items) schemaKeys(root, schema.items, `${at}[]`, out);
  if (typeof schema.additionalProperties === 'object') schemaKeys(root, schema.additionalProperties, `${at}.*`, out);
  if (schema.then) schemaKeys(root, schema.then, at, out);
  for (const sub of [...(schema.allOf ?? []), ...(schema.oneOf ?? []), ...(schema.anyOf ?? [])]) schemaKeys(root, sub, at, out);
  return out;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sources(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

describe('configuration keys', () => {
  it('every key of config/gateway.schema.json is read by some code (or reserved for a named, unbuilt feature)', () => {
    const schema = JSON.parse(readFileSync(path.join(ROOT, 'config/gateway.schema.json'), 'utf8')) as Schema;
    const mirror = path.join(ROOT, 'src/config/types.ts');
    const code = [...sources(path.join(ROOT, 'src')), ...sources(path.join(ROOT, 'plugins'))]
      .filter((file) => file !== mirror)
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const unread: string[] = [];
    for (const [key, paths] of schemaKeys(schema)) {
      // `.key`, `['key']`, or `{ key }` / `{ key: local }` destructuring.
      const read = new RegExp(`\\.${key}\\b|\\[['"]${key}['"]\\]|[{,]\\s*${key}\\s*[,}:=]`).test(code);
      if (!read && !(key in RESERVED) && !(key in ACCEPTED_FOR_OLD_CONFIGS)) unread.push(`${key} (${paths.join(', ')})`);
    }
    assert.deepEqual(unread, []);
  });
});
