import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { Kafka } from 'kafkajs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ALL_TOPICS, TOPICS } from '../../schemas/topics.ts';
import type { EventLog } from '../../processors/ports.ts';
import { ONE_USE_SUFFIX, createKafkaEventLog } from './kafkaLog.ts';
import { fakeKafka } from './kafkajsStandIn.testkit.ts';
import { topicNames } from './topics.ts';

/**
 * The log's bookkeeping of its one-use groups, over a stand-in cluster whose admin keeps the groups as a broker does
 * (fix 15, docs/reliability.md): a group is made by kafkajs's setOffsets (a restore's start offsets) and is gone only
 * once deleted. Timers are vitest's: the consumer's 14 s of delete tries and the sweeps' 15 s are advanced, not waited.
 */
const NS = 'ns.';
const names = topicNames(NS);

const standInCluster = () => {
  /** Group id → members: what listGroups and describeGroups answer. */
  const groups = new Map<string, number>();
  let failDeletes = 0;
  const admin = {
    /** kafkajs's setOffsets joins the group, commits, waits out one idle fetch (5 s), leaves: the group stays. */
    setOffsetsMs: 5_000,
    connect: async () => {},
    disconnect: async () => {},
    listTopics: async () => ALL_TOPICS.map(names.physical),
    fetchTopicMetadata: async ({ topics }: { topics: string[] }) => ({
      topics: topics.map((name) => ({
        name,
        partitions: [0, 1, 2, 3].map((partitionId) => ({ partitionId, leader: 1 })),
      })),
    }),
    setOffsets: async ({ groupId }: { groupId: string }) => {
      groups.set(groupId, 0);
      if (admin.setOffsetsMs > 0) await new Promise((r) => setTimeout(r, admin.setOffsetsMs));
    },
    listGroups: async () => ({ groups: [...groups.keys()].map((groupId) => ({ groupId, protocolType: 'consumer' })) }),
    describeGroups: async (ids: string[]) => ({
      groups: ids.map((groupId) => ({ groupId, state: groups.get(groupId) ? 'Stable' : 'Empty', members: [] })),
    }),
    deleteGroups: async (ids: string[]) => {
      if (failDeletes-- > 0) throw new Error('The coordinator is not available');
      for (const id of ids) groups.delete(id);
    },
  };
  const kafka = {
    admin: () => admin,
    producer: () => ({ connect: async () => {}, disconnect: async () => {} }),
    consumer: fakeKafka.consumer,
  } as unknown as Kafka;
  let id = 0;
  const registry = { register: async () => ({ id: ++id }) } as unknown as SchemaRegistry;
  return {
    kafka,
    registry,
    admin,
    /** The one-use groups on the cluster, without the namespace. */
    oneUse: () => [...groups.keys()].filter((g) => g.endsWith(ONE_USE_SUFFIX)).map((g) => g.slice(NS.length)),
    /** The next `n` deletes fail (a coordinator away). */
    failDeletes: (n: number) => void (failDeletes = n),
  };
};

/** A restore's reader: a one-use group that starts at offsets (kafkajs's setOffsets makes the group). */
const restore = (log: EventLog, groupId = 'passk-gates.restore.vm-1') =>
  log.consumer({ groupId, topics: [TOPICS.decisions], transient: true, startAt: new Map([[0, 5]]) });

describe('the Kafka log’s one-use groups', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('a log closed while a one-use consumer opens waits for it, so its group is deleted (a stop during a restore)', async () => {
    const cluster = standInCluster();
    const log = await createKafkaEventLog({ kafka: cluster.kafka, registry: cluster.registry, namespace: NS });
    // the restore's reader, as readToEnd does: closed once it is open (the stop came meanwhile)
    const reading = restore(log).then((c) => c.close());
    await vi.advanceTimersByTimeAsync(1_000); // the SIGTERM, 1 s into the setOffsets
    expect(cluster.oneUse()).toEqual([`passk-gates.restore.vm-1${ONE_USE_SUFFIX}`]);
    // the process exits once its log is closed: nothing may be left for later
    const leftAtClose = log.close().then(() => cluster.oneUse());
    await vi.advanceTimersByTimeAsync(20_000);
    expect(await leftAtClose).toEqual([]);
    await reading;
  });

  it('a close does not wait longer than its bound for a consumer that does not open', async () => {
    const cluster = standInCluster();
    cluster.admin.setOffsetsMs = 3_600_000;
    const log = await createKafkaEventLog({ kafka: cluster.kafka, registry: cluster.registry, namespace: NS });
    void restore(log).catch(() => {});
    let closed = false;
    const closing = log.close().then(() => (closed = true));
    await vi.advanceTimersByTimeAsync(20_000);
    expect(closed).toBe(true);
    await closing;
  });

  it('a one-use group whose every delete failed is swept again while the process lives on', async () => {
    const cluster = standInCluster();
    cluster.admin.setOffsetsMs = 0;
    const log = await createKafkaEventLog({ kafka: cluster.kafka, registry: cluster.registry, namespace: NS });
    // a first restore, deleted; the start's sweeps (at once and 15 s later) are over before the second one
    await (await restore(log)).close();
    await vi.advanceTimersByTimeAsync(60_000);
    cluster.failDeletes(7); // every try of the consumer's 14 s
    const second = await restore(log, 'passk-gates.restore.vm-2');
    await vi.advanceTimersByTimeAsync(6_000);
    const closing = second.close();
    await vi.advanceTimersByTimeAsync(15_000);
    await closing;
    expect(cluster.oneUse()).toEqual([`passk-gates.restore.vm-2${ONE_USE_SUFFIX}`]);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(cluster.oneUse()).toEqual([]);
    await log.close();
  });

  it('a close makes one last try at a one-use group whose delete failed', async () => {
    const cluster = standInCluster();
    cluster.admin.setOffsetsMs = 0;
    const log = await createKafkaEventLog({ kafka: cluster.kafka, registry: cluster.registry, namespace: NS });
    await (await restore(log)).close();
    await vi.advanceTimersByTimeAsync(60_000); // the start's sweeps are over
    cluster.failDeletes(7);
    const consumer = await restore(log, 'passk-gates.restore.vm-2');
    const closing = consumer.close();
    await vi.advanceTimersByTimeAsync(14_500); // its last try fails at 14 s; the sweep it asks for comes 15 s later
    await closing;
    expect(cluster.oneUse()).toEqual([`passk-gates.restore.vm-2${ONE_USE_SUFFIX}`]);
    const logClosing = log.close();
    await vi.advanceTimersByTimeAsync(1_000);
    await logClosing;
    expect(cluster.oneUse()).toEqual([]);
  });
});
