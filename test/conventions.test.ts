// Conventions that keep the architecture visible (../shared/style.md): a plugin is one folder with its
// definition, a described config schema and a test; a provider is one folder registered by type;
// every operation of the OpenAPI document has a real handler; no development placeholder remains.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { plugins } from '../plugins';
import { routes } from '../src/generated/routes';
import { handlers } from '../src/operations/index';

const ROOT = path.resolve(__dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

type Schema = { description?: unknown; default?: unknown; properties?: Record<string, Schema> };

describe('conventions', () => {
  const pluginDirs = readdirSync(path.join(ROOT, 'plugins')).filter((name) => statSync(path.join(ROOT, 'plugins', name)).isDirectory());

  it('every plugin folder is registered once, under its folder name', () => {
    assert.deepEqual([...plugins.map((p) => p.name)].sort(), [...pluginDirs].sort());
  });

  for (const plugin of plugins) {
    it(`plugin ${plugin.name}: described schema with a default for every field, and a test`, () => {
      const schema = plugin.configSchema as Schema;
      assert.equal(typeof schema.description, 'string', 'the schema has a description');
      const properties = Object.entries(schema.properties ?? {});
      assert.ok(
        properties.some(([name]) => name === 'enabled'),
        'the schema has `enabled`',
      );
      for (const [name, property] of properties) {
        assert.equal(typeof property.description, 'string', `${plugin.name}.${name} has a description`);
        assert.notEqual(property.default, undefined, `${plugin.name}.${name} has a default`);
      }
      assert.ok(typeof plugin.description === 'string' && plugin.description.length > 0);
      const tests = readdirSync(path.join(ROOT, 'test/plugins')).filter((f) => f.startsWith(plugin.name));
      assert.ok(tests.length > 0, `test/plugins/${plugin.name}*.test.ts exists`);
    });
  }

  it('every provider type has its folder and a line in the registry', () => {
    const registry = readFileSync(path.join(ROOT, 'src/providers/registry.ts'), 'utf8');
    for (const type of ['openai', 'anthropic', 'bedrock-anthropic', 'vertex-anthropic', 'gemini', 'demo']) {
      const dir = path.join(ROOT, 'src/providers', type);
      assert.ok(existsSync(dir) && readdirSync(dir).some((f) => f.endsWith('.ts')), `src/providers/${type}/ has its code`);
      assert.match(registry, new RegExp(`case '${type}'`), `registry.ts creates ${type}`);
    }
  });

  it('every operation of the document has a handler, and every handler an operation', () => {
    const ids = routes.map((r) => r.operationId).sort();
    assert.deepEqual(Object.keys(handlers).sort(), ids);
  });

  it('no development placeholder handler, no explicit any, in src/ and plugins/', () => {
    const offenders: string[] = [];
    for (const file of [...sourceFiles(path.join(ROOT, 'src')), ...sourceFiles(path.join(ROOT, 'plugins'))]) {
      const text = readFileSync(file, 'utf8');
      const rel = path.relative(ROOT, file);
      if (/operations\/pending/.test(text) || /\bpending\(['"]/.test(text)) offenders.push(`${rel}: placeholder handler`);
      const code = text
        .split('\n')
        .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
        .join('\n');
      if (/:\s*any\b[^-]|\bas any\b|<any>/.test(code)) offenders.push(`${rel}: explicit any`);
    }
    assert.deepEqual(offenders, []);
  });
});
