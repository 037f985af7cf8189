import { createRequire } from 'node:module';
import kafkajs, { type Admin, type Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { BackendUnavailable } from '../../schemas/errors.ts';
import { CommitRejected } from '../errors.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { endOffsets } from './offsets.ts';
import { fakeAdmin, fakeKafka, names, standInSource } from './kafkajsStandIn.testkit.ts';

/**
 * The offsets reads (lag, committed) against a kafkajs stand-in: kafkajs 2.2.4 answers `fetchOffsets` from its
 * cached metadata, and a cache that lost a topic to a stale refresh (several topics read at once on one admin)
 * answers that topic with no partitions, silently — so a read to the end read nothing of it (the fault campaign's
 * misreads). The race needs brokers that answer out of order, which the single-node stack cannot stage.
 */

/** The waits between retries of an offsets read, recorded instead of slept. */
const slept: number[] = [];
const consumerOn = (admin: ReturnType<typeof fakeAdmin>, transient = false, kafka: Kafka = fakeKafka) =>
  standInSource(admin, kafka, async (ms) => void slept.push(ms)).consumer({
    groupId: 'g',
    topics: [TOPICS.datasets],
    transient,
  });

describe('the Kafka consumer’s offsets reads', () => {
  it('lag(): an answer that lacks a topic’s partitions is read again, not taken for "nothing to read"', async () => {
    const admin = fakeAdmin(1);
    const c = await consumerOn(admin);
    const lag = await c.lag();
    expect(lag).toEqual([
      { topic: TOPICS.datasets, partition: 0, lag: 5 },
      { topic: TOPICS.datasets, partition: 1, lag: 10 },
      { topic: TOPICS.datasets, partition: 2, lag: 10 },
      { topic: TOPICS.datasets, partition: 3, lag: 10 },
    ]);
    expect(admin.reads()).toBe(2);
    await c.close();
  });

  it('committed(): the same, so a restore up to the commits is not cut short', async () => {
    const admin = fakeAdmin(1);
    const c = await consumerOn(admin);
    expect(await c.committed(TOPICS.datasets)).toEqual(new Map([[0, 5]]));
    expect(admin.reads()).toBe(2);
    await c.close();
  });

  it('a one-use consumer tries again to delete its group when the first try fails (a coordinator away)', async () => {
    const admin = fakeAdmin(0);
    admin.deleteFails = 1;
    const c = await consumerOn(admin, true);
    await c.close();
    expect(admin.deletes).toBe(2);
    const durable = fakeAdmin(0);
    await (await consumerOn(durable)).close();
    expect(durable.deletes).toBe(0);
  });

  it('keeps trying for 14 s (a killed coordinator replaced), then leaves the group to the sweeps', async () => {
    const admin = fakeAdmin(0);
    admin.deleteFails = 1_000;
    slept.length = 0;
    await (await consumerOn(admin, true)).close();
    expect(admin.deletes).toBe(7);
    expect(slept).toEqual([1_000, 1_000, 2_000, 2_000, 4_000, 4_000]);
  });

  it('a one-use group its coordinator does not know is gone already: deleted once, not retried', async () => {
    const admin = fakeAdmin(0);
    admin.deleteUnknown = true;
    await (await consumerOn(admin, true)).close();
    expect(admin.deletes).toBe(1); // not tried again
  });

  it('lag(): after a leadership error, the end offsets are read through a new admin (kafkajs keeps the old leader)', async () => {
    // kafkajs 2.2.4's admin keeps asking the leader it cached (fix 13): this one fails every time, as it did for the
    // fault campaign's seed 17031728 after a broker was killed, until its metadata is 5 minutes old
    const NotLeader = () =>
      Object.assign(new kafkajs.KafkaJSProtocolError('This server is not the leader for that topic-partition'), {
        type: 'NOT_LEADER_FOR_PARTITION',
        retriable: true,
      });
    const admin = fakeAdmin(0);
    let staleReads = 0;
    admin.fetchTopicOffsets = async () => {
      staleReads++;
      throw NotLeader();
    };
    const fresh = { connects: 0, disconnects: 0 };
    const kafka = {
      ...fakeKafka,
      admin: () => ({
        connect: async () => void fresh.connects++,
        disconnect: async () => void fresh.disconnects++,
        fetchTopicOffsets: fakeAdmin(0).fetchTopicOffsets,
      }),
    } as unknown as Kafka;
    const c = await consumerOn(admin, false, kafka);
    expect((await c.lag()).map((p) => p.lag)).toEqual([5, 10, 10, 10]);
    expect(staleReads).toBe(1);
    expect(fresh).toEqual({ connects: 1, disconnects: 1 });
    await c.close();
  });

  it('an answer that stays short fails as BackendUnavailable, naming the partitions, after the retries', async () => {
    const c = await consumerOn(fakeAdmin(1_000));
    slept.length = 0;
    const lag = c.lag();
    await expect(lag).rejects.toBeInstanceOf(BackendUnavailable);
    await expect(lag).rejects.toThrow(/passk\.datasets lacks partitions 0, 1, 2, 3 of 4/);
    // six retries, 11.75 s in all: past KRaft's 9 s broker session, after which a killed leader's partitions move
    expect(slept).toEqual([250, 500, 1000, 2000, 4000, 4000]);
    await c.close();
  });
});

describe('endOffsets (the dead letters’ read of the DLQ’s ends, kafkaLog.ts)', () => {
  it('reads as the lag read does: a stale-cache TypeError is read again, a leadership error through a new admin', async () => {
    const admin = fakeAdmin(0);
    const answer = admin.fetchTopicOffsets;
    const tries: string[] = [];
    admin.fetchTopicOffsets = async () => {
      tries.push('log admin');
      if (tries.length === 1) throw new TypeError("Cannot destructure property 'partitions' of 'high.pop(...)'");
      throw Object.assign(new kafkajs.KafkaJSProtocolError('This server is not the leader for that topic-partition'), {
        type: 'NOT_LEADER_FOR_PARTITION',
        retriable: true,
      });
    };
    const kafka = {
      admin: () => ({
        connect: async () => {},
        disconnect: async () => {},
        fetchTopicOffsets: async () => (tries.push('new admin'), answer()),
      }),
    } as unknown as Kafka;
    slept.length = 0;
    const ends = await endOffsets(
      { kafka, admin: admin as unknown as Admin },
      names.physical(TOPICS.dlq),
      4,
      async (ms) => void slept.push(ms),
    );
    expect(ends.map((p) => p.high)).toEqual(['10', '10', '10', '10']);
    expect(tries).toEqual(['log admin', 'log admin', 'new admin']);
    expect(slept).toEqual([250, 500]);
  });

  it('reads again an answer that lacks a partition (fix 8), as the lag read does, instead of missing its letters', async () => {
    const admin = fakeAdmin(0);
    const answer = admin.fetchTopicOffsets;
    let reads = 0;
    admin.fetchTopicOffsets = async () => {
      const first = reads++ === 0;
      return (await answer()).filter((p) => !first || p.partition !== 2);
    };
    slept.length = 0;
    const ends = await endOffsets(
      { kafka: {} as Kafka, admin: admin as unknown as Admin },
      names.physical(TOPICS.dlq),
      4,
      async (ms) => void slept.push(ms),
    );
    expect(ends.map((p) => p.partition)).toEqual([0, 1, 2, 3]);
    expect(slept).toEqual([250]);
  });
});

/** kafkajs's own refusal while it restarts a crashed consumer (kafkajs 2.2.4, src/consumer/index.js). */
class KafkaJSNonRetriableError extends Error {
  override name = 'KafkaJSNonRetriableError';
}

describe('the Kafka consumer’s commit', () => {
  /** A kafkajs consumer that joined (partition 0 of passk.datasets) and then crashed, restarting: its group is gone. */
  const crashedKafka = () => {
    const handlers = new Map<string, (e: unknown) => void>();
    return {
      kafka: {
        consumer: () => ({
          on: (event: string, f: (e: unknown) => void) => void handlers.set(event, f),
          events: { GROUP_JOIN: 'consumer.group_join', CRASH: 'consumer.crash' },
          connect: async () => {},
          subscribe: async () => {},
          stop: async () => {},
          disconnect: async () => {},
          commitOffsets: async () => {
            throw new KafkaJSNonRetriableError('Consumer group was not initialized, consumer#run must be called first');
          },
        }),
      } as unknown as Kafka,
      join: () =>
        handlers.get('consumer.group_join')!({
          payload: { memberId: 'm1', memberAssignment: { [names.physical(TOPICS.datasets)]: [0] } },
        }),
    };
  };

  it('a commit kafkajs refuses between a crash and its restart is rejected as fenced (dropped), not fatal', async () => {
    const { kafka, join } = crashedKafka();
    const c = await consumerOn(fakeAdmin(0), false, kafka);
    join();
    const commit = c.commit([{ topic: TOPICS.datasets, partition: 0, nextOffset: 5 }]);
    await expect(commit).rejects.toBeInstanceOf(CommitRejected);
    await expect(commit).rejects.toThrow(/passk\.datasets\[0\]/);
    await c.close();
    // once closed, the same refusal is not a fenced commit (nobody restarts the consumer): an error
    const late = c.commit([{ topic: TOPICS.datasets, partition: 0, nextOffset: 5 }]);
    await expect(late).rejects.toThrow(/not initialized/);
    await expect(late).rejects.not.toBeInstanceOf(CommitRejected);
  });

  it('a commit sent to a coordinator that moved is rejected as fenced (kafkajs joins again), not fatal', async () => {
    const { kafka, join } = crashedKafka();
    const notCoordinator = Object.assign(new kafkajs.KafkaJSProtocolError('This is not the correct coordinator'), {
      type: 'NOT_COORDINATOR_FOR_GROUP',
      retriable: true,
    });
    const moved = {
      ...kafka,
      consumer: () => ({
        ...kafka.consumer({ groupId: 'g' }),
        // what kafkajs's retries end with: each asked the coordinator it had cached
        commitOffsets: async () => {
          throw new kafkajs.KafkaJSNumberOfRetriesExceeded(notCoordinator, { retryCount: 5, retryTime: 4800 });
        },
      }),
    } as unknown as Kafka;
    const c = await consumerOn(fakeAdmin(0), false, moved);
    join();
    const commit = c.commit([{ topic: TOPICS.datasets, partition: 0, nextOffset: 5 }]);
    await expect(commit).rejects.toBeInstanceOf(CommitRejected);
    await c.close();
  });
});

describe('kafkajs’s seek, which a reader’s start offsets rely on (startAt)', () => {
  it('with autoCommit off, a seek moves the next fetch’s offset and commits nothing (kafkajs#395, fixed in 1.16)', async () => {
    const require = createRequire(import.meta.url);
    const OffsetManager = require('kafkajs/src/consumer/offsetManager/index.js') as new (o: object) => {
      seek(s: { topic: string; partition: number; offset: string }): Promise<void>;
      nextOffset(topic: string, partition: number): { toString(): string };
    };
    const commits: unknown[] = [];
    const coordinator = { isConnected: () => true, offsetCommit: async (c: unknown) => void commits.push(c) };
    const manager = new OffsetManager({
      cluster: { committedOffsets: () => ({}) },
      coordinator,
      memberAssignment: { t: [0, 1] },
      autoCommit: false,
      topicConfigurations: { t: { fromBeginning: true } },
      instrumentationEmitter: { emit() {} },
      groupId: 'g',
      generationId: 1,
      memberId: 'm',
    });
    await manager.seek({ topic: 't', partition: 0, offset: '5' });
    await manager.seek({ topic: 't', partition: 7, offset: '9' }); // not assigned: ignored
    expect(manager.nextOffset('t', 0).toString()).toBe('5');
    expect(commits).toEqual([]);
  });
});
