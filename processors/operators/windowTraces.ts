import { map, type OperatorFunction } from 'rxjs';
import type { TraceSampled } from '../../schemas/events/traceSampled.ts';
import type { TraceWindowsUpdated } from '../../schemas/events/traceWindowsUpdated.ts';
import {
  emptyWindows,
  foldTrace,
  pruneWindows,
  toWindowsSnapshot,
  type WindowOptions,
  type WindowsState,
} from '../folds/windows.ts';
import type { EventBatch } from '../ports.ts';
import { weightOf, type Position } from './foldUnits.ts';
import { tpKey } from '../../schemas/topics.ts';

/** Window shares of the owned partitions of passk.traces. */
export type WindowTables = Map<number, WindowsState>;

export interface FoldedTraces {
  readonly positions: readonly Position[];
  readonly weight: number;
  /** The snapshot of each partition whose windows changed: partition → latest snapshot. */
  readonly snapshots: ReadonlyMap<number, TraceWindowsUpdated>;
  readonly traces: readonly TraceSampled[];
}

/**
 * Folds each batch of traces into its partition's window shares (event time; lateness; flips), and
 * snapshots the partition when something changed. `partitions()` is the number of partitions of passk.traces.
 */
export const windowTraces = (
  tables: WindowTables,
  o: WindowOptions & { producer: string; partitions: () => number },
): OperatorFunction<EventBatch, FoldedTraces> =>
  map((batch) => {
    let s = tables.get(batch.partition);
    if (!s) tables.set(batch.partition, (s = emptyWindows(batch.partition)));
    const traces: TraceSampled[] = [];
    const changed = new Set<string>();
    for (const { event, offset } of batch.events) {
      if (event.type !== 'TraceSampled') continue;
      traces.push(event);
      for (const key of foldTrace(s, event, offset, o)) changed.add(key);
    }
    s.through = Math.max(s.through, batch.lastOffset + 1);
    pruneWindows(s, o);
    const snapshots = new Map(
      changed.size > 0 ? [[batch.partition, toWindowsSnapshot(s, o.partitions(), o.producer, o)]] : [],
    );
    return {
      positions: [{ topic: batch.topic, partition: batch.partition, nextOffset: batch.lastOffset + 1 }],
      weight: weightOf(batch),
      snapshots,
      traces,
    };
  });

/** Several folded batches as one durable unit: the latest snapshot per partition, the furthest position per partition. */
export const mergeFoldedTraces = (group: readonly FoldedTraces[]): FoldedTraces => {
  if (group.length === 1) return group[0]!;
  const snapshots = new Map<number, TraceWindowsUpdated>();
  const positions = new Map<string, Position>();
  for (const f of group) {
    for (const [k, u] of f.snapshots) snapshots.set(k, u);
    for (const p of f.positions) {
      const key = tpKey(p);
      if ((positions.get(key)?.nextOffset ?? -1) < p.nextOffset) positions.set(key, p);
    }
  }
  return {
    positions: [...positions.values()],
    weight: group.reduce((a, f) => a + f.weight, 0),
    snapshots,
    traces: group.flatMap((f) => f.traces),
  };
};
