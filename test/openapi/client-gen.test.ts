// Spec-driven client generation, as users will consume the API: openapi-typescript generates types
// from the bundled document, and a small openapi-fetch program (test/fixtures/client-gen/program.ts)
// must type-check against them, including a deliberately wrong call the types must reject.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile, copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const FIXTURE = path.join(ROOT, 'test/fixtures/client-gen/program.ts');

// Reused between checks: the second program shares the parsed lib and openapi-fetch declarations.
let previous: ts.Program | undefined;

function typeCheck(file: string): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: ['node'],
    typeRoots: [path.join(ROOT, 'node_modules/@types')],
    skipLibCheck: true,
  };
  const program = ts.createProgram([file], options, undefined, previous);
  previous = program;
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : '';
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

describe('generated TypeScript client', function () {
  this.timeout(120_000);
  let dir: string;

  before(async () => {
    // Inside the repository (under the ignored .tmp/) so the program resolves openapi-fetch from node_modules.
    await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
    dir = await mkdtemp(path.join(ROOT, '.tmp', 'client-gen-'));
    const { default: openapiTS, astToString } = await import('openapi-typescript');
    const document = JSON.parse(await readFile(path.join(ROOT, 'src/generated/openapi.json'), 'utf8')) as Parameters<typeof openapiTS>[0];
    const ast = await openapiTS(document);
    await writeFile(path.join(dir, 'schema.d.ts'), astToString(ast));
    await copyFile(FIXTURE, path.join(dir, 'program.ts'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('generates types for every operation', async () => {
    const schema = await readFile(path.join(dir, 'schema.d.ts'), 'utf8');
    for (const id of ['listAgents', 'createRun', 'getRun', 'createChatCompletion', 'createMessage', 'createResponse', 'listAuditRecords']) {
      assert.match(schema, new RegExp(`\\b${id}: \\{`), id);
    }
  });

  it('type-checks a program calling listAgents, getAgent, createRun, getRun and createChatCompletion', () => {
    assert.deepEqual(typeCheck(path.join(dir, 'program.ts')), []);
  });

  it('fails the check when the deliberately wrong call is not marked', async () => {
    const source = await readFile(FIXTURE, 'utf8');
    const unmarked = path.join(dir, 'program-unmarked.ts');
    await writeFile(unmarked, source.replace(/^\s*\/\/ @ts-expect-error.*$/m, ''));
    const diagnostics = typeCheck(unmarked);
    assert.equal(diagnostics.length, 1, diagnostics.join('\n'));
    assert.match(diagnostics[0]!, /agentId/);
  });
});
