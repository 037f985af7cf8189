import type { EventCodec } from '../schemas/codec.ts';
import { InvalidEvent } from '../schemas/errors.ts';
import type { DeadLetter, LogEvent, RawRecord } from '../processors/ports.ts';
import { KEY_SEP } from '../schemas/topics.ts';

/**
 * Dead letters keep the original key and bytes as the record; where they came from and why travel
 * in headers (Kafka Connect's DLQ convention), the same on both backends.
 */
export const DLQ_HEADERS = {
  topic: 'passk.dlq.topic',
  partition: 'passk.dlq.partition',
  offset: 'passk.dlq.offset',
  reason: 'passk.dlq.reason',
  /** A letter without a log position (`DeadLetter.id`: ingest's refusals). */
  id: 'passk.dlq.id',
} as const;

export interface DeadLetterRecord {
  readonly key: string;
  readonly value: Uint8Array;
  readonly headers: Record<string, string>;
}

export const toDeadLetterRecord = (d: DeadLetter): DeadLetterRecord => ({
  key: d.source.key,
  value: d.value,
  headers: {
    [DLQ_HEADERS.topic]: d.source.topic,
    [DLQ_HEADERS.partition]: String(d.source.partition),
    [DLQ_HEADERS.offset]: String(d.source.offset),
    [DLQ_HEADERS.reason]: d.reason,
    ...(d.id === undefined ? {} : { [DLQ_HEADERS.id]: d.id }),
  },
});

export const fromDeadLetterRecord = (r: {
  key: string;
  value: Uint8Array;
  headers: Record<string, string | undefined>;
}): DeadLetter => ({
  source: {
    topic: r.headers[DLQ_HEADERS.topic] ?? '',
    partition: Number(r.headers[DLQ_HEADERS.partition] ?? -1),
    offset: Number(r.headers[DLQ_HEADERS.offset] ?? -1),
    key: r.key,
  },
  value: r.value,
  reason: r.headers[DLQ_HEADERS.reason] ?? '(no reason recorded)',
  ...(r.headers[DLQ_HEADERS.id] === undefined ? {} : { id: r.headers[DLQ_HEADERS.id] }),
});

/** One dead letter per source position: its identity. */
export const sourceId = (s: { topic: string; partition: number; offset: number }): string =>
  [s.topic, s.partition, s.offset].join(KEY_SEP);

/** A letter's identity: its `id` (a letter without a log position), else its source position. */
export const letterId = (d: DeadLetter): string => (d.id === undefined ? sourceId(d.source) : `id${KEY_SEP}${d.id}`);

/** The first letter of each identity (`letterId`), in order. */
export const uniqueBySource = (letters: readonly DeadLetter[]): DeadLetter[] => {
  const seen = new Set<string>();
  return letters.filter((d) => {
    const id = letterId(d);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
};

/**
 * Appends each identity's dead letter once (`letterId`: a source position, or an ingest letter's id), however many consumer groups read the record and
 * however often it is read again (a restart before the commit, a restore that rereads a changelog).
 * The positions already in the DLQ are read from it once, on the first bad record, then kept; calls
 * run one at a time. Returns the letters it appended.
 */
export const createDeadLetterWriter = (deps: {
  existing: () => Promise<readonly DeadLetter[]>;
  append: (letters: readonly DeadLetter[]) => Promise<void>;
}): ((letters: readonly DeadLetter[]) => Promise<DeadLetter[]>) => {
  let known: Promise<Set<string>> | undefined;
  let chain: Promise<unknown> = Promise.resolve();
  return (letters) => {
    const run = async () => {
      known ??= deps.existing().then((l) => new Set(l.map(letterId)));
      const seen = await known.catch((e: unknown) => {
        known = undefined; // read again next time
        throw e;
      });
      const fresh = uniqueBySource(letters).filter((d) => !seen.has(letterId(d)));
      if (fresh.length > 0) await deps.append(fresh);
      for (const d of fresh) seen.add(letterId(d));
      return fresh;
    };
    const next = chain.then(run, run);
    chain = next.catch(() => {});
    return next;
  };
};

/**
 * Decodes raw records in order. Records that are not valid events become dead letters; any other
 * error (e.g. the registry is down) propagates, so the consumer stops uncommitted and can retry.
 * `keys` (`ConsumerOptions.keys`): a record whose key it refuses is skipped, neither decoded nor dead-lettered.
 */
export const decodeRecords = async (
  codec: EventCodec,
  records: readonly RawRecord[],
  keys?: (key: string) => boolean,
): Promise<{ events: LogEvent[]; dead: DeadLetter[] }> => {
  const events: LogEvent[] = [];
  const dead: DeadLetter[] = [];
  for (const r of records) {
    if (keys !== undefined && !keys(r.key)) continue;
    try {
      const event = codec.decodeNow?.(r.value) ?? (await codec.decode(r.value));
      events.push({ topic: r.topic, partition: r.partition, offset: r.offset, key: r.key, event });
    } catch (e) {
      if (!(e instanceof InvalidEvent)) throw e;
      dead.push({
        source: { topic: r.topic, partition: r.partition, offset: r.offset, key: r.key },
        value: r.value,
        reason: e.reason,
      });
    }
  }
  return { events, dead };
};
