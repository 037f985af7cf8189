import type { PasskEvent } from '../../schemas/events/index.ts';
import type { StreamRowState } from '../folds/rowState.ts';

/**
 * Beside pushed records, the row state a restore already made of each (`RowRestore.add`; frozen, so shared: the
 * gates' row table holds the same object instead of a copy of its own), undefined where it made none.
 */
export type RestoredStates = readonly (StreamRowState | undefined)[];

/** The topologies that write passk.rowstate: row states (trials) and window snapshots (windows). */
export type RowstateWriter = 'trials' | 'windows';

/**
 * passk.rowstate handed over in process: the records this process's writers made durable there, and
 * the ones their restores read from it, go straight to the gates, which then need not read back
 * through the log every record the trials just wrote (docs/processors.md, "The gates' row table").
 *
 * It holds only while this process writes every record of the topic: each writer owns every
 * partition of its source. Once a writer is assigned fewer or loses some (another member writes them), the
 * feed is `partial` for good and the gates tail the topic as well, from its start.
 */
export interface RowstateFeed {
  /**
   * Records a writer made durable on passk.rowstate, or read from it in a restore (any partition), with the row
   * states the restore made of them.
   */
  push(events: readonly PasskEvent[], states?: RestoredStates): void;
  /** A writer was given partitions and starts restoring them (a long restore is not a missing writer). */
  restoring(writer: RowstateWriter): void;
  /** A writer restored newly assigned partitions of its source, which has `total` partitions. */
  assigned(writer: RowstateWriter, partitions: readonly number[], total: number): void;
  revoked(writer: RowstateWriter, partitions: readonly number[]): void;
  /** The reader (one): told of every push, at once. Returns its removal. */
  follow(listener: (events: readonly PasskEvent[], states?: RestoredStates) => void): () => void;
  /** Resolves once every writer owns every partition of its source (its restores pushed the whole topic). */
  readonly loaded: Promise<void>;
  /** Resolves once a writer was assigned fewer than all of its partitions, lost some, or got none in time. */
  readonly partial: Promise<void>;
  /** True once `partial` resolved. */
  isPartial(): boolean;
}

export interface RowstateFeedOptions {
  /** The writers running in this process. */
  readonly writers: readonly RowstateWriter[];
  /**
   * A writer given no partition this long after the feed is made (a member of its group left without
   * one) makes the feed partial. @default 120000
   */
  readonly assignedWithinMs?: number;
}

export const createRowstateFeed = (o: RowstateFeedOptions): RowstateFeed => {
  const owned = new Map<RowstateWriter, { partitions: Set<number>; total: number }>();
  let listener: ((events: readonly PasskEvent[], states?: RestoredStates) => void) | undefined;
  let markLoaded!: () => void;
  let markPartial!: () => void;
  let partial = false;
  const started = new Set<RowstateWriter>();
  const loaded = new Promise<void>((resolve) => (markLoaded = resolve));
  const partialP = new Promise<void>((resolve) => (markPartial = resolve));
  const goPartial = () => {
    if (partial) return;
    partial = true;
    clearTimeout(timer);
    markPartial();
  };
  const timer = setTimeout(() => {
    if (!o.writers.every((w) => started.has(w))) goPartial();
  }, o.assignedWithinMs ?? 120_000);
  timer.unref();
  return {
    push: (events, states) => {
      if (events.length > 0) listener?.(events, states);
    },
    restoring: (writer) => void started.add(writer),
    assigned: (writer, partitions, total) => {
      started.add(writer);
      const mine = { partitions: owned.get(writer)?.partitions ?? new Set<number>(), total };
      owned.set(writer, mine);
      for (const p of partitions) mine.partitions.add(p);
      const all = o.writers.every((w) => {
        const x = owned.get(w);
        return x !== undefined && x.total > 0 && x.partitions.size >= x.total;
      });
      if (mine.partitions.size < total) goPartial();
      else if (all && !partial) {
        clearTimeout(timer);
        markLoaded();
      }
    },
    // partitions taken away: another member writes them now (a Kafka rebalance tells only this, with no new
    // assignment, when a member joins)
    revoked: (writer, partitions) => {
      const mine = owned.get(writer);
      if (mine) for (const p of partitions) mine.partitions.delete(p);
      if (partitions.length > 0) goPartial();
    },
    follow: (l) => {
      listener = l;
      return () => {
        if (listener === l) listener = undefined;
      };
    },
    loaded,
    partial: partialP,
    isPartial: () => partial,
  };
};
