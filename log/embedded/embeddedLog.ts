import type { EncodeOptions, EventCodec } from '../../schemas/codec.ts';
import { fastJsonCodec } from '../fastValidate.ts';
import { join } from 'node:path';
import { BackendUnavailable, EventTooLarge } from '../../schemas/errors.ts';
import { fromDeadLetterRecord, toDeadLetterRecord } from '../deadLetters.ts';
import { ALL_TOPICS, TOPICS, keyOf, topicOf } from '../../schemas/topics.ts';
import type { EventConsumer, EventLog, EventPublisher } from '../../processors/ports.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { partitionOf } from '../partitioner.ts';
import { createEmbeddedConsumer, type EmbeddedConsumerTiming } from './consumer.ts';
import { openLogDatabase, type Synchronous } from './database.ts';
import { createGroupStore } from './groups.ts';
import { createLogStore, type AppendRecord } from './store.ts';
import { pushAll } from '../../processors/core/arrays.ts';

export interface EmbeddedEventLogOptions {
  /** The log lives in `<dataDir>/log.sqlite`. */
  readonly dataDir: string;
  /** Largest record value accepted at publish, in bytes. @default 1000000 */
  readonly maxEventBytes?: number;
  /** Partitions of a topic when this log creates it; an existing topic keeps its count. @default 4 */
  readonly partitions?: number;
  /** @default fastJsonCodec (UTF-8 JSON, validated once per record: log/fastValidate.ts) */
  readonly codec?: EventCodec;
  /** @default 'FULL' (see database.ts) */
  readonly synchronous?: Synchronous;
  /** How long a writer waits for another process's transaction. @default 10000 */
  readonly busyTimeoutMs?: number;
  readonly consumer?: Partial<EmbeddedConsumerTiming>;
}

/** SQLite's typed word for a full disk (or a write the OS refused), as the backend being unavailable: nothing was appended. */
const diskFailure = (e: unknown): string | undefined => {
  const code = (e as { code?: unknown } | undefined)?.code;
  if (code === 'SQLITE_FULL') return 'the disk is full';
  if (typeof code === 'string' && code.startsWith('SQLITE_IOERR')) return `the disk refused a write (${code})`;
  return undefined;
};

/**
 * The embedded event log: one SQLite database in WAL mode, shared by every process that opens the
 * same data directory. It is a publisher and an event source, so a whole pipeline runs in one process.
 */
export const createEmbeddedEventLog = (opts: EmbeddedEventLogOptions): EventLog => {
  const maxEventBytes = opts.maxEventBytes ?? 1_000_000;
  const codec = opts.codec ?? fastJsonCodec;
  const timing: EmbeddedConsumerTiming = { pollMs: 50, sessionMs: 10_000, heartbeatMs: 1_000, ...opts.consumer };
  const db = openLogDatabase({
    dataDir: opts.dataDir,
    synchronous: opts.synchronous ?? 'FULL',
    busyTimeoutMs: opts.busyTimeoutMs ?? 10_000,
  });
  const store = createLogStore(db, { defaultPartitions: opts.partitions ?? 4, now: Date.now });
  const groups = createGroupStore(db, Date.now);
  const file = join(opts.dataDir, 'log.sqlite');
  /** A write that failed for want of disk: BackendUnavailable naming the file (exit 3, ingest's 503), never a crash. */
  const withDisk = <T>(write: () => T): T => {
    try {
      return write();
    } catch (e) {
      const why = diskFailure(e);
      if (why) throw new BackendUnavailable(`${file}: ${why}; nothing was appended (free space and retry)`, e);
      throw e;
    }
  };
  for (const topic of ALL_TOPICS) store.ensureTopic(topic);
  const consumers = new Set<EventConsumer>();
  let closed = false;

  const checkOpen = () => {
    if (closed) throw new Error('the embedded event log is closed');
  };
  const checkSize = (records: readonly AppendRecord[]) => {
    for (const r of records)
      if (r.value.byteLength > maxEventBytes) throw new EventTooLarge(r.value.byteLength, maxEventBytes, r.topic);
  };
  /** One `BEGIN IMMEDIATE` transaction around `write` (the appends and commits in it nest as savepoints). */
  const atomically = db.transaction((write: () => void) => write());
  /** Appends `records` and runs `alsoInTransaction` (a consumer's commit) in the same transaction. */
  const append = (records: AppendRecord[], alsoInTransaction?: () => void) => {
    checkOpen();
    checkSize(records);
    if (alsoInTransaction)
      withDisk(() =>
        atomically.immediate(() => {
          if (records.length > 0) store.append(records, partitionOf);
          alsoInTransaction();
        }),
      );
    else if (records.length > 0) withDisk(() => store.append(records, partitionOf));
  };

  // calls append in call order, whatever their encoding takes (EventPublisher: overlapping calls)
  let placed: Promise<void> = Promise.resolve();
  /** Encodes `events` and appends them after every earlier call's (with `alsoInTransaction` in their transaction). */
  const publishInOrder = async (
    events: readonly PasskEvent[],
    opts: EncodeOptions | undefined,
    alsoInTransaction?: () => void,
  ): Promise<void> => {
    const before = placed;
    let place = () => {};
    placed = new Promise<void>((resolve) => (place = resolve));
    try {
      const records: AppendRecord[] = [];
      for (const e of events) records.push({ topic: topicOf(e), key: keyOf(e), value: await codec.encode(e, opts) });
      await before;
      append(records, alsoInTransaction);
    } finally {
      place();
    }
  };
  const publisher: EventPublisher = {
    // One transaction per call: a publish is all-or-nothing here (on Kafka it is per partition).
    publish: (events, opts?: EncodeOptions) => publishInOrder(events, opts),
    publishRaw: async (topic, records) => append(records.map((r) => ({ topic, key: r.key, value: r.value }))),
    publishDeadLetters: async (letters) => {
      checkOpen();
      return withDisk(() => store.appendDeadLetters(letters.map(toDeadLetterRecord), partitionOf));
    },
    close: async () => {},
  };

  return {
    publisher,
    codec,
    consumer: async (options) => {
      checkOpen();
      const consumer = createEmbeddedConsumer({
        store,
        groups,
        codec,
        options,
        timing,
        publishWith: { publisher, publish: publishInOrder },
        onClose: () => consumers.delete(consumer),
      });
      consumers.add(consumer);
      return consumer;
    },
    deadLetters: async () => {
      checkOpen();
      const partitions = store.ensureTopic(TOPICS.dlq);
      const letters: ReturnType<typeof fromDeadLetterRecord>[] = [];
      for (let p = 0; p < partitions; p++)
        for (let from = 0; ;) {
          const page = store.read(TOPICS.dlq, p, from, 1000);
          pushAll(letters, page.map(fromDeadLetterRecord));
          if (page.length < 1000) break;
          from = page.at(-1)!.offset + 1;
        }
      return letters;
    },
    committed: async (groupId, topic) => {
      checkOpen();
      return groups.committed(groupId, topic);
    },
    close: async () => {
      if (closed) return;
      for (const c of [...consumers]) await c.close();
      closed = true;
      db.close();
    },
  };
};
