import { createRequire } from 'node:module';
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { KAFKAJS_BUGS } from './kafkajsFixes.ts';

/**
 * Canaries of kafkajs's bugs (kafkajsFixes.ts, KAFKAJS_BUGS): each passes while the installed kafkajs still has the
 * bug passk works around. One that fails after an upgrade says the workaround can go (and its docs/reliability.md
 * fix be marked so). The Runner race's canary stages it in a child process: kafkajsFixes.int.test.ts.
 */
const require = createRequire(import.meta.url);

describe('kafkajs canaries', () => {
  it('kafkajs is still 2.2.4: fixes 6 and 8 cannot be staged without a cluster, so any other version re-opens them', () => {
    const { version } = require('kafkajs/package.json') as { version: string };
    expect(version).toBe('2.2.4');
  });

  it('sendMessages forgets a partition whose leader moved to a broker that had answered (fix 4, kafkajs#1303)', async () => {
    type Produce = { topicData: { topic: string; partitions: { partition: number }[] }[] };
    const sendMessages = require('kafkajs/src/producer/sendMessages.js') as (
      deps: object,
    ) => (req: object) => Promise<{ partition: number }[]>;
    const createRetry = require('kafkajs/src/retry/index.js') as (o: object) => unknown;
    const { KafkaJSConnectionError } = require('kafkajs/src/errors.js') as {
      KafkaJSConnectionError: new (m: string) => Error;
    };
    const logger = { namespace: () => logger, debug() {}, info() {}, warn() {}, error() {} };
    // partition 0 on broker 1, partition 1 on broker 2; broker 2 fails, and its partition's leadership moves to 1
    let leaders: Record<number, number> = { 0: 1, 1: 2 };
    const produced: number[] = [];
    const broker = (nodeId: number) => ({
      nodeId,
      produce: async ({ topicData }: Produce) => {
        const partitions = topicData.flatMap((t) => t.partitions.map((p) => p.partition));
        if (nodeId === 2) {
          leaders = { 0: 1, 1: 1 };
          throw new KafkaJSConnectionError('broker 2 went away');
        }
        produced.push(...partitions);
        return {
          topics: [{ topicName: 't', partitions: partitions.map((partition) => ({ partition, errorCode: 0 })) }],
        };
      },
    });
    const brokers = new Map([1, 2].map((id) => [id, broker(id)]));
    const cluster = {
      refreshMetadataIfNecessary: async () => {},
      refreshMetadata: async () => {},
      addMultipleTargetTopics: async () => {},
      isConnected: () => true,
      findTopicPartitionMetadata: () => [{ partitionId: 0 }, { partitionId: 1 }],
      findLeaderForPartitions: (_topic: string, partitions: string[]) => {
        const out: Record<number, number[]> = {};
        for (const p of partitions.map(Number)) (out[leaders[p]!] ??= []).push(p);
        return out;
      },
      findBroker: async ({ nodeId }: { nodeId: string }) => brokers.get(Number(nodeId)),
    };
    const eosManager = {
      acquireBrokerLock: async () => {},
      releaseBrokerLock: async () => {},
      isTransactional: () => false,
      getSequence: () => 0,
      updateSequence: () => {},
      getProducerId: () => -1,
      getProducerEpoch: () => 0,
    };
    const send = sendMessages({
      logger,
      cluster,
      eosManager,
      partitioner: ({ message }: { message: { partition: number } }) => message.partition,
      retrier: createRetry({ retries: 3, initialRetryTime: 1, maxRetryTime: 5 }),
    });
    const result = await send({
      acks: -1,
      timeout: 1000,
      topicMessages: [
        {
          topic: 't',
          messages: [
            { value: 'a', partition: 0 },
            { value: 'b', partition: 1 },
          ],
        },
      ],
    });
    // the call resolves, and partition 1's record was never sent: the bug. Fixed upstream, partition 1 would be sent.
    expect(result.map((r) => r.partition)).toEqual([0]);
    expect(produced).toEqual([0]);
  });

  it('a commit outside a run is refused with the message passk reads as a restart (fix 11)', async () => {
    const consumer = new Kafka({ brokers: ['127.0.0.1:9'], logLevel: logLevel.NOTHING }).consumer({ groupId: 'g' });
    const refusal = await consumer.commitOffsets([{ topic: 't', partition: 0, offset: '1' }]).catch((e: Error) => e);
    expect(refusal).toMatchObject({ name: 'KafkaJSNonRetriableError' });
    // log/kafka/consumer.ts matches this message: a kafkajs that says it otherwise would make it a bug (exit 4) again
    expect((refusal as Error).message).toMatch(/^Consumer group was not initialized/);
  });

  it('admin.fetchTopicOffsets gives up on a leader that moved without refreshing its metadata (fix 13)', async () => {
    const createAdmin = require('kafkajs/src/admin/index.js') as (deps: object) => {
      fetchTopicOffsets(topic: string): Promise<unknown>;
    };
    const { KafkaJSProtocolError } = require('kafkajs/src/errors.js') as {
      KafkaJSProtocolError: new (e: object) => Error & { type: string };
    };
    const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as {
      createErrorFromCode(code: number): object;
    };
    const logger = { namespace: () => logger, debug() {}, info() {}, warn() {}, error() {} };
    let refreshes = 0;
    const cluster = {
      addTargetTopic: async () => {},
      refreshMetadataIfNecessary: async () => {}, // the cache is fresh enough for kafkajs: under 5 minutes old
      refreshMetadata: async () => void refreshes++,
      findTopicPartitionMetadata: () => [{ partitionId: 0 }],
      fetchTopicsOffset: async () => {
        throw new KafkaJSProtocolError(createErrorFromCode(6)); // NOT_LEADER_FOR_PARTITION, from the old leader
      },
    };
    const admin = createAdmin({ logger, cluster, retry: { retries: 3, initialRetryTime: 1, maxRetryTime: 5 } });
    const refusal = (await admin.fetchTopicOffsets('t').catch((e: unknown) => e)) as { type?: string };
    expect(refusal.type).toBe('NOT_LEADER_FOR_PARTITION');
    // the bug: no refresh, so the next read asks the same broker. Fixed upstream, this would be 1.
    expect(refreshes).toBe(0);
  });

  it('names each bug with its workaround and canary, and an upstream link where there is one', () => {
    expect(KAFKAJS_BUGS.map((b) => b.fix)).toEqual([4, 6, 8, 11, 12, 13]);
    for (const b of KAFKAJS_BUGS) {
      expect(b.canary).toMatch(/kafkajs(Canaries\.unit|Fixes\.int)\.test\.ts: "/);
      if (b.upstream !== null) expect(b.upstream).toMatch(/^https:\/\/github\.com\/tulios\/kafkajs\//);
      for (const r of b.related) expect(r).toMatch(/^https:\/\/github\.com\/tulios\/kafkajs\/(issues|pull)\/\d+$/);
      // every bug names its report, or where upstream discusses the same code
      expect(b.upstream !== null || b.related.length > 0, `fix ${b.fix}`).toBe(true);
    }
  });
});
