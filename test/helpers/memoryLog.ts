import { jsonCodec } from '../../schemas/codec.ts';
import { EventTooLarge } from '../../schemas/errors.ts';
import type { PasskEvent } from '../../schemas/events/index.ts';
import { ALL_TOPICS, TOPICS, keyOf, topicOf, type Topic } from '../../schemas/topics.ts';
import { createDeadLetterWriter, decodeRecords } from '../../log/deadLetters.ts';
import { partitionOf } from '../../log/partitioner.ts';
import type { ConsumerOptions, DeadLetter, EventBatch, EventConsumer, EventLog } from '../../processors/ports.ts';

/**
 * An in-memory EventLog that honours the port, for unit tests of topologies: partitions by the real
 * partitioner, JSON bytes through the real codec (malformed bytes are dead-lettered), consumer groups
 * with leases handed over only after `onRevoked`, commits, lag, and pull-only `batches()` that wait on
 * appends (no timers); a publish over `maxEventBytes` is refused whole. `close()` ends its consumers;
 * the memory is the storage, so the same log can be used again (a restart). It passes the event-log
 * contract (test/contracts/memoryLog.unit.test.ts). Integration tests use the real adapters.
 */
interface Stored {
  key: string;
  value: Uint8Array;
  /** A record of the dead-letter topic: its letter. */
  letter?: DeadLetter;
}
interface Group {
  members: Map<string, MemberState>;
  leases: Map<string, string>; // "topic/partition" → member id
  committed: Map<string, number>;
}
interface MemberState {
  id: string;
  topics: readonly string[];
}

export interface MemoryLog extends EventLog {
  /** Records of a topic per partition (tests look inside). */
  records(topic: Topic): Stored[][];
  /** Hooks to slow down or fail publishes (sink/broker latency in tests). */
  beforePublish?: (events: readonly PasskEvent[]) => Promise<void>;
}

export const createMemoryLog = (
  opts: { partitions?: number; codec?: typeof jsonCodec; maxEventBytes?: number } = {},
): MemoryLog => {
  const partitions = opts.partitions ?? 4;
  const codec = opts.codec ?? jsonCodec;
  const maxEventBytes = opts.maxEventBytes ?? 1_000_000; // the embedded log's default
  const consumers = new Set<EventConsumer>();
  const topics = new Map<string, Stored[][]>(ALL_TOPICS.map((t) => [t, Array.from({ length: partitions }, () => [])]));
  const groups = new Map<string, Group>();
  const dead: DeadLetter[] = [];
  // once per source position, as the real logs do
  const deadLetter = createDeadLetterWriter({
    existing: async () => dead,
    append: async (letters) => {
      for (const l of letters) {
        dead.push(l);
        part(TOPICS.dlq)[partitionOf(l.source.key, partitions)]!.push({ key: l.source.key, value: l.value, letter: l });
      }
      notify();
    },
  });
  let wake: (() => void)[] = [];
  let nextMember = 0;
  const notify = () => {
    const w = wake;
    wake = [];
    for (const f of w) f();
  };
  const changed = () => new Promise<void>((resolve) => wake.push(resolve));
  const part = (topic: string) => topics.get(topic)!;
  const tp = (topic: string, p: number) => `${topic}/${p}`;

  /** All or nothing, as the embedded log's publish: a record over the maximum refuses the whole call. */
  const append = (records: readonly (Stored & { topic: Topic })[]) => {
    for (const r of records)
      if (r.value.byteLength > maxEventBytes) throw new EventTooLarge(r.value.byteLength, maxEventBytes, r.topic);
    for (const r of records) part(r.topic)[partitionOf(r.key, partitions)]!.push({ key: r.key, value: r.value });
    notify();
  };

  let placed: Promise<void> = Promise.resolve();
  const log: MemoryLog = {
    codec,
    records: (topic) => part(topic),
    publisher: {
      // overlapping calls append in call order, as the real logs' (EventPublisher)
      publish: async (events) => {
        const before = placed;
        let place = () => {};
        placed = new Promise<void>((resolve) => (place = resolve));
        try {
          await log.beforePublish?.(events);
          const encoded = await Promise.all(
            events.map(async (e) => ({ topic: topicOf(e), key: keyOf(e), value: await codec.encode(e) })),
          );
          await before;
          append(encoded);
        } finally {
          place();
        }
      },
      publishRaw: async (topic, records) => append(records.map((r) => ({ topic, key: r.key, value: r.value }))),
      publishDeadLetters: async (letters) => (await deadLetter(letters)).length,
      close: async () => {},
    },
    deadLetters: async () => [...dead],
    committed: async (groupId, topic) =>
      new Map(
        [...(groups.get(groupId)?.committed ?? [])]
          .filter(([k]) => k.startsWith(`${topic}/`))
          .map(([k, v]) => [Number(k.slice(topic.length + 1)), v]),
      ),
    close: async () => {
      for (const c of [...consumers]) await c.close();
      notify();
    },
    consumer: async (o: ConsumerOptions): Promise<EventConsumer> => {
      const group = groups.get(o.groupId) ?? { members: new Map(), leases: new Map(), committed: new Map() };
      groups.set(o.groupId, group);
      // a one-use reader's start, as Kafka's offsets set before it joins (its group never commits otherwise)
      // (deleted when it closes, as Kafka's and the embedded log's one-use groups leave no offsets to a next one)
      if (o.transient && group.members.size === 0) group.committed.clear();
      if (o.startAt && o.startAt.size > 0) {
        if (!o.transient || o.topics.length !== 1) throw new Error('startAt is for a transient reader of one topic');
        for (const [partition, offset] of o.startAt) group.committed.set(tp(o.topics[0]!, partition), offset);
      }
      const me: MemberState = { id: `m${String(nextMember++).padStart(4, '0')}`, topics: o.topics };
      group.members.set(me.id, me);
      notify();
      const positions = new Map<string, { topic: string; partition: number; position: number }>();
      let closed = false;
      let cursor = 0;

      const desired = (): Set<string> => {
        const ids = [...group.members.keys()].sort();
        const mine = new Set<string>();
        let turn = 0;
        for (const topic of [...new Set([...group.members.values()].flatMap((m) => m.topics))].sort())
          for (let p = 0; p < partitions; p++) {
            const subs = ids.filter((id) => group.members.get(id)!.topics.includes(topic));
            if (subs[turn++ % subs.length] === me.id && o.topics.includes(topic as Topic)) mine.add(tp(topic, p));
          }
        return mine;
      };

      const rebalance = async () => {
        const want = desired();
        const revoke = [...positions.values()].filter((x) => !want.has(tp(x.topic, x.partition)));
        if (revoke.length > 0) {
          await o.onRevoked?.(revoke.map(({ topic, partition }) => ({ topic, partition })));
          for (const x of revoke) {
            positions.delete(tp(x.topic, x.partition));
            group.leases.delete(tp(x.topic, x.partition));
          }
          notify();
        }
        const added: { topic: string; partition: number }[] = [];
        for (const key of want) {
          if (positions.has(key)) continue;
          const owner = group.leases.get(key);
          if (owner !== undefined && owner !== me.id && group.members.has(owner)) continue; // still held
          const [topic, p] = [key.slice(0, key.lastIndexOf('/')), Number(key.slice(key.lastIndexOf('/') + 1))];
          group.leases.set(key, me.id);
          added.push({ topic, partition: p });
        }
        if (added.length === 0) return;
        await o.onAssigned?.(added);
        for (const a of added) {
          const key = tp(a.topic, a.partition);
          const start =
            group.committed.get(key) ?? (o.fromBeginning === false ? part(a.topic)[a.partition]!.length : 0);
          positions.set(key, { ...a, position: start });
        }
      };

      const nextBatch = async (): Promise<EventBatch | undefined> => {
        const owned = [...positions.values()].sort((a, b) =>
          a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1,
        );
        for (let i = 0; i < owned.length; i++) {
          const x = owned[(cursor + i) % owned.length]!;
          const records = part(x.topic)[x.partition]!;
          if (x.position >= records.length) continue;
          cursor = (cursor + i + 1) % owned.length;
          const slice = records.slice(x.position, x.position + (o.maxBatch ?? 1000));
          if (x.topic === TOPICS.dlq) {
            const lastOffset = x.position + slice.length - 1;
            x.position = lastOffset + 1;
            const letters = slice.map((r) => r.letter!);
            return {
              topic: x.topic,
              partition: x.partition,
              events: [],
              letters,
              lastOffset,
              highWatermark: records.length,
            };
          }
          const { events, dead: refused } = await decodeRecords(
            codec,
            slice.map((r, i2) => ({
              ...r,
              topic: x.topic,
              partition: x.partition,
              offset: x.position + i2,
              timestamp: 0,
            })),
            o.keys,
          );
          if (refused.length > 0) {
            await deadLetter(refused);
            await o.onDeadLetters?.(refused);
          }
          const lastOffset = x.position + slice.length - 1;
          x.position = lastOffset + 1;
          const caughtUp = owned.every((y) => y.position >= part(y.topic)[y.partition]!.length);
          return {
            topic: x.topic,
            partition: x.partition,
            events,
            lastOffset,
            highWatermark: records.length,
            caughtUp,
          };
        }
        return undefined;
      };

      async function* batches(): AsyncGenerator<EventBatch> {
        while (!closed) {
          const wait = changed();
          await rebalance();
          const batch = await nextBatch();
          if (closed) return;
          if (batch) yield batch;
          else await wait;
        }
      }

      const consumer: EventConsumer = {
        batches,
        commit: async (list) => {
          for (const p of list) {
            const key = tp(p.topic, p.partition);
            if (group.leases.get(key) !== me.id)
              throw Object.assign(new Error(`commit rejected: ${key} not owned`), { name: 'CommitRejected' });
            group.committed.set(key, p.nextOffset);
          }
        },
        committed: async (topic) =>
          new Map(
            [...group.committed]
              .filter(([k]) => k.startsWith(`${topic}/`))
              .map(([k, v]) => [Number(k.slice(topic.length + 1)), v]),
          ),
        lag: async () =>
          o.topics.flatMap((topic) =>
            part(topic).map((records, partition) => ({
              topic,
              partition,
              lag: records.length - (group.committed.get(tp(topic, partition)) ?? 0),
            })),
          ),
        close: async () => {
          if (closed) return;
          closed = true;
          group.members.delete(me.id);
          for (const [k, v] of [...group.leases]) if (v === me.id) group.leases.delete(k);
          consumers.delete(consumer);
          notify();
        },
      };
      consumers.add(consumer);
      return consumer;
    },
  };
  return log;
};
