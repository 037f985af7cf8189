import type { RowStateChanged } from '../../schemas/events/decisions.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { rowStateKey, trialKey } from '../../schemas/topics.ts';
import { fromRowStateChanged, type StreamRowState } from '../folds/rowState.ts';
import type { RowTable } from '../folds/rowTable.ts';
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
  /**
   * A restore of `partitions` fed one changelog record at a time, as the changelog is read (all of its records:
   * only those rows are kept, each turned into its row state as it comes, so the read's decoded records die
   * young instead of all being held until the end). `done` puts the tables in place and returns their rows.
   */
  restoring(partitions: readonly number[], partitionOf: PartitionOf, total: number): RowRestore;
  /** Fills the tables of `partitions` from changelog records (all of them: only those rows are kept). */
  restore(
    partitions: readonly number[],
    records: Iterable<RowStateChanged>,
    partitionOf: PartitionOf,
    total: number,
  ): number;
  drop(partitions: readonly number[]): void;
  /**
   * The store's repair after a restore (operators/foldUnits.ts): the partition's offsets below `until` may have
   * been folded, and their changelog published, before the restart without the store getting their rows. Set at
   * assignment to the partition's end; 0 (none) once passed or dropped.
   */
  repairUntil(partition: number): number;
  setRepairUntil(partition: number, until: number): void;
  /**
   * Per partition in repair: the event ids rewritten in the window (a copy of one of them is not written again),
   * and the trials of a retracted run met in the window, by row and run, until its retraction comes (the slot is
   * then closed: what comes later of that run, a copy of the retraction too, is not written).
   */
  repairState(partition: number): RepairState;
  /** Version summaries summed over the owned partitions. */
  totals(): VersionSummary[];
  /** Every row of the owned partitions. */
  rows(): Iterable<StreamRowState>;
}

/** A partition's repair in progress (`RowStore.repairState`). */
export interface RepairState {
  readonly seen: Set<string>;
  readonly pending: Map<string, TrialRecorded[]>;
}

/** A restore in progress (`RowStore.restoring`). */
export interface RowRestore {
  /**
   * The row state the record restored, frozen: the gates' row table may hold the same object (`applyRowstate`),
   * and the fold copies it before changing it (`foldTrialsInto`). Undefined when the record was not kept (another
   * partition's, or older than the row's state).
   */
  add(record: RowStateChanged): StreamRowState | undefined;
  done(): number;
}

export const createRowStore = (): RowStore => {
  const tables = new Map<number, RowTable>();
  const sums = new Map<number, VersionSummaries>();
  const repairs = new Map<number, RepairState & { until: number }>();
  const get = <T>(m: Map<number, T>, p: number, make: () => T): T => {
    let v = m.get(p);
    if (v === undefined) m.set(p, (v = make()));
    return v;
  };
  return {
    table: (p) => get(tables, p, () => new Map()),
    summaries: (p) => get(sums, p, () => new Map()),
    partitions: () => [...tables.keys()].sort((a, b) => a - b),
    restoring: (partitions, partitionOf, total) => {
      const building = new Map<number, RowTable>(partitions.map((p) => [p, new Map()]));
      return {
        add: (r) => {
          const table = building.get(partitionOf(trialKey(r), total));
          if (table === undefined) return undefined;
          const key = rowStateKey(r);
          // the highest seq is the newest (restoreTable's rule): an older record is not even converted
          if ((table.get(key)?.seq ?? -1) >= r.seq) return undefined;
          const s = Object.freeze(fromRowStateChanged(r));
          table.set(key, s);
          return s;
        },
        done: () => {
          let restored = 0;
          for (const [p, table] of building) {
            const summaries: VersionSummaries = new Map();
            applyRowChanges(
              summaries,
              Array.from(table.values(), (after) => ({ before: undefined, after })),
            );
            tables.set(p, table);
            sums.set(p, summaries);
            restored += table.size;
          }
          building.clear(); // the store holds the tables now; a restoring kept past its end must not
          return restored;
        },
      };
    },
    restore(partitions, records, partitionOf, total) {
      const r = this.restoring(partitions, partitionOf, total);
      for (const record of records) r.add(record);
      return r.done();
    },
    drop: (partitions) => {
      for (const p of partitions) {
        tables.delete(p);
        sums.delete(p);
        repairs.delete(p);
      }
    },
    repairUntil: (p) => repairs.get(p)?.until ?? 0,
    setRepairUntil: (p, until) => {
      if (until > 0) repairs.set(p, { until, seen: new Set(), pending: new Map() });
      else repairs.delete(p);
    },
    repairState: (p) => repairs.get(p) ?? { seen: new Set(), pending: new Map() },
    totals: () => {
      const all: VersionSummaries = new Map();
      for (const summaries of sums.values())
        for (const [key, s] of summaries) {
          const have = all.get(key);
          all.set(key, have ? addSummaries(have, s) : copySummary(s));
        }
      return [...all.keys()].sort().map((k) => all.get(k)!);
    },
    *rows() {
      for (const table of tables.values()) yield* table.values();
    },
  };
};
