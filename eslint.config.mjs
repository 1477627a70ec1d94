// Lint with type information (../shared/style.md "Habits"): no floating promises, exhaustive switches
// over unions, no explicit any outside generated code, and the layer boundaries: formats/ and
// providers/ never import the HTTP framework.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/generated/**', '.tmp/**', 'test/fixtures/client-gen/**', 'eslint.config.mjs'] },
  {
    files: ['**/*.ts'],
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
    files: ['src/formats/**/*.ts', 'src/providers/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['express', 'express/*', '../../http/dispatch', '../../operations/*'], message: 'formats/ and providers/ stay independent of the HTTP layer' }] }],
    },
  },
);
