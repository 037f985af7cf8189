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
            // a nested room is also forbidden to its siblings by its own name (`../dashboard/x.ts` from
            // sinks/clickhouse/); a file (processors/index.ts) only by its path
            group: group.endsWith('.ts')
              ? [`**/${group}`, `../${group}`, `../../${group}`]
              : [
                  ...new Set([
                    `**/${group}/**`,
                    `../${group}/*`,
                    `../../${group}/*`,
                    `**/${group.split('/').at(-1)}/**`,
                  ]),
                ],
            message,
          })),
          ...extra,
        ],
      },
    ],
  },
});

/**
 * The arrows the architecture forbids, one entry per room (docs/architecture.md, "What the lint enforces", lists
 * them; test/conventions/lintLayering.unit.test.ts plants one violation of each). A file's last matching entry wins
 * (flat config replaces a rule's options), so each lists everything it forbids, its parent room's arrows included.
 */
const UP = ['deploy', 'cli', 'test', 'demo'];
const STREAM = ['processors/folds', 'processors/operators', 'processors/topologies', 'processors/index.ts'];
export const ARROWS = [
  {
    files: ['schemas/**/*.ts'],
    forbidden: ['processors', 'sinks', 'producers', 'log', 'web', ...UP],
    message: 'schemas/ imports only zod',
    extra: [
      { regex: '^(?!zod$|vitest$|node:|\\.)', message: 'schemas/ imports only zod (and node: builtins; tests vitest)' },
    ],
  },
  {
    files: ['processors/**/*.ts'],
    forbidden: ['sinks', 'producers', 'log', 'web', ...UP],
    message: 'processors/ must not import adapters, deploy or cli',
  },
  {
    files: ['processors/folds/**/*.ts'],
    forbidden: ['operators', 'topologies', 'sinks', 'producers', 'log', 'web', ...UP],
    message: 'processors/folds/ are pure folds: they import core and schemas, never operators or topologies',
  },
  {
    files: ['processors/operators/**/*.ts'],
    forbidden: ['topologies', 'sinks', 'producers', 'log', 'web', ...UP],
    message: 'processors/operators/ are wired by the topologies: they never import one',
  },
  {
    files: ['processors/core/**/*.ts'],
    forbidden: ['operators', 'topologies', 'folds', 'sinks', 'producers', 'log', 'web', ...UP],
    message: 'processors/core/ is the pure ground floor: it imports schemas only, never folds, operators or topologies',
  },
  {
    files: ['sinks/**/*.ts'],
    forbidden: ['web', 'producers', 'log', ...STREAM, ...UP],
    message:
      'sinks/ keep the store: they import processors/ports, processors/core and schemas, never the dashboard (web), ' +
      'producers, log, the stream (folds, operators, topologies), deploy or cli',
  },
  {
    files: ['web/**/*.ts'],
    forbidden: ['producers', 'log', ...STREAM, ...UP],
    message:
      'web/ presents the store: it imports sinks/clickhouse, processors/core and schemas, never producers, the ' +
      "log's internals, the stream (folds, operators, topologies), deploy or cli",
  },
  {
    files: ['log/**/*.ts'],
    forbidden: ['sinks', 'producers', 'web', ...STREAM, ...UP],
    message: 'log/ adapts the event log: it imports processors/ports, processors/core and schemas only',
  },
  {
    files: ['producers/**/*.ts'],
    forbidden: ['sinks', 'log', 'web', ...STREAM, ...UP],
    message:
      'producers/ publish through the ports: they import processors/ports, processors/core and schemas, never ' +
      'sinks, log, the stream (folds, operators, topologies), deploy or cli',
  },
  { files: ['deploy/**/*.ts'], forbidden: ['cli', 'test'], message: 'deploy/ must not import cli or test' },
];

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
  // Every arrow points down (docs/architecture.md draws these same rules, ARROWS below, with the folder tree).
  ...ARROWS.map(({ files, forbidden, message, extra }) => layer(files, forbidden, message, extra)),
  // An argument spread passes one argument per element on the stack: past ~120k elements it throws "Maximum call
  // stack size exceeded" (the dashboard answered HTTP 500 at 250k rows). processors/core/arrays.ts has the loops.
  {
    files: [
      'processors/**/*.ts',
      'sinks/**/*.ts',
      'producers/**/*.ts',
      'log/**/*.ts',
      'web/**/*.ts',
      'cli/**/*.ts',
      'deploy/**/*.ts',
    ],
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
      'web/**/*.ts',
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
