// ESLint (flat config): the recommended JavaScript and typescript-eslint rules (syntax-based, no type information,
// so it stays fast), with formatting left to Prettier.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['node_modules/', '**/node_modules/', '.data/', 'dist/', 'coverage/', 'bench/results/', 'client-sdk/src/rest-types.ts', 'src/db/migrations/'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // Unused parameters keep a documented signature (handlers, callbacks); a leading underscore marks them.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // `while ((await step()) > 0);` drains a batch job: the empty body is the point.
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  prettier,
);
