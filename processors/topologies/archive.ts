import { map, type Observable } from 'rxjs';
import { createInFlight } from '../operators/inFlight.ts';
import { writeRows } from '../operators/writeRows.ts';
import type { EventSink, TopologyOptions } from './eventPorts.ts';
import { runTopology } from './runner.ts';
import type { EventSource } from '../ports.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import type { Topic } from '../../schemas/topics.ts';
import { ARCHIVED } from './groups.ts';

export { ARCHIVED };

export const archiveTopology = (
  ports: { source: EventSource; sink: Pick<EventSink, 'writeEvents'> },
  o: TopologyOptions & { topic: Topic; keep?: ReadonlySet<PasskEvent['type']> },
): Observable<{ committed: boolean; records: number }> => {
  const keep = o.keep ?? ARCHIVED.get(o.topic) ?? new Set();
  const inFlight = createInFlight(o.maxInFlight ?? 10_000);
  return runTopology(
    {
      source: ports.source,
      groupId: o.groupId ?? `passk-archive-${o.topic}`,
      topic: o.topic,
      maxBatch: o.maxBatch,
      inFlight,
      stop: o.stop,
      onIdleProbe: o.onIdleProbe,
      isCommitRejected: o.isCommitRejected,
    },
    (batches) =>
      batches.pipe(
        map((b) => ({
          events: b.events.map((e) => e.event).filter((e) => keep.has(e.type)),
          positions: [{ topic: b.topic, partition: b.partition, nextOffset: b.lastOffset + 1 }],
          weight: Math.max(1, b.events.length),
        })),
        // runTopology commits each unit once written; `weight` releases what was pulled for the batch
        writeRows((u) => (u.events.length > 0 ? ports.sink.writeEvents(u.events) : Promise.resolve())),
      ),
  ).pipe(map((u) => ({ committed: u.committed, records: u.events.length })));
};
