import { EMPTY, finalize, tap, type Observable } from 'rxjs';
import type { Topic } from '../../schemas/topics.ts';
import type { EventBatch, EventConsumer, EventSource } from '../ports.ts';
import type { InFlight } from './inFlight.ts';
import { cutByStop, onStop } from './onStop.ts';
import { pullBatches } from './pullBatches.ts';

export interface TailedTopic {
  /** Every batch of the topic from its start, then new ones as they come (a global table's input). */
  readonly batches$: Observable<EventBatch>;
  /** Resolves once the batches reached the end the topic had when the tail began. */
  readonly loaded: Promise<void>;
  /** True when the tail has delivered everything the topic holds now. */
  caughtUp(): Promise<boolean>;
}

/**
 * Follows a whole topic (all partitions) with a group of its own that never commits: Kafka Streams'
 * global table. Used for the row states and datasets a gate must see whichever partitions it owns.
 */
export const tailTopic = async (
  source: EventSource,
  o: {
    topic: Topic;
    groupId: string;
    inFlight: InFlight;
    stop: Promise<unknown>;
    maxBatch?: number;
    /** Where partitions start (the offsets snapshots cover); the others start at 0. */
    from?: ReadonlyMap<number, number>;
  },
): Promise<TailedTopic> => {
  // the lag counts from a partition's start: its end is the start plus the lag
  const position = new Map<number, number>(o.from ?? []);
  const ends = new Map<number, number>();
  // a stop while the tail starts closes its consumer, so a start waiting out a broker away ends at once (cutByStop)
  let opened: EventConsumer | undefined;
  let stopped = false;
  const off = onStop(o.stop, () => {
    stopped = true;
    void opened?.close();
  });
  try {
    opened = await source.consumer({
      groupId: o.groupId,
      topics: [o.topic],
      fromBeginning: true,
      maxBatch: o.maxBatch ?? 5_000,
      transient: true,
      ...(o.from && o.from.size > 0 ? { startAt: o.from } : {}),
    });
    if (!stopped)
      for (const l of await opened.lag())
        if (l.topic === o.topic && l.lag > 0) ends.set(l.partition, (o.from?.get(l.partition) ?? 0) + l.lag);
  } catch (e) {
    if (!cutByStop(stopped, e)) throw e;
  } finally {
    off();
  }
  if (stopped || !opened) {
    await opened?.close();
    // stopped before it started: nothing delivered, never loaded
    return { batches$: EMPTY, loaded: new Promise<void>(() => {}), caughtUp: async () => false };
  }
  const consumer = opened;
  let markLoaded!: () => void;
  const loaded = new Promise<void>((resolve) => (markLoaded = resolve));
  if (ends.size === 0) markLoaded();
  const batches$ = pullBatches(consumer.batches(), o.inFlight, o.stop).pipe(
    tap((b) => {
      position.set(b.partition, b.lastOffset + 1);
      if ((ends.get(b.partition) ?? Infinity) <= b.lastOffset + 1) ends.delete(b.partition);
      if (ends.size === 0) markLoaded();
    }),
    finalize(() => void consumer.close()),
  );
  return {
    batches$,
    loaded,
    // no commits: the group's lag is the high watermark; compare it with what was delivered
    caughtUp: async () =>
      (await consumer.lag()).every(
        (l) => l.topic !== o.topic || (position.get(l.partition) ?? 0) >= (o.from?.get(l.partition) ?? 0) + l.lag,
      ),
  };
};
