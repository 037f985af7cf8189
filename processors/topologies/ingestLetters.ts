import { map, type Observable } from 'rxjs';
import { createInFlight } from '../operators/inFlight.ts';
import { writeRows } from '../operators/writeRows.ts';
import type { TopologyOptions } from './eventPorts.ts';
import { runTopology } from './runner.ts';
import type { DeadLetter, EventSource } from '../ports.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { INGEST_LETTERS_GROUP } from './groups.ts';

export { INGEST_LETTERS_GROUP };

/** Whether a letter is one of `passk ingest`'s (a refusal or eviction, with an id and no log position). */
export const isIngestLetter = (l: DeadLetter): boolean => l.id !== undefined;

/**
 * Follows the dead-letter topic and stores the letters `passk ingest` appended there (its refusals and evictions:
 * they have no log position, so no processor reads them otherwise), committing once they are durable. The
 * processors' own letters (records not decoded, conflicts) are stored by the consumer that made them and skipped
 * here. The store keys each letter by its id, so a replay writes nothing twice.
 */
export const ingestLetterTopology = (
  ports: { source: EventSource; sink: { writeDeadLetters(letters: readonly DeadLetter[]): Promise<void> } },
  o: TopologyOptions,
): Observable<{ committed: boolean; letters: number }> => {
  const inFlight = createInFlight(o.maxInFlight ?? 10_000);
  return runTopology(
    {
      source: ports.source,
      groupId: o.groupId ?? INGEST_LETTERS_GROUP,
      topic: TOPICS.dlq,
      maxBatch: o.maxBatch,
      inFlight,
      stop: o.stop,
      onIdleProbe: o.onIdleProbe,
      isCommitRejected: o.isCommitRejected,
    },
    (batches) =>
      batches.pipe(
        map((b) => ({
          letters: (b.letters ?? []).filter(isIngestLetter),
          positions: [{ topic: b.topic, partition: b.partition, nextOffset: b.lastOffset + 1 }],
          weight: 1, // what pullBatches took for a batch without events
        })),
        writeRows((u) => (u.letters.length > 0 ? ports.sink.writeDeadLetters(u.letters) : Promise.resolve())),
      ),
  ).pipe(map((u) => ({ committed: u.committed, letters: u.letters.length })));
};
