// Build-time generator: reads the OpenAPI document (openapi/openapi.yaml and the files it references),
// bundles it, and writes into src/generated/:
//   openapi.json   the bundled document, served at GET /openapi.json
//   validators.js  AJV standalone validators, one per operation part (no schema compiled at run time)
//   routes.ts      the route table keyed by operationId
// and regenerates the `plugins` section of config/gateway.schema.json from the plugin definitions.
// `--check` writes nothing and exits 1 when any output is stale (the staleness test uses it).
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { buildArtifacts } from './build-artifacts';

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const root = path.resolve(__dirname, '..');
  const artifacts = await buildArtifacts(root);
  const stale: string[] = [];
  for (const [relative, content] of Object.entries(artifacts)) {
    const file = path.join(root, relative);
    const current = await readFile(file, 'utf8').catch(() => null);
    if (current === content) continue;
    stale.push(relative);
    if (!check) {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, content);
    }
  }
  if (check && stale.length > 0) {
    console.error(`generated files are stale: ${stale.join(', ')} (run npm run generate)`);
    process.exit(1);
  }
  if (!check) console.log(stale.length > 0 ? `generated: ${stale.join(', ')}` : 'generated files up to date');
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
