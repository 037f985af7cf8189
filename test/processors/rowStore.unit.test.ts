import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyOf, trialKey } from '../../schemas/topics.ts';
import { partitionOf } from '../../log/partitioner.ts';
import { arbTrialStream, trial } from '../helpers/processorFixtures.ts';
import { toRowStateChanged } from '../../processors/folds/rowState.ts';
import {
  checkpointOf,
  foldTrials,
  foldTrialsInto,
  type OwnedRowChange,
  type RowTable,
} from '../../processors/folds/rowTable.ts';
import { applyRowstate, createGateStore } from '../../processors/operators/decideGates.ts';
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

  it('shares restored rows with the gates’ table, and the fold changes a copy: the gates keep the restored state', () => {
    fc.assert(
      fc.property(arbTrialStream, fc.nat(60), ({ stream }, cut) => {
        const before = stream.slice(0, cut);
        const after = stream.slice(cut);
        // the changelog a first run left, restored as a restart does, its states handed to the gates
        const first: RowTable = new Map();
        foldTrials(first, before);
        const records = [...first.values()].map((r) => toRowStateChanged(r, 'p'));
        const store = createRowStore();
        const restoring = store.restoring([0, 1], partitionOf, 2);
        const states = records.map((r) => restoring.add(r));
        restoring.done();
        const gates = createGateStore();
        applyRowstate(gates, records, { versions: new Set(), windows: new Set() }, states);
        const gateRows = () => [...gates.rows.values()].flatMap((t) => [...t.values()]);
        const restored = JSON.stringify(gateRows());
        expect(gateRows().every((r) => states.includes(r))).toBe(true); // the same objects, not copies
        // the rest of the trials, folded in place as the topology does
        for (const p of [0, 1]) {
          const mine = after.filter((t) => partitionOf(trialKey(t), 2) === p);
          foldTrialsInto(store.table(p), mine, new Map<string, OwnedRowChange>());
        }
        expect(JSON.stringify(gateRows())).toBe(restored);
        const straight: RowTable = new Map();
        foldTrials(straight, stream);
        const both: RowTable = new Map([...store.table(0), ...store.table(1)]);
        expect(JSON.stringify(checkpointOf(both))).toBe(JSON.stringify(checkpointOf(straight)));
      }),
      { numRuns: 300 },
    );
  });
});
