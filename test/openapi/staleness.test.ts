// src/generated/* (and the plugins section of config/gateway.schema.json) must be what the generator
// produces from the current document: `openapi/generate.ts --check` exits 0, and reports a stale file.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildArtifacts, withPluginSchemas } from '../../openapi/build-artifacts';
import { staleArtifacts, writeArtifacts } from '../../openapi/generate';

const ROOT = path.resolve(__dirname, '../..');

describe('generated artifacts', function () {
  this.timeout(60_000);

  it('are up to date (openapi/generate.ts --check exits 0)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'openapi/generate.ts', '--check'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
  });

  it('are reported stale when a generated file differs', async () => {
    const artifacts = await buildArtifacts(ROOT);
    assert.deepEqual(Object.keys(artifacts).sort(), [
      'config/gateway.schema.json',
      'src/console/app/src/generated/api.d.ts',
      'src/generated/body-validators.js',
      'src/generated/config-validator.js',
      'src/generated/openapi.json',
      'src/generated/param-validators.js',
      'src/generated/routes.ts',
    ]);
    const dir = await mkdtemp(path.join(tmpdir(), 'agw-generated-'));
    try {
      assert.equal((await staleArtifacts(dir, artifacts)).length, 7, 'missing files are stale');
      await writeArtifacts(dir, artifacts, Object.keys(artifacts));
      assert.deepEqual(await staleArtifacts(dir, artifacts), []);
      await writeFile(path.join(dir, 'src/generated/routes.ts'), `${artifacts['src/generated/routes.ts']}// edited by hand\n`);
      assert.deepEqual(await staleArtifacts(dir, artifacts), ['src/generated/routes.ts']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('are deterministic (two builds are identical)', async () => {
    const [a, b] = await Promise.all([buildArtifacts(ROOT), buildArtifacts(ROOT)]);
    assert.deepEqual(a, b);
  });

  it('fill only the plugins section of the config schema, keeping the rest of the file as written', () => {
    const text = [
      '{',
      '  "properties": {',
      '    "server": { "type": "object", "description": "a } and a \\" in a string" },',
      '    "plugins": {',
      '      "type": "object",',
      '      "properties": {}',
      '    }',
      '  },',
      '  "definitions": { "properties": { "kept": true } }',
      '}',
      '',
    ].join('\n');
    const out = withPluginSchemas(text, { auth: { type: 'object' } });
    const lines = out.split('\n');
    assert.equal(lines[2], text.split('\n')[2], 'untouched lines keep their formatting');
    assert.deepEqual(JSON.parse(out), {
      properties: {
        server: { type: 'object', description: 'a } and a " in a string' },
        plugins: { type: 'object', properties: { auth: { type: 'object' } } },
      },
      definitions: { properties: { kept: true } },
    });
    assert.equal(withPluginSchemas(out, { auth: { type: 'object' } }), out, 'idempotent');
    assert.throws(() => withPluginSchemas('{"properties": {}}', {}), /no properties\.plugins\.properties/);
  });
});
