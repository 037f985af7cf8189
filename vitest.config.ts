import { BaseSequencer, type TestSpecification } from 'vitest/node';
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
/** Files `npm test` runs in another lane than their tier's (deploy/test/run.mjs, INT_AFTER_KAFKA), comma-separated. */
const laneExcluded = (process.env.PASSK_TEST_EXCLUDE ?? '').split(',').filter(Boolean);

/**
 * The files that take a minute or more (`npm test` prints the slowest 10), started first in their tier. Without
 * vitest's cache of past durations (a fresh clone) it starts the largest files first, and the README commands'
 * 4-line file (test/readme/readmeCommands.ts does the work) ran last, minutes alone in the int tier's tail with one
 * of its two workers idle. The rest follow in vitest's order (with its cache: longest first; without: largest first).
 */
const LONG_FILES = [
  'test/readme/readmeCommands.int.test.ts',
  'test/integration/importToolStream.int.test.ts',
  'test/integration/importStream.int.test.ts',
  'test/integration/redactionCorpus.int.test.ts',
  'test/cli/storeRebuild.int.test.ts',
  'test/integration/producers.review.int.test.ts',
];
class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONG_FILES.findIndex((long) => f.moduleId.endsWith(`/${long}`));
      return i < 0 ? LONG_FILES.length : i;
    };
    // stable: the long files first (in LONG_FILES' order, before another tier's files run beside them: `npm test`
    // runs int and browser together), then the rest in vitest's order
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    pool: 'forks',
    sequence: { sequencer: LongFirst },
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
          // A guard against a hang, not a speed limit: the tier runs beside the others on a busy machine (at a load of
          // 31-36 a test of 4 s took 31 s and failed the 30 s this was).
          testTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'int',
          include: ['**/*.int.test.ts'],
          exclude: [...ignored, ...laneExcluded],
          // the CLI's children run one build of the sources, not tsx each (test/setup/cliBuild.ts)
          globalSetup: ['test/setup/cliBuild.ts'],
          testTimeout: 180_000,
          hookTimeout: 300_000,
        },
      },
      {
        test: {
          name: 'kafka',
          include: ['**/*.kafka.test.ts'],
          exclude: ignored,
          globalSetup: ['test/setup/cliBuild.ts', 'test/setup/stack.ts'],
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
          // removes the one `passk demo` run the demo, explorer and review files copy (test/browser/sharedDemo.ts)
          globalSetup: ['test/setup/cliBuild.ts', 'test/setup/sharedDemo.ts'],
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
