import { KafkaJSProtocolError, type Kafka } from 'kafkajs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ALL_TOPICS, TOPICS } from '../../schemas/topics.ts';
import type { EventConsumer, EventLog } from '../../processors/ports.ts';
import { ONE_USE_SUFFIX, createKafkaEventLog } from './kafkaLog.ts';
import { fakeKafka } from './kafkajsStandIn.testkit.ts';
import { topicNames } from './topics.ts';
import type { RegistryClient } from './registryClient.ts';

/**
 * The log's bookkeeping of its one-use groups, over a stand-in cluster whose admin keeps the groups as a broker does
 * (fix 15, docs/reliability.md): a group is made when a reader joins it and is gone only once deleted; a restore's
 * start offsets are sought after the join, never committed. Timers are vitest's: the consumer's 14 s of delete tries
 * and the sweeps' 15 s are advanced, not waited.
 */
const NS = 'ns.';
const names = topicNames(NS);

const standInCluster = () => {
  /** Group id → members: what listGroups and describeGroups answer. */
  const groups = new Map<string, number>();
  /** Group id → its committed offsets (partition → offset): what fetchOffsets answers. passk's readers commit none. */
  const committed = new Map<string, Map<number, number>>();
  /** What each reader sought, by group id, in the order of its calls. */
  const seeks = new Map<string, { topic: string; partition: number; offset: string }[]>();
  let failDeletes = 0;
  let failOffsetReads = 0;
  let deleteCalls = 0;
  const dlq = names.physical(TOPICS.dlq);
  const admin = {
    connect: async () => {},
    disconnect: async () => {},
    listTopics: async () => ALL_TOPICS.map(names.physical),
    fetchTopicMetadata: async ({ topics }: { topics: string[] }) => ({
      topics: topics.map((name) => ({
        name,
        partitions: [0, 1, 2, 3].map((partitionId) => ({ partitionId, leader: 1 })),
      })),
    }),
    /** Every topic holds 10 records a partition; the DLQ one letter, in partition 0. */
    fetchTopicOffsets: async (topic: string) =>
      [0, 1, 2, 3].map((partition) => {
        const high = topic !== dlq ? 10 : partition === 0 ? 1 : 0;
        return { partition, offset: String(high), high: String(high), low: '0' };
      }),
    fetchOffsets: async ({ groupId, topics }: { groupId: string; topics: string[] }) => {
      if (failOffsetReads-- > 0)
        throw new KafkaJSProtocolError(
          Object.assign(new Error('This is not the correct coordinator for this group'), {
            type: 'NOT_COORDINATOR_FOR_GROUP',
            code: 16,
            retriable: true,
          }),
        );
      return topics.map((topic) => ({
        topic,
        partitions: [0, 1, 2, 3].map((partition) => ({
          partition,
          offset: String(committed.get(groupId)?.get(partition) ?? -1),
          metadata: null,
        })),
      }));
    },
    listGroups: async () => ({ groups: [...groups.keys()].map((groupId) => ({ groupId, protocolType: 'consumer' })) }),
    describeGroups: async (ids: string[]) => ({
      groups: ids.map((groupId) => ({ groupId, state: groups.get(groupId) ? 'Stable' : 'Empty', members: [] })),
    }),
    /** As a broker: a group with members is not deleted (NON_EMPTY_GROUP), the others are. */
    deleteGroups: async (ids: string[]) => {
      deleteCalls++;
      if (failDeletes-- > 0) throw new Error('The coordinator is not available');
      const held = ids.filter((id) => groups.get(id));
      for (const id of ids.filter((i) => !held.includes(i))) {
        groups.delete(id);
        committed.delete(id);
      }
      if (held.length > 0) throw new Error(`NON_EMPTY_GROUP: ${held.join(', ')}`);
    },
  };
  /** The DLQ reader: joins its group when it runs, reads the one letter after `dlqReadMs`, leaves at its disconnect. */
  const dlqReader = ({ groupId }: { groupId: string }) => ({
    on: () => {},
    events: { GROUP_JOIN: 'consumer.group_join', CRASH: 'consumer.crash' },
    connect: async () => {},
    subscribe: async () => {},
    run: async ({ eachBatch }: { eachBatch: (p: unknown) => Promise<void> }) => {
      groups.set(groupId, 1);
      await new Promise((r) => setTimeout(r, cluster.dlqReadMs));
      await eachBatch({
        batch: {
          topic: dlq,
          partition: 0,
          messages: [{ offset: '0', key: null, value: Buffer.from('x'), headers: {} }],
        },
      });
    },
    stop: async () => {},
    disconnect: async () => void (groups.has(groupId) && groups.set(groupId, 0)),
  });
  /**
   * A reader: its connect takes `connectMs`; it joins its group when it runs (the group is made then, with every
   * partition of the decisions assigned to it: GROUP_JOIN), and leaves at its stop. It fetches nothing.
   */
  const reader = ({ groupId }: { groupId: string }) => {
    const on = new Map<string, (e: unknown) => void>();
    const standIn = fakeKafka.consumer({ groupId });
    const left = async () => void (groups.has(groupId) && groups.set(groupId, 0));
    return {
      ...standIn,
      on: (event: string, f: (e: unknown) => void) => void on.set(event, f),
      connect: async () => {
        if (cluster.connectMs > 0) await new Promise((r) => setTimeout(r, cluster.connectMs));
      },
      run: async () => {
        groups.set(groupId, 1);
        const memberAssignment = { [names.physical(TOPICS.decisions)]: [0, 1, 2, 3] };
        on.get(standIn.events.GROUP_JOIN)?.({ payload: { memberId: `${groupId}-m1`, memberAssignment } });
      },
      seek: (s: { topic: string; partition: number; offset: string }) =>
        void seeks.set(groupId, [...(seeks.get(groupId) ?? []), s]),
      stop: left,
      disconnect: left,
    };
  };
  const kafka = {
    admin: () => admin,
    producer: () => ({ connect: async () => {}, disconnect: async () => {} }),
    consumer: (c: { groupId: string }) => (c.groupId.includes('dlq-reader') ? dlqReader(c) : reader(c)),
  } as unknown as Kafka;
  let id = 0;
  const registry = { register: async () => ({ id: ++id }) } as unknown as RegistryClient;
  const cluster = {
    kafka,
    registry,
    admin,
    dlqReadMs: 3_000,
    /** How long a reader's connect takes. */
    connectMs: 0,
    /** What the reader of group `g` (without the namespace) sought. */
    seeks: (g: string) => seeks.get(NS + g) ?? [],
    /** The one-use groups on the cluster, without the namespace. */
    oneUse: () => [...groups.keys()].filter((g) => g.endsWith(ONE_USE_SUFFIX)).map((g) => g.slice(NS.length)),
    /** The next `n` deletes fail (a coordinator away). */
    failDeletes: (n: number) => void (failDeletes = n),
    /** The next `n` offsets reads fail as a moved coordinator answers (a broker killed). */
    failOffsetReads: (n: number) => void (failOffsetReads = n),
    /** How many deleteGroups calls the cluster had. */
    deleteCalls: () => deleteCalls,
    /** Group `g` (without the namespace) has `n` members now: a consumer joined, left, or a dead one's session ended. */
    members: (g: string, n: number) => void groups.set(NS + g, n),
  };
  return cluster;
};

/** A restore's reader: a one-use group that starts at offsets (sought once it joins). */
const restore = (log: EventLog, groupId = 'passk-gates.restore.vm-1') =>
  log.consumer({ groupId, topics: [TOPICS.decisions], transient: true, startAt: new Map([[0, 5]]) });
/** A reader's group joined: its first pull starts kafkajs's run (the pull itself waits for a batch that never comes). */
const join = (c: EventConsumer) => void c.batches()[Symbol.asyncIterator]().next();

describe('the Kafka log’s one-use groups', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('a log closed while a one-use consumer opens waits for it and closes it (a stop during a restore)', async () => {
    const cluster = standInCluster();
    cluster.connectMs = 5_000;
    const log = await createKafkaEventLog({ kafka: cluster.kafka, registry: cluster.registry, namespace: NS });
    // the restore's reader, as readToEnd does: closed once it is open (the stop came meanwhile)
    let open = false;
    const reading = restore(log).then((c) => ((open = true), c.close()));
    await vi.advanceTimersByTimeAsync(1_000); // the SIGTERM, 1 s into the connect
    expect(cluster.oneUse()).toEqual([]); // no group before the join: nothing is set before it
    const closing = log.close();
    await vi.advanceTimersByTimeAsync(20_000);
    await closing;
    expect(open).toBe(true); // the close waited for the open
    expect(cluster.oneUse()).toEqual([]);
    await reading;
  });

  it('a close does not wait longer than its bound for a consumer that does not open', async () => {
    const cluster = standInCluster();
    cluster.connectMs = 3_600_000;
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
    const log = await createKafkaEventLog({ kafka: cluster.kafka, registry: cluster.registry, namespace: NS });
    // a first restore, deleted; the start's sweeps (at once and 15 s later) are over before the second one
    await (await restore(log)).close();
    await vi.advanceTimersByTimeAsync(60_000);
    cluster.failDeletes(7); // every try of the consumer's 14 s
    const second = await restore(log, 'passk-gates.restore.vm-2');
    join(second);
    await vi.advanceTimersByTimeAsync(6_000);
    const closing = second.close();
    await vi.advanceTimersByTimeAsync(15_000);
    await closing;
    expect(cluster.oneUse()).toEqual([`passk-gates.restore.vm-2${ONE_USE_SUFFIX}`]);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(cluster.oneUse()).toEqual([]);
    // and forgotten once swept: the close has no group left to try
    const deletes = cluster.deleteCalls();
    await log.close();
    expect(cluster.deleteCalls()).toBe(deletes);
  });

  it('a close makes one last try at a one-use group whose delete failed', async () => {
    const cluster = standInCluster();
    const log = await createKafkaEventLog({ kafka: cluster.kafka, registry: cluster.registry, namespace: NS });
    await (await restore(log)).close();
    await vi.advanceTimersByTimeAsync(60_000); // the start's sweeps are over
    cluster.failDeletes(7);
    const consumer = await restore(log, 'passk-gates.restore.vm-2');
    join(consumer);
    await vi.advanceTimersByTimeAsync(10);
    const closing = consumer.close();
    await vi.advanceTimersByTimeAsync(14_500); // its last try fails at 14 s; the sweep it asks for comes 15 s later
    await closing;
    expect(cluster.oneUse()).toEqual([`passk-gates.restore.vm-2${ONE_USE_SUFFIX}`]);
    const logClosing = log.close();
    await vi.advanceTimersByTimeAsync(1_000);
    await logClosing;
    expect(cluster.oneUse()).toEqual([]);
  });

  it('a restore’s reader makes no group before it joins, counts from its start offsets and seeks them at the join', async () => {
    const cluster = standInCluster();
    const a = await createKafkaEventLog({ kafka: cluster.kafka, registry: cluster.registry, namespace: NS });
    const b = await createKafkaEventLog({ kafka: cluster.kafka, registry: cluster.registry, namespace: NS });
    // process A: a restore's reader, open, not joined: no group, so no other process's sweep can take its offsets
    const reader = await restore(a, 'passk-gates.restore.A');
    const group = `passk-gates.restore.A${ONE_USE_SUFFIX}`;
    const lagA = async () => (await reader.lag()).find((l) => l.partition === 0)?.lag;
    expect(await lagA()).toBe(5); // 10 - 5: readToEnd's end is 5 + 5
    expect(await reader.committed(TOPICS.decisions)).toEqual(new Map([[0, 5]])); // as if committed there
    // process B opens a one-use consumer: its first sweep comes now, while A reads its lag before it joins
    const other = await b.consumer({ groupId: 'passk-gates.restore.B', topics: [TOPICS.decisions], transient: true });
    await vi.advanceTimersByTimeAsync(10);
    expect(cluster.oneUse()).toEqual([]);
    expect(cluster.seeks('passk-gates.restore.A' + ONE_USE_SUFFIX)).toEqual([]);
    // A joins: partition 0 is sought to its start, the others start from the beginning; B's second sweep finds a member
    join(reader);
    await vi.advanceTimersByTimeAsync(10);
    expect(cluster.seeks(group)).toEqual([{ topic: names.physical(TOPICS.decisions), partition: 0, offset: '5' }]);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(cluster.oneUse()).toEqual([group]);
    expect(await lagA()).toBe(5);
    await reader.close();
    expect(cluster.oneUse()).toEqual([]);
    await other.close();
    await a.close();
    await b.close();
  });

  it('a killed process’s one-use group, empty at the start’s first sweep, is deleted by its second', async () => {
    const cluster = standInCluster();
    const dead = `passk-gates.restore.dead${ONE_USE_SUFFIX}`;
    cluster.members(dead, 0); // killed more than a session ago
    const log = await createKafkaEventLog({ kafka: cluster.kafka, registry: cluster.registry, namespace: NS });
    const c = await log.consumer({ groupId: 'passk-gates.restore.new', topics: [TOPICS.decisions], transient: true });
    await vi.advanceTimersByTimeAsync(10);
    expect(cluster.oneUse()).toEqual([dead]); // seen empty once
    await vi.advanceTimersByTimeAsync(15_000);
    expect(cluster.oneUse()).toEqual([]);
    await c.close();
    await log.close();
  });

  it('a killed process’s one-use group still held by its member at the start is deleted by a later sweep', async () => {
    const cluster = standInCluster();
    const dead = `passk-gates.restore.dead${ONE_USE_SUFFIX}`;
    cluster.members(dead, 1); // killed a moment ago: its member is there until its session expires
    const log = await createKafkaEventLog({ kafka: cluster.kafka, registry: cluster.registry, namespace: NS });
    const c = await log.consumer({ groupId: 'passk-gates.restore.new', topics: [TOPICS.decisions], transient: true });
    await vi.advanceTimersByTimeAsync(10_000);
    cluster.members(dead, 0); // the session expired
    await vi.advanceTimersByTimeAsync(5_010); // the second sweep finds it empty, first time
    expect(cluster.oneUse()).toEqual([dead]);
    await vi.advanceTimersByTimeAsync(15_000); // its retry, 15 s later
    expect(cluster.oneUse()).toEqual([]);
    await c.close();
    await log.close();
  });

  it('a log closed while it reads the DLQ waits for the read, so its reader’s group is deleted', async () => {
    const cluster = standInCluster();
    const log = await createKafkaEventLog({ kafka: cluster.kafka, registry: cluster.registry, namespace: NS });
    const letters = log.deadLetters();
    await vi.advanceTimersByTimeAsync(1_000); // the reader joined its group; the stop comes
    expect(cluster.oneUse()).toHaveLength(1);
    const leftAtClose = log.close().then(() => cluster.oneUse());
    await vi.advanceTimersByTimeAsync(20_000);
    expect(await leftAtClose).toEqual([]);
    expect(await letters).toHaveLength(1);
  });

  it('the log’s committed offsets are read again while a coordinator moves (a broker killed), not failed at once', async () => {
    const cluster = standInCluster();
    const log = await createKafkaEventLog({ kafka: cluster.kafka, registry: cluster.registry, namespace: NS });
    cluster.failOffsetReads(3);
    const read = log.committed('passk-trials', TOPICS.trials);
    await vi.advanceTimersByTimeAsync(10_000); // the first three waits of the offsets reads' tries
    expect(await read).toEqual(new Map());
    await log.close();
  });
});
