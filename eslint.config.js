// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'fs',
  'path',
  'crypto',
  'http',
  'https',
  'net',
  'os',
  'child_process',
  'url',
  'util',
  'stream',
  'events',
  'timers',
  'process',
  'dns',
  'tls',
  'zlib',
  'worker_threads',
];

export default tseslint.config(
  { ignores: ['node_modules', 'dist', '.tools', '.data', 'test-results', 'bench/results', 'cli/bin.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/ban-ts-comment': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: false }],
    },
  },
  {
    // Workflows must stay deterministic: no Node builtins, no I/O libraries, activities by type only.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.flatMap((m) => [m, `node:${m}`]),
            'mongodb',
            'koa',
            'pino',
            '@temporalio/client',
            '@temporalio/worker',
            '@temporalio/activity',
          ].map((name) => ({ name, message: 'Workflows are deterministic: no Node builtins or I/O.' })),
          patterns: [
            {
              group: ['../activities/*', '../store/*', '../api/*', '../runtime/*'],
              allowTypeImports: true,
              message: 'Import activities as types only.',
            },
            {
              group: ['../services/*', '../worker/*', '../cli/*', '../scripts/*', '../bench/*'],
              message: 'Workflows import the domain, their own files and activity types only.',
            },
          ],
        },
      ],
    },
  },
  {
    // The domain is pure: it imports nothing of the service's other layers.
    files: ['domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../*', '!../domain/*'],
              message: 'The domain imports only the domain.',
            },
          ],
        },
      ],
    },
  },
  {
    // vitest's asymmetric matchers (expect.any, expect.stringMatching…) are typed `any` by design.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-unsafe-assignment': 'off' },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
