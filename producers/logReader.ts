import { randomBytes } from 'node:crypto';
import { READ_TO_END_WAIT_MS, type EventSource, type LogEvent } from '../processors/ports.ts';
import { BackendUnavailable } from '../schemas/errors.ts';
import type { Topic } from '../schemas/topics.ts';

export interface ReadLogOptions {
  readonly topics: readonly Topic[];
  /** Give up when no batch arrives for this long while records are still due, ms. @default 30000 */
  readonly idleMs?: number;
}

/**
 * Reads every event the log holds *now* on the given topics, then stops: a throwaway consumer group
 * (nothing committed) reads from the beginning up to the high watermarks taken at the start.
 * Producers use it to skip what is already recorded (imports, resumed runs).
 */
export const readLog = async (
  source: EventSource,
  opts: ReadLogOptions,
  visit: (e: LogEvent) => void,
): Promise<number> => {
  const consumer = await source.consumer({
    groupId: `passk-reader-${process.pid}-${randomBytes(6).toString('hex')}`,
    topics: opts.topics,
    fromBeginning: true,
    transient: true,
    idleWaitMs: READ_TO_END_WAIT_MS, // closed at the end it reads to: not held by an idle fetch
  });
  try {
    // Nothing is committed in a fresh group, so each partition's lag is its high watermark.
    const due = new Map<string, number>();
    for (const { topic, partition, lag } of await consumer.lag()) if (lag > 0) due.set(`${topic}/${partition}`, lag);
    let seen = 0;
    if (due.size === 0) return 0;
    const iterator = consumer.batches()[Symbol.asyncIterator]();
    const idleMs = opts.idleMs ?? 30_000;
    while (due.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new BackendUnavailable(
                `the event log sent nothing for ${idleMs} ms while reading ${[...due.keys()].join(', ')}`,
              ),
            ),
          idleMs,
        );
      });
      const next = await Promise.race([iterator.next(), idle]).finally(() => clearTimeout(timer));
      if (next.done) break;
      const batch = next.value;
      for (const e of batch.events) {
        seen++;
        visit(e);
      }
      const key = `${batch.topic}/${batch.partition}`;
      const target = due.get(key);
      if (target !== undefined && batch.lastOffset + 1 >= target) due.delete(key);
    }
    return seen;
  } finally {
    await consumer.close();
  }
};

/** The ids of every event now on the topics. */
export const existingEventIds = async (source: EventSource, topics: readonly Topic[]): Promise<Set<string>> => {
  const ids = new Set<string>();
  await readLog(source, { topics }, (e) => ids.add(e.event.event_id));
  return ids;
};
