import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { partitionOf } from '../../log/partitioner.ts';
import { compareVersions } from '../../processors/core/compare.ts';
import { evaluateGate } from '../../processors/core/gate.ts';
import { groupTrials } from '../../processors/core/groups.ts';
import { MUST_NOT_BREAK_TAG } from '../../processors/core/mustNotBreak.ts';
import { createRng } from '../../processors/core/prng.ts';
import { DEFAULT_REPORT_OPTIONS } from '../../processors/core/report.ts';
import { versionPairs } from '../../processors/core/versionPairs.ts';
import { emptyBook, toRunClosed } from '../../processors/folds/gates.ts';
import { toRowStateChanged } from '../../processors/folds/rowState.ts';
import { foldTrials } from '../../processors/folds/rowTable.ts';
import {
  applyGateInput,
  createGateStore,
  decideOpen,
  type GateInput,
  type GateStore,
} from '../../processors/operators/decideGates.ts';
import type { EventBatch } from '../../processors/ports.ts';
import type { ComparisonDeclared, ConfirmationRequested } from '../../schemas/events/comparisons.ts';
import type { GateEvaluated } from '../../schemas/events/decisions.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import type { RunFinished } from '../../schemas/events/runFinished.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../../schemas/ids.ts';
import { keyOf, TOPICS } from '../../schemas/topics.ts';
import { T0, trial } from '../helpers/processorFixtures.ts';

/**
 * Issue 26, item 1: a live gate's decision does not depend on how its events are laid out. Random
 * suites and version names, 1-12 partitions of passk.decisions shared by 1-3 instances, and random
 * arrival orders of row states, closed runs and declarations: the comparison's owner decides exactly
 * once, no other instance decides, and the verdict is the offline gate's (`passk gate` on the trials,
 * what `gate --from-store` computes from the store) — or, when the candidate lost stable-correct
 * rows, the confirmation request names exactly the offline comparison's suspects.
 */
const NAME = fc.stringMatching(/^[a-z][a-z0-9._-]{0,7}$/);

const SCENARIO = fc
  .record({
    suite: NAME,
    baseline: NAME,
    candidate: NAME,
    datasetVersion: NAME,
    partitions: fc.integer({ min: 1, max: 12 }),
    instances: fc.integer({ min: 1, max: 3 }),
    rows: fc.integer({ min: 1, max: 5 }),
    passes: fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }),
    mustNotBreak: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
    confirmations: fc.constantFrom(0, 3),
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  })
  .filter((s) => s.baseline !== s.candidate);
type Scenario = typeof SCENARIO extends fc.Arbitrary<infer T> ? T : never;

const batchOf = (topic: string, partition: number, events: PasskEvent[]): EventBatch => ({
  topic,
  partition,
  events: events.map((event, i) => ({ topic, partition, offset: i, key: keyOf(event), event })),
  lastOffset: events.length - 1,
  highWatermark: events.length,
});

const runFinished = (s: Scenario, version: string, trials: number): RunFinished => ({
  event_id: deterministicEventId(T0 + 90_000, 'RunFinished', s.suite, version),
  type: 'RunFinished',
  schema_version: 1,
  occurred_at: T0 + 90_000,
  producer: 'test',
  run_id: `run-${version}`,
  suite: s.suite,
  dataset_version: s.datasetVersion,
  agent: { version },
  status: 'completed',
  trials,
});

const world = (s: Scenario) => {
  const trials: TrialRecorded[] = [];
  for (const [vi, version] of [s.baseline, s.candidate].entries())
    for (let row = 0; row < s.rows; row++)
      for (let attempt = 0; attempt < 3; attempt++)
        trials.push(
          trial({
            suite: s.suite,
            dataset_version: s.datasetVersion,
            row: `r${row}`,
            version,
            run: `run-${version}`,
            attempt,
            passed: s.passes[vi * 15 + row * 3 + attempt]!,
            output: 'x',
            at: T0 + 20_000 + attempt,
            ...(s.mustNotBreak[row] ? { tags: [MUST_NOT_BREAK_TAG] } : {}),
          }),
        );
  const rowStates = foldTrials(new Map(), trials).map((ch) => toRowStateChanged(ch.after, 'p'));
  const closed = [s.baseline, s.candidate].map((v) => toRunClosed(runFinished(s, v, s.rows * 3), 'p'));
  const declared: ComparisonDeclared = {
    event_id: deterministicEventId(T0 + 50_000, 'ComparisonDeclared', s.suite),
    type: 'ComparisonDeclared',
    schema_version: 1,
    occurred_at: T0 + 50_000,
    producer: 'test',
    comparison_id: 'gate-1',
    suite: s.suite,
    dataset_id: s.suite, // as passk gate --declare names it when no dataset is published
    dataset_version: s.datasetVersion,
    baseline: s.baseline,
    candidate: s.candidate,
    confirmation_attempts: s.confirmations,
  };
  return { trials, rowStates, closed, declared };
};

/** The decisions one instance emits, fed every input in the given order (echoes of its own decisions included). */
const runInstance = (s: Scenario, store: GateStore, inputs: GateInput[], owned: ReadonlySet<number>) => {
  const out: (ConfirmationRequested | GateEvaluated)[] = [];
  for (const p of owned) store.books.set(p, store.books.get(p) ?? emptyBook());
  const queue = [...inputs];
  while (queue.length > 0) {
    const input = queue.shift()!;
    if (input.source === 'decisions' && !owned.has(input.batch.partition)) continue;
    const touched = applyGateInput(store, input, 'p');
    const decided = decideOpen(store, touched.versions, 'p');
    out.push(...decided);
    for (const e of decided) {
      // the echo: its own partition of passk.decisions and the whole-topic tail, later
      const partition = partitionOf(keyOf(e), s.partitions);
      queue.push({ source: 'decisions', batch: batchOf(TOPICS.decisions, partition, [e]) });
      queue.push({ source: 'closed', batch: batchOf(TOPICS.decisions, partition, [e]) });
    }
  }
  return out;
};

const shuffled = <T>(items: readonly T[], seed: number): T[] => {
  const rng = createRng(seed);
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
};

describe('live gates decide whatever the layout of passk.decisions', () => {
  it('the owner decides once, as the offline gate does, for any names, partitions, instances and order', () => {
    fc.assert(
      fc.property(SCENARIO, (s) => {
        const { trials, rowStates, closed, declared } = world(s);
        const onDecisions = [declared, ...closed].map((e) => ({
          e,
          partition: partitionOf(keyOf(e), s.partitions),
        }));
        const inputs: GateInput[] = [
          ...rowStates.map((e): GateInput => ({ source: 'rowstate', batch: batchOf(TOPICS.rowstate, 0, [e]) })),
          ...onDecisions.flatMap(({ e, partition }): GateInput[] => [
            { source: 'decisions', batch: batchOf(TOPICS.decisions, partition, [e]) },
            { source: 'closed', batch: batchOf(TOPICS.decisions, partition, [e]) },
          ]),
        ];
        const emitted = Array.from({ length: s.instances }, (_, i) => {
          const owned = new Set(Array.from({ length: s.partitions }, (_, p) => p).filter((p) => p % s.instances === i));
          return runInstance(s, createGateStore(), shuffled(inputs, s.seed + i), owned);
        }).flat();

        const opts = DEFAULT_REPORT_OPTIONS;
        const pairs = versionPairs(groupTrials(trials), s.baseline, s.candidate);
        expect(pairs.both).toHaveLength(1);
        const suspects = compareVersions(pairs.both[0]!, opts).lost_stable_correct;
        expect(emitted).toHaveLength(1);
        const [decision] = emitted;
        if (s.confirmations > 0 && suspects.length > 0) {
          expect(decision).toMatchObject({ type: 'ConfirmationRequested', rows: suspects });
          return;
        }
        const offline = evaluateGate(
          {
            baseline: s.baseline,
            candidate: s.candidate,
            pairs: [...pairs.both, ...pairs.oneSided],
            mustNotBreak: { tag: MUST_NOT_BREAK_TAG, ids: [] },
            rules: {},
          },
          opts,
        );
        const live = decision as GateEvaluated;
        expect(live.type).toBe('GateEvaluated');
        expect(live.verdict).toBe(offline.verdict);
        expect(live.reasons.map((r) => [r.rule, r.passed, r.rows])).toEqual(
          offline.rules.map((r) => [r.rule, r.passed, r.rows]),
        );
      }),
      { numRuns: 150 },
    );
  });
});
