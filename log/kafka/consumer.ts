import type { Admin, Consumer, Kafka } from 'kafkajs';
import type { EventCodec } from '../../schemas/codec.ts';
import { TOPICS } from '../../schemas/topics.ts';
import type { ConsumerOptions, EventBatch, EventConsumer, RawRecord } from '../../processors/ports.ts';
import { decodeRecords, toDeadLetterRecord } from '../deadLetters.ts';
import { CommitRejected, ConsumerMisuse } from '../errors.ts';
import { FENCED_COMMIT_TYPES, classifyKafkaError, protocolTypes } from './errors.ts';
import type { KafkaPublisher } from './publisher.ts';
import { createHandoffQueue } from './handoffQueue.ts';
import type { TopicNames } from './topics.ts';

type TP = { topic: string; partition: number };
type Item =
  | { kind: 'assignment'; assignment: TP[] }
  | { kind: 'batch'; batch: EventBatch; done: () => void }
  | { kind: 'crash'; error: unknown };

const tpKey = (tp: TP) => `${tp.topic}\u0000${tp.partition}`;

/**
 * A kafkajs group consumer behind the port. `eachBatch` hands each chunk of a fetched batch to the
 * iterator and waits until the caller asks for the next one, so nothing more is fetched or processed
 * while the caller is busy (heartbeats go on). Offsets are committed only by `commit()`
 * (autoCommit off). kafkajs has no hook before a rebalance, so `onRevoked`/`onAssigned` run after
 * it, before the first batch of the new assignment; a commit for a partition this member no longer
 * owns is refused with `CommitRejected` (by this adapter, or by the broker's generation check).
 */
export const createKafkaConsumer = async (deps: {
  kafka: Kafka;
  admin: Admin;
  codec: EventCodec;
  publisher: KafkaPublisher;
  names: TopicNames;
  groupId: string;
  options: ConsumerOptions;
  maxBytesPerPartition: number;
  onClose: () => void;
}): Promise<EventConsumer> => {
  const { options, names, codec } = deps;
  if (options.topics.includes(TOPICS.dlq)) throw new ConsumerMisuse(`${TOPICS.dlq} holds dead letters, not events: read it with deadLetters()`);
  const maxBatch = options.maxBatch ?? 1000;
  const abort = new AbortController();
  const queue = createHandoffQueue<Item>(abort.signal);
  /** What the broker assigned at the last join (for fencing commits); `announced` is what the caller was told. */
  let owned = new Set<string>();
  const announced = new Map<string, TP>();
  let iterating = false;

  const consumer: Consumer = deps.kafka.consumer({
    groupId: deps.groupId,
    allowAutoTopicCreation: false,
    maxBytesPerPartition: deps.maxBytesPerPartition,
    sessionTimeout: 30_000,
    heartbeatInterval: 3_000,
    // an idle fetch waits at most this long at the broker; close() waits for it (kafkajs default 5 s)
    maxWaitTimeInMs: 1_000,
    // A crash while close() disconnects (e.g. "write after end") would otherwise restart the consumer 300 ms
    // later: a member nobody reads from rejoins the group and holds partitions, so the group never catches up.
    retry: { restartOnFailure: async () => !abort.signal.aborted },
  });
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const assignment = Object.entries(payload.memberAssignment).flatMap(([physical, partitions]) =>
      partitions.map((partition) => ({ topic: names.logical(physical), partition })),
    );
    owned = new Set(assignment.map(tpKey));
    queue.push({ kind: 'assignment', assignment });
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (!payload.restart) queue.push({ kind: 'crash', error: payload.error });
  });

  try {
    await consumer.connect();
    await consumer.subscribe({ topics: options.topics.map(names.physical), fromBeginning: options.fromBeginning ?? true });
  } catch (e) {
    await consumer.disconnect().catch(() => {});
    throw classifyKafkaError(e, `kafka consumer ${deps.groupId}: connect`);
  }

  /** Set when a heartbeat hears of a rebalance: hand over no more chunks, so kafkajs rejoins soon. */
  let rebalancing = false;
  const deliver = (batch: EventBatch, heartbeat: () => Promise<void>): Promise<void> =>
    new Promise<void>((resolve) => {
      // keep the membership alive while the caller works on the batch
      const beat = setInterval(() => {
        if (!rebalancing) void heartbeat().catch((e: unknown) => (rebalancing = protocolTypes(e).includes('REBALANCE_IN_PROGRESS')));
      }, 3_000);
      const done = () => {
        clearInterval(beat);
        abort.signal.removeEventListener('abort', done);
        resolve();
      };
      abort.signal.addEventListener('abort', done, { once: true });
      queue.push({ kind: 'batch', batch, done });
    });

  // not awaited: kafkajs's run() resolves only after the first join, which waits for the other
  // members of the group to rejoin, and they may be waiting for their callers
  consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: 1,
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
      const topic = names.logical(batch.topic);
      rebalancing = false;
      for (let i = 0; i < batch.messages.length && !abort.signal.aborted; i += maxBatch) {
        if (!isRunning() || isStale() || rebalancing) return;
        const records: RawRecord[] = batch.messages.slice(i, i + maxBatch).map((m) => ({
          topic,
          partition: batch.partition,
          offset: Number(m.offset),
          key: m.key?.toString('utf8') ?? '',
          value: m.value ?? new Uint8Array(0),
          timestamp: Number(m.timestamp),
        }));
        const { events, dead } = await decodeRecords(codec, records);
        if (dead.length > 0) await deps.publisher.send(dead.map((d) => ({ topic: TOPICS.dlq, ...toDeadLetterRecord(d) })));
        const last = records.at(-1)!;
        await deliver({ topic, partition: batch.partition, events, lastOffset: last.offset, highWatermark: Number(batch.highWatermark) }, heartbeat);
        resolveOffset(String(last.offset));
      }
    },
  }).catch((error: unknown) => queue.push({ kind: 'crash', error }));

  async function* batches(): AsyncGenerator<EventBatch> {
    if (iterating) throw new ConsumerMisuse('batches() is already being iterated on this consumer');
    iterating = true;
    let pending: (() => void) | undefined;
    try {
      for (;;) {
        pending?.();
        pending = undefined;
        const item = await queue.shift();
        if (!item) return;
        if (item.kind === 'crash') throw classifyKafkaError(item.error, `kafka consumer ${deps.groupId}`);
        if (item.kind === 'assignment') {
          const next = new Map(item.assignment.map((tp) => [tpKey(tp), tp]));
          const revoked = [...announced].filter(([k]) => !next.has(k)).map(([, tp]) => tp);
          const added = [...next].filter(([k]) => !announced.has(k)).map(([, tp]) => tp);
          for (const tp of revoked) announced.delete(tpKey(tp));
          if (revoked.length > 0) await options.onRevoked?.(revoked);
          for (const tp of added) announced.set(tpKey(tp), tp);
          if (added.length > 0) await options.onAssigned?.(added);
          continue;
        }
        pending = item.done;
        yield item.batch;
      }
    } finally {
      pending?.();
    }
  }

  return {
    batches,
    commit: async (positions) => {
      if (positions.length === 0) return;
      const notOwned = positions.filter((p) => !owned.has(tpKey(p)));
      if (notOwned.length > 0) throw new CommitRejected(notOwned.map(({ topic, partition }) => ({ topic, partition })));
      try {
        await consumer.commitOffsets(positions.map((p) => ({ topic: names.physical(p.topic), partition: p.partition, offset: String(p.nextOffset) })));
      } catch (e) {
        if (protocolTypes(e).some((t) => FENCED_COMMIT_TYPES.has(t)))
          throw new CommitRejected(positions.map(({ topic, partition }) => ({ topic, partition })), e);
        throw classifyKafkaError(e, `kafka consumer ${deps.groupId}: commit`);
      }
    },
    committed: async (topic) => {
      const [offsets] = await deps.admin.fetchOffsets({ groupId: deps.groupId, topics: [names.physical(topic)] });
      return new Map((offsets?.partitions ?? []).filter((p) => Number(p.offset) >= 0).map((p) => [p.partition, Number(p.offset)]));
    },
    lag: async () => {
      const out: { topic: string; partition: number; lag: number }[] = [];
      const committed = await deps.admin.fetchOffsets({ groupId: deps.groupId, topics: options.topics.map(names.physical) });
      for (const { topic: physical, partitions } of committed) {
        const high = new Map((await deps.admin.fetchTopicOffsets(physical)).map((p) => [p.partition, Number(p.high)]));
        for (const p of partitions)
          out.push({ topic: names.logical(physical), partition: p.partition, lag: (high.get(p.partition) ?? 0) - Math.max(Number(p.offset), 0) });
      }
      return out;
    },
    close: async () => {
      if (abort.signal.aborted) return;
      abort.abort();
      await consumer.disconnect();
      deps.onClose();
    },
  };
};
