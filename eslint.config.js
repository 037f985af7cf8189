import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const layer = (files, forbidden, message, extra = []) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          ...forbidden.map((group) => ({
            group: [`**/${group}/**`, `../${group}/*`, `../../${group}/*`],
            message,
          })),
          ...extra,
        ],
      },
    ],
  },
});

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      '.local-stack/',
      '.passk/',
      '.reports/',
      'dist/',
      'tmp/',
      '.tmp-*/',
      'deploy/local/*.cjs',
      // Other tools' files, byte for byte (test/fixtures/tool-outputs/README.md).
      'test/fixtures/tool-outputs/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  // Every arrow points down (STYLE.md §1).
  layer(
    ['schemas/**/*.ts'],
    ['processors', 'sinks', 'producers', 'log', 'deploy', 'cli', 'test'],
    'schemas/ imports only zod',
    [{ regex: '^(?!zod$|vitest$|node:|\\.)', message: 'schemas/ imports only zod (and node: builtins; tests vitest)' }],
  ),
  // A file's last matching layer wins (flat config replaces a rule's options), so each lists everything it forbids.
  layer(
    ['processors/**/*.ts'],
    ['sinks', 'producers', 'log', 'deploy', 'cli', 'test'],
    'processors/ must not import adapters, deploy or cli',
  ),
  layer(
    ['processors/core/**/*.ts'],
    ['operators', 'topologies', 'folds', 'sinks', 'producers', 'log', 'deploy', 'cli', 'test'],
    'processors/core/ is the pure ground floor: it imports schemas only, never folds, operators or topologies',
  ),
  layer(['sinks/**/*.ts', 'log/**/*.ts'], ['deploy', 'cli', 'test'], 'adapters must not import deploy, cli or test'),
  layer(
    ['producers/**/*.ts'],
    ['sinks', 'log', 'deploy', 'cli', 'test'],
    'producers/ publish through the ports: they must not import sinks, log, deploy, cli or test',
  ),
  layer(['deploy/**/*.ts'], ['cli', 'test'], 'deploy/ must not import cli or test'),
  // An argument spread passes one argument per element on the stack: past ~120k elements it throws "Maximum call
  // stack size exceeded" (the dashboard answered HTTP 500 at 250k rows). processors/core/arrays.ts has the loops.
  {
    files: ['processors/**/*.ts', 'sinks/**/*.ts', 'producers/**/*.ts', 'log/**/*.ts', 'cli/**/*.ts', 'deploy/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='Math'] > SpreadElement",
          message:
            'Math.min/max(...xs) overflows the stack on large arrays: use minOf/maxOf (processors/core/arrays.ts)',
        },
        {
          selector: 'CallExpression[callee.property.name=/^(push|unshift|splice)$/] > SpreadElement',
          message: 'push(...xs) overflows the stack on large arrays: use pushAll (processors/core/arrays.ts)',
        },
      ],
    },
  },
  // Only deploy/ (and bench and tests) read the environment; the CLI gets its configuration from deploy/config.ts.
  {
    files: [
      'schemas/**/*.ts',
      'processors/**/*.ts',
      'sinks/**/*.ts',
      'producers/**/*.ts',
      'log/**/*.ts',
      'cli/**/*.ts',
      'demo/**/*.ts',
      'index.ts',
    ],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'read config in deploy/ and pass it in' },
      ],
    },
  },
);
