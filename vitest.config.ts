import { defineConfig } from 'vitest/config';

/**
 * Test tiers, by what a file needs, named in its suffix (CONTRIBUTING.md):
 *   unit     *.unit.test.ts      pure code: no processes, ports, databases or services (test/setup/pure.ts enforces it)
 *   int      *.int.test.ts       real local parts: the embedded log (SQLite), chDB, the CLI as a child, ports, python3
 *   kafka    *.kafka.test.ts     a real Kafka broker and schema registry (test/setup/stack.ts starts or finds them)
 *   browser  *.browser.test.ts   Chromium (deploy/test/chromium.mjs finds it)
 *   faults   *.faults.test.ts    the fault campaign on its own three-broker cluster in network namespaces (root)
 * Each runs alone (`npx vitest run --project int`); `npm test` (deploy/test/run.mjs) runs them side by side.
 * Keep the default `forks` pool: chDB inside worker threads crashes with a segmentation fault.
 */
const ignored = ['node_modules/**', '.local-stack/**', 'dist/**'];

export default defineConfig({
  test: {
    pool: 'forks',
    projects: [
      {
        test: {
          name: 'unit',
          include: ['**/*.unit.test.ts'],
          exclude: ignored,
          setupFiles: ['test/setup/pure.ts'],
          // Pure code shares no state between files (no vi.mock, no globals): one module graph per worker, not per file
          // (58 s → 46 s on 2 cores).
          isolate: false,
          // two files at a time on 2 cores (vitest's default is one fewer than the cores): 53 s → 32 s
          maxWorkers: 2,
          // A guard against a hang, not a speed limit: the tier runs beside the others on a busy machine.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'int',
          include: ['**/*.int.test.ts'],
          exclude: ignored,
          testTimeout: 180_000,
          hookTimeout: 300_000,
        },
      },
      {
        test: {
          name: 'kafka',
          include: ['**/*.kafka.test.ts'],
          exclude: ignored,
          globalSetup: ['test/setup/stack.ts'],
          testTimeout: 180_000,
          hookTimeout: 300_000,
          // The Kafka files share one broker: one file at a time.
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'browser',
          include: ['**/*.browser.test.ts'],
          exclude: ignored,
          testTimeout: 180_000,
          hookTimeout: 300_000,
        },
      },
      {
        test: {
          name: 'faults',
          include: ['**/*.faults.test.ts'],
          exclude: ignored,
          testTimeout: 2_400_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
