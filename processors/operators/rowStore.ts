import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import { trialKey } from '../../schemas/topics.ts';
import { fromRowStateChanged, type StreamRowState } from '../folds/rowState.ts';
import { restoreTable, type RowTable } from '../folds/rowTable.ts';
import {
  addSummaries,
  applyRowChanges,
  copySummary,
  type VersionSummaries,
  type VersionSummary,
} from '../folds/versionSummary.ts';

/** The partition a trial key lands in (the log's partitioner, handed in by deploy/). */
export type PartitionOf = (key: string, partitions: number) => number;

/**
 * The state store of the trial topology (Kafka Streams' state store): one row table and one set of
 * version summaries per owned partition of passk.trials. Restored from the changelog on assignment,
 * dropped on revocation.
 */
export interface RowStore {
  table(partition: number): RowTable;
  summaries(partition: number): VersionSummaries;
  partitions(): number[];
  /** Fills the tables of `partitions` from changelog records (all of them: only those rows are kept). */
  restore(
    partitions: readonly number[],
    records: Iterable<RowStateChanged>,
    partitionOf: PartitionOf,
    total: number,
  ): number;
  drop(partitions: readonly number[]): void;
  /** Version summaries summed over the owned partitions. */
  totals(): VersionSummary[];
}

export const createRowStore = (): RowStore => {
  const tables = new Map<number, RowTable>();
  const sums = new Map<number, VersionSummaries>();
  const get = <T>(m: Map<number, T>, p: number, make: () => T): T => {
    let v = m.get(p);
    if (v === undefined) m.set(p, (v = make()));
    return v;
  };
  return {
    table: (p) => get(tables, p, () => new Map()),
    summaries: (p) => get(sums, p, () => new Map()),
    partitions: () => [...tables.keys()].sort((a, b) => a - b),
    restore: (partitions, records, partitionOf, total) => {
      const wanted = new Set(partitions);
      const rows = new Map<number, StreamRowState[]>();
      for (const r of records) {
        const p = partitionOf(trialKey(r), total);
        if (wanted.has(p)) get(rows, p, () => []).push(fromRowStateChanged(r));
      }
      let restored = 0;
      for (const p of partitions) {
        const table = restoreTable(rows.get(p) ?? []);
        const summaries: VersionSummaries = new Map();
        applyRowChanges(
          summaries,
          [...table.values()].map((after) => ({ before: undefined, after })),
        );
        tables.set(p, table);
        sums.set(p, summaries);
        restored += table.size;
      }
      return restored;
    },
    drop: (partitions) => {
      for (const p of partitions) {
        tables.delete(p);
        sums.delete(p);
      }
    },
    totals: () => {
      const all: VersionSummaries = new Map();
      for (const summaries of sums.values())
        for (const [key, s] of summaries) {
          const have = all.get(key);
          all.set(key, have ? addSummaries(have, s) : copySummary(s));
        }
      return [...all.keys()].sort().map((k) => all.get(k)!);
    },
  };
};
