import { KafkaJSProtocolError } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { ALL_TOPICS } from '../../schemas/topics.ts';
import { partitionCounts, topicNames } from './topics.ts';

/** UNKNOWN_TOPIC_OR_PARTITION, as kafkajs throws it for a broker's answer. */
const unknownTopic = () =>
  new KafkaJSProtocolError(
    Object.assign(new Error('This server does not host this topic-partition'), {
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
      code: 3,
      retriable: true,
    }),
  );

/** An admin whose broker does not know the topics for the first `unknownFor` calls (a topic created a moment ago). */
const admin = (unknownFor: number) => {
  let calls = 0;
  return {
    calls: () => calls,
    fetchTopicMetadata: async ({ topics }: { topics?: string[] } = {}) => {
      if (calls++ < unknownFor) throw unknownTopic();
      return {
        topics: (topics ?? []).map((name) => ({
          name,
          partitions: [0, 1, 2, 3].map((p) => ({
            partitionId: p,
            leader: 1,
            replicas: [1],
            isr: [1],
            partitionErrorCode: 0,
          })),
        })),
      };
    },
  };
};

describe('partition counts', () => {
  const names = topicNames('ns.');

  it('wait out a broker that does not know a just-created topic yet (it failed the open at once)', async () => {
    const a = admin(3);
    const counts = await partitionCounts(a, names);
    expect(a.calls()).toBe(4);
    expect([...counts.keys()].sort()).toEqual([...ALL_TOPICS].sort());
    expect([...counts.values()].every((n) => n === 4)).toBe(true);
  });

  it('give up after the wait, with the broker’s error', async () => {
    await expect(partitionCounts(admin(1_000), names, 250)).rejects.toThrow(/does not host this topic-partition/);
  });

  it('do not wait out other errors', async () => {
    const a = {
      fetchTopicMetadata: async () => {
        throw new Error('Broker not connected');
      },
    };
    await expect(partitionCounts(a, names)).rejects.toThrow('Broker not connected');
  });
});
