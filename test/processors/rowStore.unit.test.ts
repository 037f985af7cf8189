import { describe, expect, it } from 'vitest';
import { keyOf, trialKey } from '../../schemas/topics.ts';
import { partitionOf } from '../../log/partitioner.ts';
import { trial } from '../helpers/processorFixtures.ts';
import { toRowStateChanged } from '../../processors/folds/rowState.ts';
import { foldTrials } from '../../processors/folds/rowTable.ts';
import { createRowStore } from '../../processors/operators/rowStore.ts';

describe('row store', () => {
  it('derives the trial partition key exactly as the log does', () => {
    const t = trial({ row: 'r1', version: 'v', attempt: 0, passed: true });
    expect(trialKey(t)).toBe(keyOf(t));
  });

  it('restores only the rows of the assigned partitions, highest seq winning, with their summaries', () => {
    const trials = Array.from({ length: 40 }, (_, i) =>
      trial({ row: `r${i % 20}`, version: 'v', attempt: Math.floor(i / 20), passed: i % 3 > 0 }),
    );
    const table = new Map();
    const records = foldTrials(table, trials).map((c) => toRowStateChanged(c.after, 'p'));
    const stale = records.map((r) => ({ ...r, seq: 1, n: 0 }));
    const store = createRowStore();
    const restored = store.restore([0, 2], [...records, ...stale], partitionOf, 4);
    const expected = [...table.values()].filter((r) => [0, 2].includes(partitionOf(trialKey(r), 4)));
    expect(restored).toBe(expected.length);
    expect(store.partitions()).toEqual([0, 2]);
    expect([...store.table(0).values(), ...store.table(2).values()].every((r) => r.seq === 2)).toBe(true);
    expect(store.totals()[0]!.rows).toBe(expected.length);
    store.drop([0]);
    expect(store.partitions()).toEqual([2]);
  });
});
