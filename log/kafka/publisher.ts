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

/** The same partition as the embedded log and the Java client give the key. */
const keyPartitioner = () => (args: { partitionMetadata: readonly unknown[]; message: Message }) =>
  partitionOf(String(args.message.key ?? ''), args.partitionMetadata.length);

const toBuffer = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

export interface KafkaPublisher extends EventPublisher {
  /** Appends records (topics by logical name, optional headers), sized and chunked, and awaits the acks. */
  send(records: readonly OutRecord[]): Promise<void>;
}

/**
 * An idempotent producer (acks = all, one request in flight, so retries cannot reorder a key), gzip-compressed.
 * Requests are chunked so that no partition's record batch goes over the topic's
 * `max.message.bytes`; chunks are sent one after another, so per-key order holds across them.
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

  const send = async (records: readonly OutRecord[]) => {
    for (const r of records)
      if (r.value.byteLength > deps.maxEventBytes)
        throw new EventTooLarge(r.value.byteLength, deps.maxEventBytes, r.topic);
    // one request may carry up to maxEventBytes per partition: each partition's record batch stays
    // under the topic's max.message.bytes (maxEventBytes + overhead)
    let chunk: OutRecord[] = [];
    const bytes = new Map<string, number>();
    const flush = async () => {
      if (chunk.length === 0) return;
      const bySlot = new Map<string, { topic: string; messages: Message[] }>();
      for (const r of chunk) {
        const partition = partitionOf(r.key, deps.partitionsOf(r.topic));
        const slot = tpKey({ topic: r.topic, partition });
        const to = bySlot.get(slot) ?? bySlot.set(slot, { topic: r.topic, messages: [] }).get(slot)!;
        to.messages.push({ key: r.key, value: toBuffer(r.value), ...(r.headers ? { headers: r.headers } : {}) });
      }
      // One request per topic-partition, all at once. Never one sendBatch for several partitions: when one
      // partition's leader fails and its partitions move to a broker that already answered that sendBatch, kafkajs
      // 2.2.4 retries only the brokers without an answer and resolves, so those records were never written but
      // acknowledged (tulios/kafkajs#1303, PR #1798; found by the fault campaign, seed 7000022).
      const sent = await Promise.allSettled(
        [...bySlot.values()].map(({ topic, messages }) =>
          producer.sendBatch({
            acks: -1,
            // gzip (kafkajs's built-in codec; zlib runs off the main thread): on this machine a 5,000-record
            // sendBatch of trials went from 16–19k to 28k records/s (docs/performance.md)
            compression: CompressionTypes.GZIP,
            topicMessages: [{ topic: deps.names.physical(topic), messages }],
          }),
        ),
      );
      const failed = sent.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw classifyKafkaError(failed.reason, 'kafka producer: send');
      chunk = [];
      bytes.clear();
    };
    for (const r of records) {
      const slot = tpKey({ topic: r.topic, partition: partitionOf(r.key, deps.partitionsOf(r.topic)) });
      const size =
        r.value.byteLength +
        Buffer.byteLength(r.key) +
        PER_RECORD_BYTES +
        (r.headers ? Buffer.byteLength(JSON.stringify(r.headers)) : 0);
      if ((bytes.get(slot) ?? 0) + size > deps.maxEventBytes) await flush();
      chunk.push(r);
      bytes.set(slot, (bytes.get(slot) ?? 0) + size);
    }
    await flush();
  };

  return {
    send,
    publish: async (events, opts) => {
      const records: OutRecord[] = [];
      for (const e of events)
        records.push({ topic: topicOf(e), key: keyOf(e), value: await deps.codec.encode(e, opts) });
      await send(records);
    },
    publishRaw: async (topic, records) => send(records.map((r) => ({ topic, key: r.key, value: r.value }))),
    close: async () => {
      await producer.disconnect();
    },
  };
};
