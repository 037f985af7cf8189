import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKafkaEventLog, createRegistryClient, ONE_USE_SUFFIX } from '../../log/index.ts';
import { readToEnd } from '../../processors/operators/readToEnd.ts';
import type { EventLog } from '../../processors/ports.ts';
import { ALL_TOPICS, TOPICS } from '../../schemas/topics.ts';
import { trial } from '../helpers/processorFixtures.ts';
import { createKafkaConsumer } from '../../log/kafka/consumer.ts';
import { topicNames } from '../../log/kafka/topics.ts';
import type { EventCodec } from '../../schemas/codec.ts';

/**
 * Closing a Kafka consumer leaves its group at once, whenever it is closed: the next member of the group gets the
 * partitions without waiting for the session timeout, and nothing crashes on the disconnect (kafkajs 2.2.4 crashes
 * with "write after end" and sends no LeaveGroup when it is stopped while its first join is in flight).
 */
const brokers = inject('kafkaBrokers').split(',');
const namespace = `tclose${Date.now().toString(36)}${randomBytes(3).toString('hex')}.`;
/** kafkajs's own log lines at ERROR and above: a consumer crash is logged there. */
const errors: string[] = [];
const kafka = new Kafka({
  clientId: 'passk-test',
  brokers,
  logLevel: logLevel.ERROR,
  logCreator: () => (entry) => void errors.push(entry.log.message),
});
const TRIALS = 40;
let log: EventLog;
let admin: Admin;

const membersOf = async (groupId: string): Promise<number> => {
  const { groups } = await admin.describeGroups([namespace + groupId]);
  return groups[0]?.members.length ?? 0;
};

beforeAll(async () => {
  const registry = createRegistryClient({ url: inject('schemaRegistryUrl') });
  log = await createKafkaEventLog({ kafka, registry, namespace, partitions: 4 });
  admin = kafka.admin();
  await admin.connect();
  await log.publisher.publish(
    Array.from({ length: TRIALS }, (_, i) => trial({ row: `r${i}`, version: 'v1', attempt: 1, passed: true })),
  );
});

afterAll(async () => {
  await log?.close();
  await admin?.deleteTopics({ topics: ALL_TOPICS.map((t) => namespace + t) }).catch(() => {});
  await admin?.disconnect();
});

describe('Kafka consumer close', () => {
  it('a consumer closed before it is read from never joins its group', async () => {
    const consumer = await log.consumer({ groupId: 'never-read', topics: [TOPICS.trials] });
    expect((await consumer.lag()).reduce((n, l) => n + l.lag, 0)).toBe(TRIALS);
    await consumer.close();
    const { groups } = await admin.describeGroups([`${namespace}never-read`]);
    expect(groups[0]).toMatchObject({ state: 'Dead', members: [] });
  });

  it('a member closed while its first join is in flight leaves the group; the next member reads everything', async () => {
    const first = await log.consumer({ groupId: 'mid-join', topics: [TOPICS.trials] });
    const pending = first.batches()[Symbol.asyncIterator]().next(); // starts the join
    await first.close();
    expect(await pending).toMatchObject({ done: true });
    expect(await membersOf('mid-join')).toBe(0);

    const assigned: number[] = [];
    const second = await log.consumer({
      groupId: 'mid-join',
      topics: [TOPICS.trials],
      onAssigned: (tps) => void assigned.push(...tps.map((tp) => tp.partition)),
    });
    let read = 0;
    for await (const batch of second.batches()) {
      read += batch.events.length;
      await second.commit([{ topic: batch.topic, partition: batch.partition, nextOffset: batch.lastOffset + 1 }]);
      if (read >= TRIALS) break;
    }
    expect(read).toBe(TRIALS);
    expect(assigned.sort()).toEqual([0, 1, 2, 3]);
    expect(await membersOf('mid-join')).toBe(1);
    await second.close();
    expect(await membersOf('mid-join')).toBe(0);
    expect(errors.filter((m) => m.includes('Crash'))).toEqual([]);
  });

  it('a consumer closed while it decodes a chunk closes (the abort came before the handoff)', async () => {
    // the decode of the first chunk waits until the close has begun: the chunk is handed over after the abort
    let decoding = () => {};
    const started = new Promise<void>((resolve) => (decoding = resolve));
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow: EventCodec = {
      encode: (e, o) => log.codec.encode(e, o),
      decode: async (bytes) => {
        decoding();
        await gate;
        return log.codec.decode(bytes);
      },
    };
    const consumer = await createKafkaConsumer({
      kafka,
      admin,
      codec: slow,
      deadLetter: async () => {},
      names: topicNames(namespace),
      partitionsOf: () => 4, // the log above made every topic with 4
      groupId: `${namespace}mid-decode`,
      options: { groupId: 'mid-decode', topics: [TOPICS.trials] },
      maxBytesPerPartition: 1_100_000,
      onClose: () => {},
    });
    const first = consumer.batches()[Symbol.asyncIterator]().next();
    void first.catch(() => {});
    await started;
    const closed = consumer.close();
    release();
    const outcome = await Promise.race([
      closed.then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('still closing after 30 s'), 30_000)),
    ]);
    expect(outcome).toBe('closed');
    expect(await membersOf('mid-decode')).toBe(0);
  }, 60_000);

  it('a restore read (readToEnd) reads to the end and leaves its group', async () => {
    let read = 0;
    expect(await readToEnd(log, { topic: TOPICS.trials, groupId: 'restore', onEvent: () => void read++ })).toBe(TRIALS);
    expect(read).toBe(TRIALS);
    expect(await membersOf(`restore${ONE_USE_SUFFIX}`)).toBe(0);
    expect(errors.filter((m) => m.includes('Crash'))).toEqual([]);
  });

  it('a transient group (a restore, a tail, a tool’s read) is deleted when its consumer closes; a committing one stays', async () => {
    const listed = async () => (await admin.listGroups()).groups.map((g) => g.groupId);
    const reader = await log.consumer({ groupId: 'transient-restore', topics: [TOPICS.trials], transient: true });
    await reader.batches()[Symbol.asyncIterator]().next();
    expect(await listed()).toContain(`${namespace}transient-restore${ONE_USE_SUFFIX}`);
    await reader.close();
    expect(await listed()).not.toContain(`${namespace}transient-restore${ONE_USE_SUFFIX}`);

    const durable = await log.consumer({ groupId: 'durable', topics: [TOPICS.trials] });
    const batch = (await durable.batches()[Symbol.asyncIterator]().next()).value!;
    await durable.commit([{ topic: batch.topic, partition: batch.partition, nextOffset: batch.lastOffset + 1 }]);
    await durable.close();
    expect(await listed()).toContain(`${namespace}durable`);
  });
});
