import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { EncodeOptions, EventCodec } from '../../schemas/codec.ts';
import { TOPICS, tpKey } from '../../schemas/topics.ts';
import type {
  ConsumerOptions,
  DeadLetter,
  EventBatch,
  EventConsumer,
  EventPublisher,
  LogEvent,
} from '../../processors/ports.ts';
import { InvalidEvent } from '../../schemas/errors.ts';
import { decodeRecords, fromDeadLetterRecord, toDeadLetterRecord } from '../deadLetters.ts';
import { CommitRejected, ConsumerMisuse } from '../errors.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { partitionOf } from '../partitioner.ts';
import type { GroupStore, Member, TopicPartition } from './groups.ts';
import type { LogStore, TextRecord } from './store.ts';

export interface EmbeddedConsumerTiming {
  /** Sleep between polls when no partition has new records. @default 50 */
  readonly pollMs: number;
  /** A member whose heartbeat is older than this is dead and loses its partitions. @default 10000 */
  readonly sessionMs: number;
  /** Heartbeat period, also how often the assignment is re-checked. @default 1000 */
  readonly heartbeatMs: number;
}

/** A batch holds at most this many bytes of values (and at least one record), so memory stays bounded. */
const MAX_BATCH_BYTES = 8 * 1024 * 1024;

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** A polling consumer in a group; reads only when asked (the async iterator is the backpressure). */
export const createEmbeddedConsumer = (deps: {
  store: LogStore;
  groups: GroupStore;
  codec: EventCodec;
  options: ConsumerOptions;
  timing: EmbeddedConsumerTiming;
  /** The log's publish, with `alsoInTransaction` run in the transaction of the append (`publishAndCommit`). */
  publishWith?: {
    /** The log's publisher: what `publishAndCommit` appends, it appends as this one would. */
    publisher: EventPublisher;
    publish: (
      events: readonly PasskEvent[],
      opts: EncodeOptions | undefined,
      alsoInTransaction: () => void,
    ) => Promise<void>;
  };
  onClose: () => void;
}): EventConsumer => {
  const { store, groups, codec, options, timing } = deps;
  if (options.topics.includes(TOPICS.dlq) && options.topics.length > 1)
    throw new ConsumerMisuse(`${TOPICS.dlq} holds dead letters, not events: read it alone`);
  const topics: string[] = [...new Set(options.topics)].sort();
  for (const t of topics) store.ensureTopic(t);
  const member: Member = {
    groupId: options.groupId,
    memberId: `${hostname()}-${process.pid}-${randomBytes(6).toString('hex')}`,
    topics,
    sessionMs: timing.sessionMs,
  };
  const maxBatch = options.maxBatch ?? 1000;
  const fromBeginning = options.fromBeginning ?? true;
  if (options.startAt && (!options.transient || topics.length !== 1))
    throw new ConsumerMisuse('startAt is for a transient reader of one topic');
  /** A partition's start: `startAt` (as if committed there when the reader began), else the group's position. */
  const startOf = (topic: string, partition: number, committed: number | undefined): number | undefined =>
    (topic === topics[0] ? options.startAt?.get(partition) : undefined) ?? committed;
  const abort = new AbortController();
  /** Fetch position of each partition this member currently owns. */
  const positions = new Map<string, TopicPartition & { position: number }>();
  let lastPlan = -Infinity;
  let waiting = true; // for partitions another member still holds: re-plan at poll speed
  let cursor = 0;
  let iterating = false;

  groups.heartbeat(member);
  /** When this member last wrote its heartbeat (a re-plan writes one too). */
  let beatAt = Date.now();
  const heartbeat = setInterval(() => {
    // a re-plan of the batch loop beat less than a period ago: a second write is one more fsync on the main thread
    // (about 5% of it, with ten consumers in one process); the session is ten periods long
    if (Date.now() - beatAt < timing.heartbeatMs) return;
    try {
      groups.heartbeat(member);
      beatAt = Date.now();
    } catch {
      // busy database: the next beat retries; a session is many beats long
    }
  }, timing.heartbeatMs);
  heartbeat.unref();

  const revoke = async (tps: TopicPartition[]) => {
    if (tps.length === 0) return;
    await options.onRevoked?.(tps);
    for (const tp of tps) positions.delete(tpKey(tp));
  };

  const rebalance = async () => {
    lastPlan = Date.now();
    const plan = groups.plan(member, (t) => store.ensureTopic(t));
    beatAt = lastPlan; // the plan wrote the heartbeat
    waiting = plan.waiting > 0;
    const owned = new Set(plan.owned.map(tpKey));
    // taken over while this member stalled past its session: gone already, tell the caller
    await revoke(
      [...positions.values()]
        .filter((tp) => !owned.has(tpKey(tp)))
        .map(({ topic, partition }) => ({ topic, partition })),
    );
    if (plan.toRelease.length > 0) {
      await revoke(plan.toRelease);
      groups.release(member, plan.toRelease);
    }
    const releasing = new Set(plan.toRelease.map(tpKey));
    const added = plan.owned.filter(
      (tp) => topics.includes(tp.topic) && !positions.has(tpKey(tp)) && !releasing.has(tpKey(tp)),
    );
    if (added.length === 0) return;
    await options.onAssigned?.(added);
    const hw = store.highWatermarks(topics);
    for (const tp of added) {
      const committed = startOf(tp.topic, tp.partition, groups.committed(member.groupId, tp.topic).get(tp.partition));
      const position = committed ?? (fromBeginning ? 0 : (hw.get(tp.topic)?.get(tp.partition) ?? 0));
      positions.set(tpKey(tp), { ...tp, position });
    }
  };

  const nextBatch = async (): Promise<EventBatch | undefined> => {
    const owned = [...positions.values()];
    if (owned.length === 0) return undefined;
    const hw = store.highWatermarks(topics);
    for (let i = 0; i < owned.length; i++) {
      const tp = owned[(cursor + i) % owned.length]!;
      const high = hw.get(tp.topic)?.get(tp.partition) ?? 0;
      if (tp.position >= high) continue;
      cursor = (cursor + i + 1) % owned.length; // round-robin: every partition gets its turn
      if (tp.topic !== TOPICS.dlq && options.keys === undefined && codec.decodeTextNow !== undefined) {
        const texts = store.readTexts(tp.topic, tp.partition, tp.position, maxBatch, MAX_BATCH_BYTES);
        const last = texts.at(-1);
        if (!last) continue;
        const { events, dead } = await decodeTexts(tp, texts);
        return settle(tp, owned, hw, high, events, dead, last.offset);
      }
      if (tp.topic !== TOPICS.dlq && options.keys !== undefined && options.keyPrefixes !== undefined) {
        const range = { fromOffset: tp.position, high, limit: maxBatch, maxBytes: MAX_BATCH_BYTES };
        const got = store.readByPrefixes(tp.topic, tp.partition, range, options.keyPrefixes, options.keys);
        if (got) {
          const { events, dead } = await decodeRecords(codec, got.records, options.keys);
          return settle(tp, owned, hw, high, events, dead, got.lastOffset);
        }
      }
      const records = store.read(
        tp.topic,
        tp.partition,
        tp.position,
        maxBatch,
        MAX_BATCH_BYTES,
        tp.topic === TOPICS.dlq ? undefined : options.keys,
      );
      const last = records.at(-1);
      if (!last) continue;
      if (tp.topic === TOPICS.dlq) {
        tp.position = last.offset + 1;
        return {
          topic: tp.topic,
          partition: tp.partition,
          events: [],
          letters: records.map(fromDeadLetterRecord),
          lastOffset: last.offset,
          highWatermark: high,
        };
      }
      const { events, dead } = await decodeRecords(codec, records, options.keys);
      return settle(tp, owned, hw, high, events, dead, last.offset);
    }
    return undefined;
  };

  /** A batch read: its dead letters appended, the partition's position past it. */
  const settle = async (
    tp: TopicPartition & { position: number },
    owned: readonly (TopicPartition & { position: number })[],
    hw: ReadonlyMap<string, ReadonlyMap<number, number>>,
    high: number,
    events: LogEvent[],
    dead: DeadLetter[],
    lastOffset: number,
  ): Promise<EventBatch> => {
    if (dead.length > 0) {
      store.appendDeadLetters(dead.map(toDeadLetterRecord), partitionOf);
      await options.onDeadLetters?.(dead);
    }
    tp.position = lastOffset + 1;
    const caughtUp = owned.every((o) => o.position >= (hw.get(o.topic)?.get(o.partition) ?? 0));
    return { topic: tp.topic, partition: tp.partition, events, lastOffset, highWatermark: high, caughtUp };
  };

  const decodeOptions = { trusted: options.trusted === true };
  /**
   * `decodeRecords` of records read as text: the same events and the same dead letters. A text that V8's decoding
   * may have changed (U+FFFD, which a bad byte sequence becomes, or a leading byte order mark, which the codec's
   * decoder drops) is decoded from its bytes, and a refused record's letter carries its bytes.
   */
  const decodeTexts = async (
    tp: TopicPartition,
    texts: readonly TextRecord[],
  ): Promise<{ events: LogEvent[]; dead: DeadLetter[] }> => {
    const events: LogEvent[] = [];
    const dead: DeadLetter[] = [];
    for (const { offset, key, text } of texts) {
      let event: PasskEvent;
      try {
        if (text.charCodeAt(0) === 0xfeff || text.includes('\ufffd')) {
          const bytes = store.valueAt(tp.topic, tp.partition, offset);
          event = codec.decodeNow?.(bytes) ?? (await codec.decode(bytes));
        } else event = codec.decodeTextNow!(text, decodeOptions);
      } catch (e) {
        if (!(e instanceof InvalidEvent)) throw e;
        dead.push({
          source: { topic: tp.topic, partition: tp.partition, offset, key },
          value: store.valueAt(tp.topic, tp.partition, offset),
          reason: e.reason,
        });
        continue;
      }
      events.push({ topic: tp.topic, partition: tp.partition, offset, key, event });
    }
    return { events, dead };
  };

  async function* batches(): AsyncGenerator<EventBatch> {
    if (iterating) throw new ConsumerMisuse('batches() is already being iterated on this consumer');
    iterating = true;
    while (!abort.signal.aborted) {
      if (Date.now() - lastPlan >= (waiting ? timing.pollMs : timing.heartbeatMs)) await rebalance();
      const batch = await nextBatch();
      if (abort.signal.aborted) return;
      if (batch) yield batch;
      else await sleep(timing.pollMs, abort.signal);
    }
  }

  return {
    batches,
    commit: async (list) => {
      if (list.length > 0) groups.commit(member, list);
    },
    ...(deps.publishWith && {
      publisher: deps.publishWith.publisher,
      publishAndCommit: async (events, list, opts) => {
        let rejected: unknown;
        await deps.publishWith!.publish(events, opts, () => {
          if (list.length === 0) return;
          try {
            groups.commit(member, list); // a savepoint: a refusal undoes the commit alone, the append stays
          } catch (e) {
            if (!(e instanceof CommitRejected)) throw e;
            rejected = e;
          }
        });
        if (rejected) throw rejected;
      },
    }),
    committed: async (topic) => {
      const committed = groups.committed(member.groupId, topic);
      if (topic === topics[0]) for (const [p, offset] of options.startAt ?? []) committed.set(p, offset);
      return committed;
    },
    lag: async () => {
      const hw = store.highWatermarks(topics);
      return topics.flatMap((topic) => {
        const committed = groups.committed(member.groupId, topic);
        return [...(hw.get(topic) ?? new Map<number, number>())].map(([partition, high]) => ({
          topic,
          partition,
          lag: high - (startOf(topic, partition, committed.get(partition)) ?? 0),
        }));
      });
    },
    close: async () => {
      if (abort.signal.aborted) return;
      abort.abort();
      clearInterval(heartbeat);
      groups.leave(member);
      deps.onClose();
    },
  };
};
