import type { Admin, Kafka } from 'kafkajs';
import type { EventSource } from '../../processors/ports.ts';
import type { EventCodec } from '../../schemas/codec.ts';
import { createKafkaConsumer } from './consumer.ts';
import { topicNames } from './topics.ts';

/**
 * A kafkajs stand-in for the Kafka consumer's unit tests (consumer.unit, and the processors' readers over it): an
 * admin whose offsets reads a test can break as kafkajs's do, and a kafkajs consumer that connects and never joins.
 */
export const names = topicNames('ns.');
export const PARTITIONS = 4;

/** An admin whose first `short` offsets reads answer a topic with no partitions, as kafkajs's stale cache does. */
export const fakeAdmin = (short: number) => {
  let reads = 0;
  const admin = {
    reads: () => reads,
    fetchOffsets: async ({ topics }: { groupId: string; topics: string[] }) =>
      topics.map((topic) => ({
        topic,
        partitions:
          reads++ < short
            ? []
            : Array.from({ length: PARTITIONS }, (_, partition) => ({
                partition,
                offset: partition === 0 ? '5' : '-1',
                metadata: null,
              })),
      })),
    fetchTopicOffsets: async () =>
      Array.from({ length: PARTITIONS }, (_, partition) => ({
        partition,
        offset: '10',
        high: '10',
        low: '0',
      })),
    deletes: 0,
    deleteFails: 0,
    /** The group is unknown to its coordinator (it never joined): kafkajs's DeleteGroups error. */
    deleteUnknown: false,
    deleteGroups: async () => {
      admin.deletes++;
      if (admin.deleteUnknown)
        throw Object.assign(new Error('Error in DeleteGroups'), {
          name: 'KafkaJSDeleteGroupsError',
          groups: [{ groupId: 'g', errorCode: 69, error: { type: 'GROUP_ID_NOT_FOUND', message: 'no group' } }],
        });
      if (admin.deleteFails-- > 0) throw new Error('The coordinator is not available');
    },
  };
  return admin;
};

export const fakeKafka = {
  consumer: () => ({
    on: () => {},
    events: { GROUP_JOIN: 'consumer.group_join', CRASH: 'consumer.crash' },
    connect: async () => {},
    subscribe: async () => {},
    stop: async () => {},
    disconnect: async () => {},
  }),
} as unknown as Kafka;

export const codec: EventCodec = {
  encode: async () => new Uint8Array(),
  decode: async () => {
    throw new Error('not used');
  },
};

/**
 * The log's consumers over the stand-in, as an EventSource (what the processors' readers open); each group is the
 * option's, in namespace `ns.`. `sleep`: the waits between retries of an offsets read (none by default).
 */
export const standInSource = (
  admin: ReturnType<typeof fakeAdmin>,
  kafka: Kafka = fakeKafka,
  sleep: (ms: number) => Promise<void> = async () => {},
): EventSource => ({
  consumer: (options) =>
    createKafkaConsumer({
      sleep,
      kafka,
      admin: admin as unknown as Admin,
      codec,
      deadLetter: async () => {},
      names,
      partitionsOf: () => PARTITIONS,
      groupId: `ns.${options.groupId}`,
      options,
      maxBytesPerPartition: 1_000_000,
      onClose: () => {},
    }),
});
