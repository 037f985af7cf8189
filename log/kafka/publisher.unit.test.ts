import { KafkaJSConnectionError, type Kafka, type ProducerBatch } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import type { EventCodec } from '../../schemas/codec.ts';
import type { TrialRecorded } from '../../schemas/events/trialRecorded.ts';
import { BackendUnavailable } from '../../schemas/errors.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { partitionOf } from '../partitioner.ts';
import { createKafkaPublisher } from './publisher.ts';
import { topicNames } from './topics.ts';

/** A kafkajs stand-in that records each sendBatch and fails the ones `fail` picks. */
const fakeKafka = (fail: (b: ProducerBatch) => boolean = () => false, connectFails = false) => {
  const batches: ProducerBatch[] = [];
  const disconnects: number[] = [];
  const kafka = {
    producer: () => ({
      connect: async () => {
        if (connectFails) throw new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 10.77.1.12:9092');
      },
      disconnect: async () => void disconnects.push(Date.now()),
      sendBatch: async (b: ProducerBatch) => {
        if (fail(b)) throw new KafkaJSConnectionError('Connection timeout');
        batches.push(b);
        return [];
      },
    }),
  } as unknown as Kafka;
  return { kafka, batches, disconnects };
};

const codec: EventCodec = {
  encode: async (e) => Buffer.from(JSON.stringify(e)),
  decode: async () => {
    throw new Error('not used');
  },
};

const open = (kafka: Kafka) =>
  createKafkaPublisher({ kafka, codec, names: topicNames('ns.'), maxEventBytes: 1_000_000, partitionsOf: () => 4 });

// only what the publisher reads of an event: its type (the topic), suite and row (the key); the codec is a fake
const events = Array.from(
  { length: 40 },
  (_, i) => ({ type: 'TrialRecorded', event_id: `e${i}`, suite: 's', row_id: `r${i}` }) as TrialRecorded,
);

describe('the Kafka publisher', () => {
  it('disconnects a producer whose connect failed, and rejects classified (its seed socket kept the process alive)', async () => {
    const { kafka, disconnects } = fakeKafka(() => false, true);
    const opening = open(kafka);
    await expect(opening).rejects.toBeInstanceOf(BackendUnavailable);
    await expect(opening).rejects.toThrow(/^kafka producer: connect: Connection error/);
    expect(disconnects).toHaveLength(1);
  });

  it('sends each topic-partition in a request of its own (kafkajs#1303: a multi-partition sendBatch can drop records on a leader change)', async () => {
    const { kafka, batches } = fakeKafka();
    await (await open(kafka)).publish(events);
    const sent = batches.flatMap((b) => b.topicMessages!.flatMap((t) => t.messages.map((m) => [t.topic, m.key])));
    expect(sent.map(([, key]) => key).sort()).toEqual(events.map((e) => `${e.suite}\u001f${e.row_id}`).sort());
    for (const b of batches) {
      expect(b.topicMessages).toHaveLength(1);
      expect(b.topicMessages![0]!.topic).toBe(`ns.${TOPICS.trials}`);
      expect(new Set(b.topicMessages![0]!.messages.map((m) => partitionOf(String(m.key), 4))).size).toBe(1);
    }
    expect(batches.length).toBe(new Set(events.map((e) => partitionOf(`${e.suite}\u001f${e.row_id}`, 4))).size);
  });

  it('rejects the publish, classified, when one partition’s request fails (the caller sends again)', async () => {
    const failing = partitionOf(`${events[0]!.suite}\u001f${events[0]!.row_id}`, 4);
    const { kafka } = fakeKafka((b) => partitionOf(String(b.topicMessages![0]!.messages[0]!.key), 4) === failing);
    await expect((await open(kafka)).publish(events)).rejects.toBeInstanceOf(BackendUnavailable);
  });

  it('overlapping calls: a partition’s requests go one at a time in call order, and none behind a failed one is sent', async () => {
    const keyOfE = (e: TrialRecorded) => `${e.suite}\u001f${e.row_id}`;
    const failing = partitionOf(keyOfE(events[0]!), 4);
    const sent: string[][] = [];
    let inFlight = new Map<number, number>();
    let overlapped = false;
    let failedOnce = false;
    const kafka = {
      producer: () => ({
        connect: async () => {},
        disconnect: async () => {},
        sendBatch: async (b: ProducerBatch) => {
          const messages = b.topicMessages![0]!.messages;
          const p = partitionOf(String(messages[0]!.key), 4);
          if ((inFlight.get(p) ?? 0) > 0) overlapped = true;
          inFlight = new Map(inFlight).set(p, (inFlight.get(p) ?? 0) + 1);
          // the first call's request is slow, so the second call queues behind it
          await new Promise((resolve) => setTimeout(resolve, messages[0]!.key === keyOfE(events[0]!) ? 30 : 1));
          inFlight.set(p, inFlight.get(p)! - 1);
          if (p === failing && !failedOnce) {
            failedOnce = true;
            throw new KafkaJSConnectionError('Connection timeout');
          }
          sent.push(messages.map((m) => String(m.key)));
          return [];
        },
      }),
    } as unknown as Kafka;
    const publisher = await open(kafka);
    const second = events.map((e) => ({ ...e, event_id: `${e.event_id}b` }));
    const [a, b] = await Promise.allSettled([publisher.publish(events), publisher.publish(second)]);
    expect(a.status).toBe('rejected');
    expect(b.status).toBe('rejected'); // its request for the failed partition was queued behind the failure
    expect(overlapped).toBe(false);
    // nothing for the failed partition was sent, from either call; every other partition got both calls, in order
    const sentKeys = sent.flat();
    expect(sentKeys.filter((k) => partitionOf(k, 4) === failing)).toEqual([]);
    const others = events.map(keyOfE).filter((k) => partitionOf(k, 4) !== failing);
    expect(sentKeys.filter((k) => partitionOf(k, 4) !== failing).sort()).toEqual([...others, ...others].sort());
    // a call made after the failure settled is sent as usual
    await publisher.publish([events[0]!]);
    expect(sent.at(-1)).toEqual([keyOfE(events[0]!)]);
  });
});
