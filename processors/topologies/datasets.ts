import { map, type Observable } from 'rxjs';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { createInFlight } from '../operators/inFlight.ts';
import { emitChanges } from '../operators/emitChanges.ts';
import { foldDatasetBatch, foldDatasets, type DatasetTables } from '../operators/foldDatasets.ts';
import { readToEnd } from '../operators/readToEnd.ts';
import { writeRows } from '../operators/writeRows.ts';
import type { DecisionProgress, EventPorts, TopologyOptions } from './eventPorts.ts';
import { runTopology } from './runner.ts';

/**
 * passk.datasets → dataset versions (a confirmed failure → a must-not-break row in a new version) → store → commit.
 * State is restored by re-reading the owned partitions up to the group's committed positions
 * (the topic is its own changelog: it is small, and its events are the state).
 *
 *   pullBatches ─▶ foldDatasets ─▶ emitChanges ─▶ writeRows ─▶ commitWhenDurable
 */
export const datasetTopology = (ports: EventPorts, o: TopologyOptions): Observable<DecisionProgress> => {
  const groupId = o.groupId ?? 'passk-datasets';
  const tables: DatasetTables = new Map();
  return runTopology(
    {
      source: ports.source,
      groupId,
      topic: TOPICS.datasets,
      maxBatch: o.maxBatch,
      inFlight: createInFlight(o.maxInFlight ?? 10_000),
      stop: o.stop,
      onIdleProbe: o.onIdleProbe,
      isCommitRejected: o.isCommitRejected,
      restore: async (partitions, { consumer, stop }) => {
        const owned = new Set(partitions);
        for (const p of owned) tables.set(p, new Map());
        const upTo = await consumer.committed(TOPICS.datasets);
        const replay = new Map<number, PasskEvent[]>();
        await readToEnd(ports.source, {
          topic: TOPICS.datasets,
          groupId: `${groupId}.restore.${o.instanceId}`,
          upTo,
          stop,
          onEvent: (e, p) => void (owned.has(p) && (replay.get(p) ?? replay.set(p, []).get(p)!).push(e)),
        });
        for (const [p, events] of replay) foldDatasetBatch(tables, p, events, o.producer);
      },
      drop: (revoked) => {
        for (const p of revoked) tables.delete(p);
      },
    },
    (batches) =>
      batches.pipe(
        foldDatasets(tables, o.producer),
        emitChanges(
          (events) => ports.publisher.publish(events),
          (u) => u.emitted,
        ),
        writeRows((u) => ports.sink.writeEvents(u.events)),
      ),
  ).pipe(map((u) => ({ committed: u.committed, emitted: u.emitted })));
};
