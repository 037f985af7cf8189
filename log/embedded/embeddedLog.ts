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
import { createLogStore, KEY_INDEXED_TOPICS, type AppendRecord } from './store.ts';
import { startAppendThread } from './appendThread.ts';
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
  /**
   * How long a writer waits for another process's transaction. @default 10000. The open waits on past it for another
   * open's one-time build of the indexes by key, however long that takes (database.ts, `liveIndexBuild`).
   */
  readonly busyTimeoutMs?: number;
  readonly consumer?: Partial<EmbeddedConsumerTiming>;
  /**
   * Appends from a writer thread (appendThread.ts): the event loop is not held while SQLite commits and fsyncs;
   * each publish still resolves only once its transaction committed. For a process that publishes while it serves
   * requests (`passk ingest` could; it does not yet: docs/performance.md, OTLP receiver). @default false
   */
  readonly appendInThread?: boolean;
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
  const thread = opts.appendInThread
    ? startAppendThread({
        dataDir: opts.dataDir,
        synchronous: opts.synchronous ?? 'FULL',
        busyTimeoutMs: opts.busyTimeoutMs ?? 10_000,
        partitions: opts.partitions ?? 4,
      })
    : undefined;
  /** A write on the writer thread, its disk failure said as `withDisk` says it. */
  const inThread = async (write: () => Promise<number>): Promise<number> => {
    try {
      return await write();
    } catch (e) {
      const why = diskFailure(e);
      if (why) throw new BackendUnavailable(`${file}: ${why}; nothing was appended (free space and retry)`, e);
      throw e;
    }
  };
  /** `append`, on the writer thread when there is one: checked here, posted now (in call order), durable when it resolves. */
  const appendNow = (records: AppendRecord[]): Promise<unknown> | undefined => {
    if (!thread) return void append(records);
    checkOpen();
    checkSize(records);
    return records.length > 0 ? inThread(() => thread.append(records)) : undefined;
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
    let appended: Promise<unknown> | undefined;
    try {
      const records: AppendRecord[] = [];
      for (const e of events) records.push({ topic: topicOf(e), key: keyOf(e), value: await codec.encode(e, opts) });
      await before;
      ({ appended } = await placeAppend(records, alsoInTransaction));
    } finally {
      place();
    }
    await appended;
  };
  /** The writer thread's last append, settled or not: a main-thread append waits for it (call order). */
  let inThreadLast: Promise<unknown> = Promise.resolve();
  /**
   * Appends in call order: on the writer thread when there is one (posted now, durable when the promise resolves),
   * else here; an append with a consumer's commit in its transaction (that connection's) runs here, after the
   * thread's earlier appends.
   */
  const placeAppend = async (
    records: AppendRecord[],
    alsoInTransaction?: () => void,
  ): Promise<{ appended?: Promise<unknown> }> => {
    if (thread && !alsoInTransaction) {
      const appended = appendNow(records);
      if (appended) inThreadLast = appended.catch(() => undefined);
      return appended ? { appended } : {};
    }
    if (thread) await inThreadLast;
    append(records, alsoInTransaction);
    return {};
  };
  /** Raw records, after every earlier call's. */
  const appendInOrder = async (records: AppendRecord[]): Promise<void> => {
    const before = placed;
    let place = () => {};
    placed = new Promise<void>((resolve) => (place = resolve));
    let appended: Promise<unknown> | undefined;
    try {
      await before;
      ({ appended } = await placeAppend(records));
    } finally {
      place();
    }
    await appended;
  };
  const publisher: EventPublisher = {
    // One transaction per call: a publish is all-or-nothing here (on Kafka it is per partition).
    publish: (events, opts?: EncodeOptions) => publishInOrder(events, opts),
    publishRaw: async (topic, records) => {
      const all = records.map((r) => ({ topic, key: r.key, value: r.value }));
      // on the writer thread in call order with the publishes; here at once, as always
      if (thread) await appendInOrder(all);
      else append(all);
    },
    publishDeadLetters: async (letters) => {
      checkOpen();
      if (thread) return inThread(() => thread.appendDeadLetters(letters.map(toDeadLetterRecord)));
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
    rowstateOutline: async (o) => {
      checkOpen();
      return store.rowstateOutline(o);
    },
    readsByKey: KEY_INDEXED_TOPICS,
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
      await thread?.close();
      db.close();
    },
  };
};
