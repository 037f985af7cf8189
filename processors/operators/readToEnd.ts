import type { PasskEvent } from '../../schemas/events/index.ts';
import type { Topic } from '../../schemas/topics.ts';
import { READ_TO_END_WAIT_MS, type EventConsumer, type EventSource } from '../ports.ts';
import { cutByStop, onStop } from './onStop.ts';

/**
 * Reads a topic from its start to the end it had when the read began (a compacted changelog, or a
 * small source topic used as its own changelog), with a group of its own that never commits.
 * `upTo` stops earlier, per partition (exclusive): e.g. at a consumer group's committed positions.
 */
export const readToEnd = async (
  source: EventSource,
  opts: {
    topic: Topic;
    groupId: string;
    upTo?: ReadonlyMap<number, number>;
    /** Where partitions start (a snapshot's offset); the others start at 0. */
    from?: ReadonlyMap<number, number>;
    onEvent: (event: PasskEvent, partition: number, offset: number) => void;
    /** Resolves to give up early (shutdown): the read ends with what it has. */
    stop?: Promise<unknown>;
    /** Only the records whose key this accepts are decoded and handed to `onEvent` (`ConsumerOptions.keys`). */
    keys?: (key: string) => boolean;
    /** With `keys`: what every key it accepts starts with (`ConsumerOptions.keyPrefixes`: read by the log's index). */
    keyPrefixes?: readonly string[];
    /**
     * Handed, before the first record, the end the read goes to of every partition (its high watermark then, exclusive):
     * where a tail that follows the read starts (the gates' restore of passk.rowstate).
     */
    onEnds?: (ends: ReadonlyMap<number, number>) => void;
    /** The topic holds records passk wrote itself (`ConsumerOptions.trusted`: its changelog). */
    trusted?: boolean;
  },
): Promise<number> => {
  let consumer: EventConsumer | undefined;
  let stopped = false;
  // taken off when the read ends: a restore per rebalance must not pile handlers on a long-lived stop
  const off = opts.stop
    ? onStop(opts.stop, () => {
        stopped = true;
        void consumer?.close();
      })
    : () => {};
  let read = 0;
  try {
    consumer = await source.consumer({
      groupId: opts.groupId,
      topics: [opts.topic],
      fromBeginning: true,
      maxBatch: 5_000,
      transient: true,
      // closed once at its end: an idle fetch then in flight must not hold the close (and the restore) for a second
      idleWaitMs: READ_TO_END_WAIT_MS,
      ...(opts.keys && { keys: opts.keys }),
      ...(opts.keys && opts.keyPrefixes && { keyPrefixes: opts.keyPrefixes }),
      ...(opts.trusted && { trusted: true }),
      ...(opts.from && opts.from.size > 0 ? { startAt: opts.from } : {}),
    });
    if (stopped) return read;
    const ends = new Map<number, number>();
    const highs = new Map<number, number>();
    for (const { topic, partition, lag } of await consumer.lag()) {
      if (topic !== opts.topic) continue;
      // the lag counts from the partition's start: the end is the start plus it
      const high = (opts.from?.get(partition) ?? 0) + lag;
      const end = Math.min(high, opts.upTo ? (opts.upTo.get(partition) ?? 0) : high);
      highs.set(partition, end);
      if (end > (opts.from?.get(partition) ?? 0)) ends.set(partition, end);
    }
    opts.onEnds?.(highs);
    if (ends.size === 0 || stopped) return read;
    for await (const batch of consumer.batches()) {
      const end = ends.get(batch.partition);
      if (end === undefined) continue;
      for (const e of batch.events) {
        if (e.offset >= end) break;
        opts.onEvent(e.event, batch.partition, e.offset);
        read++;
      }
      if (batch.lastOffset + 1 >= end) ends.delete(batch.partition);
      if (ends.size === 0) break;
    }
    return read;
  } catch (e) {
    if (cutByStop(stopped, e)) return read;
    throw e;
  } finally {
    off();
    await consumer?.close();
  }
};
