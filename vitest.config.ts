import { defineConfig } from 'vitest/config';

// Keep the default `forks` pool: chDB inside worker threads crashes with a segmentation fault.
export default defineConfig({
  test: {
    pool: 'forks',
    projects: [
      {
        test: {
          name: 'unit',
          include: ['**/*.unit.test.ts'],
          exclude: ['node_modules/**', '.local-stack/**'],
        },
      },
      {
        test: {
          name: 'int',
          include: ['test/**/*.int.test.ts'],
          globalSetup: ['test/setup/stack.ts'],
          testTimeout: 180_000,
          hookTimeout: 300_000,
          // Integration files share one broker and one machine of 2 cores: run them one at a time.
          fileParallelism: false,
        },
      },
    ],
  },
});
