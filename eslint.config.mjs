// Lint with type information (../shared/style.md "Habits"): no floating promises, exhaustive switches
// over unions, no explicit any outside generated code, no import cycles, and the layer boundaries:
// formats/ and providers/ never import the HTTP framework; http/ and pipeline/ never import the
// OpenAPI generator (the route table's types live with the router).
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const HTTP_LAYER = { group: ['express', 'express/*', '../../http/dispatch', '../../operations/*'], message: 'formats/ and providers/ stay independent of the HTTP layer' };

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/generated/**', '.tmp/**', 'test/fixtures/client-gen/**', 'eslint.config.mjs', 'src/console/app/src/generated/**', 'test-artifacts/**'] },
  {
    // The console app (src/console/app, its own tsconfig): TSX too.
    files: ['**/*.ts', 'src/console/app/**/*.tsx'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-require-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // A cycle makes module initialisation order matter (a value imported from a module still loading is
    // undefined) and ties layers that should stand alone.
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.json' })],
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    files: ['src/http/**/*.ts', 'src/pipeline/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/openapi/*', '**/openapi'], message: 'http/ and pipeline/ never import the OpenAPI generator: route types live in src/http/route-spec.ts' }] }],
    },
  },
  {
    files: ['src/formats/**/*.ts', 'src/providers/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [HTTP_LAYER] }],
    },
  },
  {
    // Formats and providers meet in src/canonical/ and never import each other (issue 17 section 1).
    files: ['src/formats/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [HTTP_LAYER, { group: ['**/providers', '**/providers/*', '**/providers/**'], message: 'formats/ never import providers/: both meet in src/canonical/' }] }],
    },
  },
  {
    files: ['src/providers/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [HTTP_LAYER, { group: ['**/formats', '**/formats/*', '**/formats/**'], message: 'providers/ never import formats/: both meet in src/canonical/' }] }],
    },
  },
  {
    files: ['src/canonical/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/formats/**', '**/providers/**', '**/formats/*', '**/providers/*'], message: 'canonical/ is where formats and providers meet: it imports neither' }] }],
    },
  },
);
