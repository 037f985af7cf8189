import type { DeadLetter, EventPublisher } from '../../processors/ports.ts';
import { validateEvent } from '../../schemas/codec.ts';
import { EventTooLarge } from '../../schemas/errors.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { topicOf, type Topic } from '../../schemas/topics.ts';
import { pushAll } from '../../processors/core/arrays.ts';

export interface MemoryPublisher extends EventPublisher {
  /** Every published event, in publish order. */
  readonly events: PasskEvent[];
  readonly raw: { topic: Topic; key: string; value: Uint8Array }[];
  /** Every dead letter appended, each identity once. */
  readonly deadLetters: DeadLetter[];
}

/**
 * An in-process publisher for tests and examples: validates like the real adapters, keeps
 * what it was given, and refuses events over `maxEventBytes` with `EventTooLarge`.
 */
export const createMemoryPublisher = (opts: { maxEventBytes?: number } = {}): MemoryPublisher => {
  const events: PasskEvent[] = [];
  const raw: MemoryPublisher['raw'] = [];
  const deadLetters: DeadLetter[] = [];
  const known = new Set<string>();
  const max = opts.maxEventBytes ?? 1_000_000;
  return {
    events,
    raw,
    deadLetters,
    async publish(batch) {
      const checked = batch.map((e) => {
        const event = validateEvent(e);
        const size = Buffer.byteLength(JSON.stringify(event));
        if (size > max) throw new EventTooLarge(size, max, topicOf(event));
        return event;
      });
      pushAll(events, checked);
    },
    async publishRaw(topic, records) {
      pushAll(
        raw,
        records.map((r) => ({ topic, ...r })),
      );
    },
    async publishDeadLetters(letters) {
      // each identity once, as the real logs (an ingest letter's id, else its source position)
      const idOf = (l: DeadLetter) => l.id ?? `${l.source.topic}/${l.source.partition}/${l.source.offset}`;
      const fresh = letters.filter((l) => !known.has(idOf(l)) && known.add(idOf(l)));
      pushAll(deadLetters, fresh);
      return fresh.length;
    },
    async close() {},
  };
};
