import fc from 'fast-check';
import { from, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { TOPICS, trialKey } from '../../schemas/topics.ts';
import { partitionOf } from '../../log/partitioner.ts';
import { foldTrials, type RowTable } from '../../processors/folds/rowTable.ts';
import {
  applyRowChanges,
  summariesOfSnapshots,
  versionKeyOf,
  type VersionSummaries,
  type VersionSummary,
} from '../../processors/folds/versionSummary.ts';
import { foldUnits, type FoldedUnit } from '../../processors/operators/foldUnits.ts';
import { createRowStore } from '../../processors/operators/rowStore.ts';
import type { EventBatch } from '../../processors/ports.ts';
import { arbTrialStream, trial } from '../helpers/processorFixtures.ts';

const PARTITIONS = 3;

/** The summaries of a set of trials, from scratch: fold them into a fresh table, count every row once. */
const fromScratch = (trials: readonly TrialRecorded[]): VersionSummaries => {
  const table: RowTable = new Map();
  foldTrials(table, trials);
  const sums: VersionSummaries = new Map();
  applyRowChanges(
    sums,
    [...table.values()].map((after) => ({ before: undefined, after })),
  );
  return sums;
};
const byKey = (summaries: Iterable<VersionSummary>) =>
  [...summaries].sort((a, b) => (versionKeyOf(a) < versionKeyOf(b) ? -1 : 1));

/** The stream cut into batches, each batch on its trials' partition (as the log partitions them), with offsets. */
const batchesOf = (stream: readonly TrialRecorded[], sizes: readonly number[]): EventBatch[] => {
  const perPartition = Array.from({ length: PARTITIONS }, () => [] as TrialRecorded[]);
  for (const t of stream) perPartition[partitionOf(trialKey(t), PARTITIONS)]!.push(t);
  const batches: EventBatch[] = [];
  let cut = 0;
  perPartition.forEach((trials, partition) => {
    for (let at = 0; at < trials.length;) {
      const size = sizes.length === 0 ? trials.length : 1 + (sizes[cut++ % sizes.length]! % 5);
      const events = trials
        .slice(at, at + size)
        .map((event, i) => ({ topic: TOPICS.trials, partition, offset: at + i, key: '', event }));
      batches.push({
        topic: TOPICS.trials,
        partition,
        events,
        lastOffset: at + events.length - 1,
        highWatermark: trials.length,
      });
      at += events.length;
    }
  });
  // interleave the partitions' batches, keeping each partition's order
  return batches.sort((a, b) => a.events[0]!.offset - b.events[0]!.offset || a.partition - b.partition);
};

/** The batches grouped into durable units of `unitSizes` batches each, as batchRows does, then folded unit by unit. */
const unitsOf = (batches: EventBatch[], unitSizes: readonly number[]) => {
  const store = createRowStore();
  const groups: EventBatch[][] = [];
  for (let i = 0, u = 0; i < batches.length; u++) {
    const n = 1 + ((unitSizes[u % Math.max(1, unitSizes.length)] ?? 0) % 4);
    groups.push(batches.slice(i, i + n));
    i += n;
  }
  let units: FoldedUnit[] = [];
  from(groups)
    .pipe(foldUnits(store, 'p'), toArray())
    .subscribe((f) => (units = f));
  return { store, units };
};

const arbRun = fc.record({
  run: arbTrialStream,
  sizes: fc.array(fc.nat(), { maxLength: 8 }),
  units: fc.array(fc.nat(), { maxLength: 8 }),
});

describe('per-partition version snapshots', () => {
  it('summed over partitions, the latest per (partition, version) = the store’s totals = summaries from scratch', () => {
    fc.assert(
      fc.property(arbRun, ({ run: { stream }, sizes, units: unitSizes }) => {
        const { store, units } = unitsOf(batchesOf(stream, sizes), unitSizes);
        const summed = summariesOfSnapshots(units.flatMap((u) => u.summaries));
        expect(summed).toEqual(byKey(store.totals()));
        expect(summed).toEqual(byKey(fromScratch(stream).values()));
      }),
    );
  });

  it('each snapshot is its partition’s summary as of its nextOffset, not as later batches left it', () => {
    fc.assert(
      fc.property(arbRun, ({ run: { stream }, sizes, units: unitSizes }) => {
        const batches = batchesOf(stream, sizes);
        const { units } = unitsOf(batches, unitSizes);
        for (const u of units) {
          // one snapshot per (partition, version) in a unit
          expect(new Set(u.summaries.map((s) => `${s.partition}/${versionKeyOf(s.summary)}`)).size).toBe(
            u.summaries.length,
          );
          for (const s of u.summaries) {
            const upTo = batches
              .filter((b) => b.partition === s.partition)
              .flatMap((b) => b.events.filter((e) => e.offset < s.nextOffset).map((e) => e.event as TrialRecorded));
            expect(s.summary).toEqual(fromScratch(upTo).get(versionKeyOf(s.summary)));
          }
          // and it carries one for every (partition, version) it changed, and no other
          const changed = new Set(u.changelog.map((r) => `${partitionOf(trialKey(r), PARTITIONS)}/${versionKeyOf(r)}`));
          expect(new Set(u.summaries.map((s) => `${s.partition}/${versionKeyOf(s.summary)}`))).toEqual(changed);
        }
      }),
    );
  });
});

describe('a rival for a taken slot, with another verdict', () => {
  it('is a conflict: dead-lettered with both event ids, never folded, the row and its bin unchanged', () => {
    const store = createRowStore();
    const at = (attempt: number, passed: boolean, id: string) =>
      trial({ row: 'r1', version: 'v1', attempt, passed, id, at: 1_767_225_600_000 + attempt });
    const units: FoldedUnit[] = [];
    const batch = (events: TrialRecorded[], first: number): EventBatch => ({
      topic: TOPICS.trials,
      partition: 0,
      events: events.map((event, i) => ({ topic: TOPICS.trials, partition: 0, offset: first + i, key: '', event })),
      lastOffset: first + events.length - 1,
      highWatermark: first + events.length,
    });
    const first = [at(0, true, '01KA0000000000000000000002'), at(1, true, '01KA0000000000000000000003')];
    // a smaller event id, once enough to take the slot; now the slot's first answer stands (issue 26, item 3)
    const rival = at(0, false, '01KA0000000000000000000001');
    from([[batch(first, 0)], [batch([rival], 2)]])
      .pipe(foldUnits(store, 'p'), toArray())
      .subscribe((u) => units.push(...u));
    const [, last] = units;
    expect(last!.changelog).toEqual([]);
    expect(last!.trials).toEqual([]);
    expect(last!.conflicts).toHaveLength(1);
    expect(last!.conflicts[0]!.source).toMatchObject({ topic: TOPICS.trials, partition: 0, offset: 2 });
    expect(JSON.parse(new TextDecoder().decode(last!.conflicts[0]!.value))).toEqual(rival);
    expect(last!.conflicts[0]!.reason).toContain(
      'was folded as event 01KA0000000000000000000002; this one, event 01KA0000000000000000000001, differs in passed',
    );
    expect(byKey(store.totals())).toEqual(byKey(fromScratch(first).values()));
  });
});
