import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const layer = (files, forbidden, message) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: forbidden.map((group) => ({
          group: [`**/${group}/**`, `../${group}/*`, `../../${group}/*`],
          message,
        })),
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
  ),
  layer(
    ['processors/**/*.ts'],
    ['sinks', 'producers', 'log', 'deploy', 'cli', 'test'],
    'processors/ must not import adapters, deploy or cli',
  ),
  layer(
    ['sinks/**/*.ts', 'producers/**/*.ts', 'log/**/*.ts'],
    ['deploy', 'cli', 'test'],
    'adapters must not import deploy, cli or test',
  ),
  layer(['deploy/**/*.ts'], ['cli', 'test'], 'deploy/ must not import cli or test'),
  // Only deploy/ (and the CLI entry, bench and tests) read the environment.
  {
    files: ['schemas/**/*.ts', 'processors/**/*.ts', 'sinks/**/*.ts', 'producers/**/*.ts', 'log/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'read config in deploy/ and pass it in' },
      ],
    },
  },
);
