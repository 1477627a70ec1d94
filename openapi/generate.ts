// Build-time generator: reads the OpenAPI document (openapi/openapi.yaml and the files it references),
// bundles it, and writes:
//   src/generated/openapi.json        the bundled document, served at GET /openapi.json
//   src/generated/body-validators.js  AJV standalone request-body validators (nothing compiled at run time)
//   src/generated/param-validators.js AJV standalone path/query validators (coercing, with defaults)
//   src/generated/routes.ts           the route table keyed by operationId
//   config/gateway.schema.json        its `plugins` section regenerated from the plugin definitions
// `--check` writes nothing and exits 1 when any output is stale (the staleness test uses it).
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { buildArtifacts } from './build-artifacts';

/** Relative paths of the artifacts whose content under `root` differs from `artifacts`. */
export async function staleArtifacts(root: string, artifacts: Readonly<Record<string, string>>): Promise<string[]> {
  const stale: string[] = [];
  for (const [relative, content] of Object.entries(artifacts)) {
    const current = await readFile(path.join(root, relative), 'utf8').catch(() => null);
    if (current !== content) stale.push(relative);
  }
  return stale;
}

export async function writeArtifacts(root: string, artifacts: Readonly<Record<string, string>>, only: readonly string[]): Promise<void> {
  for (const relative of only) {
    const file = path.join(root, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, artifacts[relative] ?? '');
  }
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const root = path.resolve(__dirname, '..');
  const artifacts = await buildArtifacts(root);
  const stale = await staleArtifacts(root, artifacts);
  if (check) {
    if (stale.length > 0) {
      console.error(`generated files are stale: ${stale.join(', ')} (run npm run generate)`);
      process.exit(1);
    }
    return;
  }
  await writeArtifacts(root, artifacts, stale);
  console.log(stale.length > 0 ? `generated: ${stale.join(', ')}` : 'generated files up to date');
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
