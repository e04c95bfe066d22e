import js from '@eslint/js';
import jsxA11y from 'eslint-plugin-jsx-a11y';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', 'schema/', 'coverage/', 'bench/results.md', 'dist/', 'test-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', Buffer: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: false }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    // The dashboard and hosted pages: browser code, React's hook rules, and the accessibility rules
    // (labels, roles, keyboard use) in their strict form.
    files: ['src/web/**/*.{ts,tsx}'],
    ignores: ['src/web/vite.config.ts'],
    ...reactHooks.configs.flat['recommended-latest'],
    ...jsxA11y.flatConfigs.strict,
    languageOptions: {
      ...jsxA11y.flatConfigs.strict.languageOptions,
      globals: { ...globals.browser },
    },
    plugins: { ...reactHooks.configs.flat['recommended-latest'].plugins, ...jsxA11y.flatConfigs.strict.plugins },
    rules: {
      ...reactHooks.configs.flat['recommended-latest'].rules,
      ...jsxA11y.flatConfigs.strict.rules,
      // The web app reaches the server only through types: a value import of server code would bundle it.
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../../**/modules/**', '../../**/db/**', '../../**/oauth/**'],
              allowTypeImports: true,
              message: 'Import server code as types only (import type …).',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests read loosely shaped JSON answers; `any` there keeps assertions readable.
    files: ['**/*.test.ts', 'test/helpers/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
