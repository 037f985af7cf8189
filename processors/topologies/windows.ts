import { map, tap, type Observable } from 'rxjs';
import type { GateBookSnapshot } from '../../schemas/events/gateBookSnapshot.ts';
import type { TraceWindowsUpdated } from '../../schemas/events/traceWindowsUpdated.ts';
import { emptyShelf, shelve } from '../folds/gateSnapshot.ts';
import { isSnapshotKey, TOPICS } from '../../schemas/topics.ts';
import { DEFAULT_WINDOWS, restoreWindows, type WindowSpec } from '../folds/windows.ts';
import { batchRows } from '../operators/batchRows.ts';
import { emitChanges } from '../operators/emitChanges.ts';
import { createInFlight } from '../operators/inFlight.ts';
import { readToEnd } from '../operators/readToEnd.ts';
import type { RowstateFeed } from '../operators/rowstateFeed.ts';
import type { EventSource } from '../ports.ts';
import { mergeFoldedTraces, windowTraces, type WindowTables } from '../operators/windowTraces.ts';
import { writeRows } from '../operators/writeRows.ts';
import type { DecisionProgress, EventPorts, TopologyOptions } from './eventPorts.ts';
import { runTopology } from './runner.ts';

export interface WindowTopologyOptions extends TopologyOptions {
  readonly windows?: readonly WindowSpec[];
  readonly allowedLatenessMs?: number;
  readonly maxRows?: number;
  readonly maxWaitMs?: number;
  /** Hands the gates of this process the snapshots a restore read, and each unit's once durable. */
  readonly rowstate?: RowstateFeed;
}

/**
 * The snapshots on passk.rowstate, read to its end: every windows snapshot, and the latest complete gate book snapshot of
 * each partition of passk.decisions (they ride along to the gates of this process, which read no passk.rowstate
 * then). The row states there (a million at 1M rows) are the trial topology's: skipped by key, not even decoded.
 */
export const readSnapshots = async (
  source: EventSource,
  groupId: string,
  stop?: Promise<unknown>,
): Promise<{ snapshots: TraceWindowsUpdated[]; books: GateBookSnapshot[] }> => {
  const snapshots: TraceWindowsUpdated[] = [];
  const shelf = emptyShelf();
  await readToEnd(source, {
    topic: TOPICS.rowstate,
    groupId,
    stop,
    keys: isSnapshotKey,
    onEvent: (e) => {
      if (e.type === 'TraceWindowsUpdated') snapshots.push(e);
      else if (e.type === 'GateBookSnapshot') shelve(shelf, e);
    },
  });
  // each partition's latest complete snapshot, as the records it was read from (a chunked one's chunks)
  return { snapshots, books: [...shelf.records.values()].flat() };
};

/**
 * passk.traces → per-partition shares of every production window (event time, allowed lateness,
 * Horvitz–Thompson sums, flips) → passk.rowstate (compacted: one snapshot record per partition)
 * + raw traces to the store → commit. The gates sum the shares, write the windows and raise alerts.
 * Restore: a partition's latest snapshot, skipping the traces it already reflects.
 *
 *   pullBatches ─▶ windowTraces ─▶ batchRows ─▶ coalesce ─▶ emitChanges ─▶ writeRows ─▶ commitWhenDurable
 */
export const windowTopology = (ports: EventPorts, o: WindowTopologyOptions): Observable<DecisionProgress> => {
  const groupId = o.groupId ?? 'passk-windows';
  const w = {
    specs: o.windows ?? DEFAULT_WINDOWS,
    allowedLatenessMs: o.allowedLatenessMs ?? 300_000,
    producer: o.producer,
  };
  const tables: WindowTables = new Map();
  const maxRows = o.maxRows ?? 5_000;
  let partitions = 1;
  return runTopology(
    {
      source: ports.source,
      groupId,
      topic: TOPICS.traces,
      maxBatch: o.maxBatch,
      inFlight: createInFlight(o.maxInFlight ?? 4 * maxRows),
      stop: o.stop,
      onIdleProbe: o.onIdleProbe,
      isCommitRejected: o.isCommitRejected,
      restore: async (assigned, { consumer, stop, stopping }) => {
        o.rowstate?.restoring('windows');
        const owned = new Set(assigned);
        partitions = (await consumer.lag()).filter((l) => l.topic === TOPICS.traces).length;
        const { snapshots, books } = await readSnapshots(ports.source, `${groupId}.restore.${o.instanceId}`, stop);
        if (o.rowstate && !stopping()) {
          o.rowstate.push([...snapshots, ...books]);
          o.rowstate.assigned('windows', assigned, partitions);
        }
        const mine = snapshots.filter((e) => owned.has(e.source_partition));
        for (const p of owned) tables.set(p, restoreWindows(p, mine, w));
      },
      drop: (revoked) => {
        for (const p of revoked) tables.delete(p);
        o.rowstate?.revoked('windows', revoked);
      },
    },
    (batches) =>
      batches.pipe(
        windowTraces(tables, { ...w, partitions: () => partitions }),
        batchRows({ maxRows, maxWaitMs: o.maxWaitMs ?? 500, sizeOf: (f) => f.weight }),
        map(mergeFoldedTraces),
        emitChanges(
          (events) => ports.publisher.publish(events),
          (u) => [...u.snapshots.values()],
        ),
        writeRows((u) => ports.sink.writeEvents(u.traces)),
        tap((u) => o.rowstate?.push([...u.snapshots.values()])),
      ),
  ).pipe(map((u) => ({ committed: u.committed, emitted: [...u.snapshots.values()] })));
};
