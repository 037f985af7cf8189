import { CompressionTypes, type Kafka, type Message, type Producer } from 'kafkajs';
import type { EventCodec } from '../../schemas/codec.ts';
import { EventTooLarge } from '../../schemas/errors.ts';
import { keyOf, topicOf, tpKey } from '../../schemas/topics.ts';
import type { EventPublisher } from '../../processors/ports.ts';
import { partitionOf } from '../partitioner.ts';
import { classifyKafkaError } from './errors.ts';
import type { TopicNames } from './topics.ts';

export interface OutRecord {
  readonly topic: string;
  readonly key: string;
  readonly value: Uint8Array;
  readonly headers?: Record<string, string>;
}

const PER_RECORD_BYTES = 64; // record framing, timestamps, varints: a generous estimate

/**
 * The same partition as the embedded log and the Java client give the key: the one `send` put on the message (it
 * has hashed the key once already, to chunk by partition), else the key's.
 */
const keyPartitioner = () => (args: { partitionMetadata: readonly unknown[]; message: Message }) =>
  args.message.partition ?? partitionOf(String(args.message.key ?? ''), args.partitionMetadata.length);

const toBuffer = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

export interface KafkaPublisher extends EventPublisher {
  /** Appends records (topics by logical name, optional headers), sized and chunked, and awaits the acks. */
  send(records: readonly OutRecord[]): Promise<void>;
}

/**
 * An idempotent producer (acks = all, one request in flight, so retries cannot reorder a key), gzip-compressed.
 * Requests are chunked so that no partition's record batch goes over the topic's
 * `max.message.bytes`; a partition's chunks are sent one after another, those of different partitions at
 * once. Calls may overlap (the processors publish a unit's changelog while the one before is in flight):
 * the records of a later call are appended after those of an earlier one, per partition, so per key.
 * A publish call is durable once it resolves, but not atomic: a failure part-way can leave earlier
 * chunks appended (the caller retries, and the processors de-duplicate by event_id).
 */
export const createKafkaPublisher = async (deps: {
  kafka: Kafka;
  codec: EventCodec;
  names: TopicNames;
  maxEventBytes: number;
  /** Partition count of a topic (logical name), as created on the cluster. */
  partitionsOf: (topic: string) => number;
}): Promise<KafkaPublisher> => {
  const producer: Producer = deps.kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: keyPartitioner,
  });
  // a failed connect can have connected the seed broker (the idempotent producer's InitProducerId then failed on
  // another broker, one that went away): disconnect, or that socket keeps the process alive doing nothing — a
  // `passk ingest` that never listened, so no supervisor restarted it (the fault campaign, docs/reliability.md)
  await producer.connect().catch(async (e: unknown) => {
    await producer.disconnect().catch(() => {});
    throw classifyKafkaError(e, 'kafka producer: connect');
  });

  /**
   * Per topic-partition, the chunks sent or waiting: each is sent once the one before it on the same
   * partition is acknowledged, so concurrent calls keep per-key order (and the idempotent producer never
   * has two requests for one partition at once: kafkajs numbers a partition's batches from its last ack).
   * A chunk queued behind one that fails is not sent and fails too: nothing of a later call lands after a
   * gap left by an earlier one. An entry goes once its last chunk settles.
   */
  const tails = new Map<string, Promise<void>>();
  const enqueue = (slot: string, topic: string, messages: Message[]): Promise<void> => {
    const prev = tails.get(slot);
    const go = () =>
      // One request per topic-partition. Never one sendBatch for several partitions: when one partition's
      // leader fails and its partitions move to a broker that already answered that sendBatch, kafkajs 2.2.4
      // retries only the brokers without an answer and resolves, so those records were never written but
      // acknowledged (tulios/kafkajs#1303, PR #1798; found by the fault campaign, seed 7000022).
      producer
        .sendBatch({
          acks: -1,
          // gzip (kafkajs's built-in codec; zlib runs off the main thread): on this machine a 5,000-record
          // sendBatch of trials went from 16–19k to 28k records/s (docs/performance.md)
          compression: CompressionTypes.GZIP,
          topicMessages: [{ topic: deps.names.physical(topic), messages }],
        })
        .then(() => undefined);
    const sent = prev ? prev.then(go) : go();
    tails.set(slot, sent);
    const forget = () => void (tails.get(slot) === sent && tails.delete(slot));
    sent.then(forget, forget);
    return sent;
  };
  /**
   * Calls queue their chunks in call order: a call waits for the one before it to have queued its
   * chunks (not for their acks), so a later call's records land after an earlier one's, per partition.
   */
  let placed: Promise<void> = Promise.resolve();

  /** Takes the caller's place in line now; `place()` once its chunks are queued (or it gave up). */
  const takePlace = () => {
    const before = placed;
    let place = () => {};
    const mine = new Promise<void>((resolve) => (place = resolve));
    // the next call waits for this one and every one before it: a call that gives up before its turn
    // (a record too large) must not let a later call queue ahead of an earlier one still encoding
    placed = Promise.all([before, mine]).then(() => undefined);
    return { before, place };
  };

  const send = async (records: readonly OutRecord[], turn = takePlace()) => {
    const acks: Promise<void>[] = [];
    try {
      await queueInTurn(records, turn.before, acks);
    } finally {
      turn.place(); // queued (or given up): the next call may queue its chunks while these are in flight
    }
    const sent = await Promise.allSettled(acks);
    const failed = sent.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw classifyKafkaError(failed.reason, 'kafka producer: send');
  };

  const queueInTurn = async (records: readonly OutRecord[], before: Promise<void>, acks: Promise<void>[]) => {
    for (const r of records)
      if (r.value.byteLength > deps.maxEventBytes)
        throw new EventTooLarge(r.value.byteLength, deps.maxEventBytes, r.topic);
    // one request may carry up to maxEventBytes per partition: each partition's record batch stays
    // under the topic's max.message.bytes (maxEventBytes + overhead)
    const bySlot = new Map<string, { topic: string; chunks: Message[][]; bytes: number }>();
    for (const r of records) {
      const partition = partitionOf(r.key, deps.partitionsOf(r.topic));
      const slot = tpKey({ topic: r.topic, partition });
      const size =
        r.value.byteLength +
        Buffer.byteLength(r.key) +
        PER_RECORD_BYTES +
        (r.headers ? Buffer.byteLength(JSON.stringify(r.headers)) : 0);
      const to = bySlot.get(slot) ?? bySlot.set(slot, { topic: r.topic, chunks: [[]], bytes: 0 }).get(slot)!;
      if (to.bytes + size > deps.maxEventBytes && to.chunks.at(-1)!.length > 0) {
        to.chunks.push([]);
        to.bytes = 0;
      }
      to.chunks
        .at(-1)!
        .push({ key: r.key, value: toBuffer(r.value), partition, ...(r.headers ? { headers: r.headers } : {}) });
      to.bytes += size;
    }
    await before;
    for (const [slot, { topic, chunks }] of bySlot) for (const c of chunks) acks.push(enqueue(slot, topic, c));
  };

  return {
    send,
    publish: async (events, opts) => {
      // the place in line is taken at the call, before encoding: a call made later may be encoded
      // first, but its records are queued after these
      const turn = takePlace();
      const records: OutRecord[] = [];
      try {
        for (const e of events)
          records.push({ topic: topicOf(e), key: keyOf(e), value: await deps.codec.encode(e, opts) });
      } catch (e) {
        turn.place();
        throw e;
      }
      await send(records, turn);
    },
    publishRaw: async (topic, records) => send(records.map((r) => ({ topic, key: r.key, value: r.value }))),
    // the log replaces it with its dead-letter writer (kafkaLog.ts), which knows what the topic holds
    publishDeadLetters: async () => {
      throw new Error('publishDeadLetters: use the Kafka event log’s publisher');
    },
    close: async () => {
      await producer.disconnect();
    },
  };
};
