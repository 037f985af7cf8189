import type { Admin, Consumer, Kafka } from 'kafkajs';
import type { EventCodec } from '../../schemas/codec.ts';
import { TOPICS, tpKey } from '../../schemas/topics.ts';
import type { ConsumerOptions, DeadLetter, EventBatch, EventConsumer, RawRecord } from '../../processors/ports.ts';
import { decodeRecords, fromDeadLetterRecord } from '../deadLetters.ts';
import { CommitRejected, ConsumerMisuse } from '../errors.ts';
import { FENCED_COMMIT_TYPES, classifyKafkaError, protocolTypes } from './errors.ts';
import { createHandoffQueue } from './handoffQueue.ts';
import { adminRead, coveringFor, tryEndOffsets, type Leaders } from './offsets.ts';
import type { TopicNames } from './topics.ts';

type TP = { topic: string; partition: number };
type Item =
  | { kind: 'assignment'; assignment: TP[] }
  | { kind: 'batch'; batch: EventBatch; done: () => void }
  | { kind: 'crash'; error: unknown };

/**
 * How long the broker waits for a silent member before it gives the member's partitions to others: the time a
 * processor restarted right after a SIGKILL waits before it reads again (the dead member holds its partitions until
 * then; kafkajs 2.2.4 has no static membership to take them over at once). 10 s, the embedded log's session too,
 * instead of kafkajs's 30 s: members heartbeat every 3 s, also while the caller works on a batch, so only an event
 * loop blocked for 10 s looks dead, and that costs a rebalance and re-reads, never lost or double-counted events.
 */
const SESSION_TIMEOUT_MS = 10_000;
/** kafkajs's rebalance timeout (its default): the longest a join waits for the group's other members. */
const REBALANCE_TIMEOUT_MS = 60_000;
/** How long close() waits for a join in flight before it disconnects anyway (the join then crashes). */
const JOIN_WAIT_MS = REBALANCE_TIMEOUT_MS + 5_000;

/**
 * The waits between a closing one-use consumer's tries to delete its group: 14 s in all, long enough for a
 * coordinator's broker that was killed to be replaced (three tries 1 s apart were not, at load 38: the fault
 * campaign, seed 13007959, `check-….one-use` left behind after a kill-broker).
 */
const DELETE_WAITS_MS = [1_000, 1_000, 2_000, 2_000, 4_000, 4_000];
/** kafkajs's DeleteGroups refusal because the group does not exist (each group's error is in `groups`). */
const groupNotFound = (e: unknown): boolean =>
  [e, ...((e as { groups?: { error?: unknown }[] } | undefined)?.groups ?? []).map((g) => g.error)].some((x) =>
    protocolTypes(x).includes('GROUP_ID_NOT_FOUND'),
  );

const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Resolves when `p` settles or after `ms`, whichever comes first; leaves no timer behind. */
export const settledWithin = async (p: Promise<unknown>, ms: number): Promise<void> => {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p.catch(() => {}), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
};

/** A record of the dead-letter topic as its letter (headers as text). */
export const letterOfMessage = (m: {
  key: Buffer | null;
  value: Buffer | null;
  headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
}): DeadLetter => {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.headers ?? {}))
    if (v !== undefined) headers[k] = Buffer.isBuffer(v) ? v.toString('utf8') : String(v);
  return fromDeadLetterRecord({ key: m.key?.toString('utf8') ?? '', value: m.value ?? new Uint8Array(0), headers });
};

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
  /** Appends dead letters to the DLQ, once per source position (`createDeadLetterWriter`). */
  deadLetter: (letters: readonly DeadLetter[]) => Promise<unknown>;
  names: TopicNames;
  /** Partition count of a topic (logical name), as the log found it at open: what an offsets read must cover. */
  partitionsOf: (topic: string) => number;
  groupId: string;
  options: ConsumerOptions;
  maxBytesPerPartition: number;
  /**
   * Called once the consumer has left its group; `deleted`: a one-use group is known to be gone (deleted, or never
   * made). False when every try failed: the group may still be on the broker (the log deletes it later).
   */
  onClose: (deleted: boolean) => void;
  /** Waits between retries of an offsets read or of a one-use group's delete. @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
}): Promise<EventConsumer> => {
  const { options, names, codec } = deps;
  const sleep = deps.sleep ?? wait;
  const covering = coveringFor(deps.partitionsOf);
  if (options.topics.includes(TOPICS.dlq) && options.topics.length > 1)
    throw new ConsumerMisuse(`${TOPICS.dlq} holds dead letters, not events: read it alone`);
  const maxBatch = options.maxBatch ?? 1000;
  const abort = new AbortController();
  const queue = createHandoffQueue<Item>(abort.signal);
  /** What the broker assigned at the last join (for fencing commits); `announced` is what the caller was told. */
  let owned = new Set<string>();
  const announced = new Map<string, TP>();
  /**
   * Per partition (tpKey), whether the last chunk handed over reached the partition's end as of its fetch; with every
   * owned partition so, a batch says `caughtUp`. A partition nothing was read from (empty, or committed at its end)
   * is not known to be at its end: the batch does not say so, and the caller's unit closes at its window as before.
   */
  const atEnd = new Map<string, boolean>();
  let iterating = false;

  const consumer: Consumer = deps.kafka.consumer({
    groupId: deps.groupId,
    allowAutoTopicCreation: false,
    maxBytesPerPartition: deps.maxBytesPerPartition,
    sessionTimeout: SESSION_TIMEOUT_MS,
    rebalanceTimeout: REBALANCE_TIMEOUT_MS,
    heartbeatInterval: 3_000,
    // an idle fetch waits at most this long at the broker; close() waits for it (kafkajs default 5 s): a second for a
    // long-lived consumer, less for a reader that closes at an end it knows (ConsumerOptions.idleWaitMs)
    maxWaitTimeInMs: options.idleWaitMs ?? 1_000,
    // A crash once close() began (a join cut short by the disconnect) would otherwise restart the consumer
    // 300 ms later: a member nobody reads from rejoins the group and holds partitions, so it never catches up.
    retry: { restartOnFailure: async () => !abort.signal.aborted },
  });
  if (options.startAt && (!options.transient || options.topics.length !== 1))
    throw new ConsumerMisuse('startAt is for a transient reader of one topic');
  for (const [partition, offset] of options.startAt ?? [])
    if (!Number.isSafeInteger(offset) || offset < 0)
      throw new ConsumerMisuse(`startAt: partition ${partition} starts at ${offset}, not an offset`);
  const startTopic = options.startAt && options.startAt.size > 0 ? names.physical(options.topics[0]!) : undefined;
  /**
   * A transient reader's start offsets (`startAt`), taken at each join: every assigned partition that has one is
   * sought there, before the fetch that follows the join (kafkajs applies a pending seek at the start of its next
   * fetch and drops an answer in flight for that partition), the others start as `fromBeginning` says. The group holds
   * no offsets: kafkajs's `admin.setOffsets` did that before, with a join of its own and one idle fetch (5 s per
   * restore; an `Empty` group holding them until the reader joined: fix 16, docs/reliability.md). With autoCommit off,
   * kafkajs's seek commits nothing, it only moves the position. Taken again at a join after a rebalance, as the
   * offsets setOffsets left were: such a reader never commits, so a member that joins again reads from its start.
   */
  const seekToStart = (memberAssignment: Record<string, number[]>) => {
    if (startTopic === undefined) return;
    for (const partition of memberAssignment[startTopic] ?? []) {
      const offset = options.startAt!.get(partition);
      if (offset !== undefined) consumer.seek({ topic: startTopic, partition, offset: String(offset) });
    }
  };
  /** Where a partition of this reader starts when its group committed nothing there: its `startAt`, if any. */
  const startOf = (physical: string, partition: number, committed: number): number =>
    committed >= 0 || physical !== startTopic ? committed : (options.startAt!.get(partition) ?? committed);

  /** The member id of the last join: a new one means this member was evicted in between (see GROUP_JOIN). */
  let memberId: string | undefined;
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const assignment = Object.entries(payload.memberAssignment).flatMap(([physical, partitions]) =>
      partitions.map((partition) => ({ topic: names.logical(physical), partition })),
    );
    // A new member id: the coordinator had dropped this member (its session expired: it hung, or was cut off)
    // and it joined again as a new one. Other members may have owned and advanced its partitions meanwhile, so
    // everything it held is revoked first (the caller drops that state) and the new assignment is restored
    // afresh, even for partitions it gets back. Without this, a partition assigned before and after the
    // eviction looked continuously owned and was folded onto stale state (found by the fault campaign,
    // docs/reliability.md: 3 rows lost an event each).
    if (memberId !== undefined && payload.memberId !== memberId) queue.push({ kind: 'assignment', assignment: [] });
    memberId = payload.memberId;
    owned = new Set(assignment.map(tpKey));
    atEnd.clear();
    seekToStart(payload.memberAssignment);
    queue.push({ kind: 'assignment', assignment });
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (!payload.restart) queue.push({ kind: 'crash', error: payload.error });
  });

  try {
    await consumer.connect();
    await consumer.subscribe({
      topics: options.topics.map(names.physical),
      fromBeginning: options.fromBeginning ?? true,
    });
  } catch (e) {
    await consumer.disconnect().catch(() => {});
    throw classifyKafkaError(e, `kafka consumer ${deps.groupId}: connect`);
  }

  /** Set when a heartbeat hears of a rebalance: hand over no more chunks, so kafkajs rejoins soon. */
  let rebalancing = false;
  const deliver = (batch: EventBatch, heartbeat: () => Promise<void>): Promise<void> =>
    new Promise<void>((resolve) => {
      // closed while this chunk was being decoded: the abort has fired already and would never wake us,
      // so eachBatch (and consumer.stop(), which waits for it) would hang
      if (abort.signal.aborted) return resolve();
      // keep the membership alive while the caller works on the batch
      const beat = setInterval(() => {
        if (!rebalancing)
          void heartbeat().catch((e: unknown) => (rebalancing = protocolTypes(e).includes('REBALANCE_IN_PROGRESS')));
      }, 3_000);
      const done = () => {
        clearInterval(beat);
        abort.signal.removeEventListener('abort', done);
        resolve();
      };
      abort.signal.addEventListener('abort', done, { once: true });
      queue.push({ kind: 'batch', batch, done });
    });

  /**
   * kafkajs's run(): started by the first pull of `batches()`, so a consumer closed before it reads
   * (a restore with nothing to read, `lag()` only) never joins its group. Not awaited there: it
   * resolves only after the first join, which waits for the other members of the group to rejoin,
   * and they may be waiting for their callers.
   */
  let running: Promise<void> | undefined;
  const start = () =>
    (running ??= consumer
      .run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 1,
        eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
          const topic = names.logical(batch.topic);
          rebalancing = false;
          for (let i = 0; i < batch.messages.length && !abort.signal.aborted; i += maxBatch) {
            if (!isRunning() || isStale() || rebalancing) return;
            if (topic === TOPICS.dlq) {
              // the dead-letter topic, read alone: its records are letters, handed over as they are
              const messages = batch.messages.slice(i, i + maxBatch);
              const lastOffset = Number(messages.at(-1)!.offset);
              await deliver(
                {
                  topic,
                  partition: batch.partition,
                  events: [],
                  letters: messages.map(letterOfMessage),
                  lastOffset,
                  highWatermark: Number(batch.highWatermark),
                },
                heartbeat,
              );
              resolveOffset(String(lastOffset));
              continue;
            }
            const records: RawRecord[] = batch.messages.slice(i, i + maxBatch).map((m) => ({
              topic,
              partition: batch.partition,
              offset: Number(m.offset),
              key: m.key?.toString('utf8') ?? '',
              value: m.value ?? new Uint8Array(0),
              timestamp: Number(m.timestamp),
            }));
            const { events, dead } = await decodeRecords(codec, records, options.keys);
            if (dead.length > 0)
              try {
                await deps.deadLetter(dead);
                await options.onDeadLetters?.(dead);
              } catch (error) {
                // the caller's to handle, not kafkajs's to retry: end batches() with it, uncommitted
                queue.push({ kind: 'crash', error });
                return;
              }
            const last = records.at(-1)!;
            const highWatermark = Number(batch.highWatermark);
            atEnd.set(tpKey({ topic, partition: batch.partition }), last.offset + 1 >= highWatermark);
            await deliver(
              {
                topic,
                partition: batch.partition,
                events,
                lastOffset: last.offset,
                highWatermark,
                caughtUp: [...owned].every((k) => atEnd.get(k) === true),
              },
              heartbeat,
            );
            resolveOffset(String(last.offset));
          }
        },
      })
      .catch((error: unknown) => queue.push({ kind: 'crash', error })));

  async function* batches(): AsyncGenerator<EventBatch> {
    if (iterating) throw new ConsumerMisuse('batches() is already being iterated on this consumer');
    iterating = true;
    if (!abort.signal.aborted) start();
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

  /**
   * A clean leave, so the group hands this member's partitions to the others at once instead of
   * after the session timeout. Stopping before run() has joined is unsafe in kafkajs 2.2.4
   * (tulios/kafkajs#1639): stop() sees no running member and sends no LeaveGroup, the disconnect
   * fails the join in flight ("write after end", a crash) and a join that still completes starts
   * fetching on a closed client (the timer left behind). So: end the handoffs (abort wakes the
   * iterator and any `eachBatch` waiting on its caller), wait for the join (bounded), stop the run
   * loop (waits for the in-flight `eachBatch`, then leaves the group), and only then disconnect.
   */
  let closing: Promise<void> | undefined;
  const leave = async () => {
    abort.abort();
    if (running) await settledWithin(running, JOIN_WAIT_MS);
    await consumer.stop();
    await consumer.disconnect();
    // best effort, tried a few times: a coordinator that moved (a broker killed or hung) can still hold this
    // member's leave, or not answer, at the first try, and a one-use group left empty lingers for minutes (the
    // fault campaign, seed 23593995: three of its checker's one-use groups); a member of another process still in
    // it (NON_EMPTY_GROUP) leaves it to expire, or to the next log's sweep. A group the coordinator does not know
    // (GROUP_ID_NOT_FOUND: it never joined, e.g. a restore of an empty changelog) is gone already: retrying it
    // cost every start of the trial topology 2 s (docs/performance.md)
    let deleted = !options.transient;
    if (options.transient)
      for (let attempt = 0; ; attempt++) {
        deleted = await deps.admin.deleteGroups([deps.groupId]).then(
          () => true,
          (e: unknown) => groupNotFound(e),
        );
        const waitMs = DELETE_WAITS_MS[attempt];
        if (deleted || waitMs === undefined) break;
        await sleep(waitMs);
      }
    deps.onClose(deleted);
  };

  /**
   * kafkajs between a crash and its restart ("Restarting the consumer in 8240ms", after a broker away for longer
   * than its retries): it has dropped its group, so it refuses a commit itself, with a non-retriable error. The
   * restarted member joins as a new one, which revokes and restores everything (GROUP_JOIN above), so the commit is
   * dropped as a fenced one is: the events re-read after it are duplicates of the restored state. It was an exit 4
   * of `passk process` (the fault campaign, seeds 23245559, 23966188, 24077054; docs/reliability.md, fix 11).
   */
  const restarting = (e: unknown) =>
    !abort.signal.aborted &&
    (e as Error | undefined)?.name === 'KafkaJSNonRetriableError' &&
    /^Consumer group was not initialized/.test((e as Error).message);

  return {
    batches,
    commit: async (positions) => {
      if (positions.length === 0) return;
      const notOwned = positions.filter((p) => !owned.has(tpKey(p)));
      if (notOwned.length > 0) throw new CommitRejected(notOwned.map(({ topic, partition }) => ({ topic, partition })));
      try {
        await consumer.commitOffsets(
          positions.map((p) => ({
            topic: names.physical(p.topic),
            partition: p.partition,
            offset: String(p.nextOffset),
          })),
        );
      } catch (e) {
        if (protocolTypes(e).some((t) => FENCED_COMMIT_TYPES.has(t)) || restarting(e))
          throw new CommitRejected(
            positions.map(({ topic, partition }) => ({ topic, partition })),
            e,
          );
        throw classifyKafkaError(e, `kafka consumer ${deps.groupId}: commit`);
      }
    },
    committed: async (topic) => {
      const physical = names.physical(topic);
      const what = `kafka: committed offsets of ${deps.groupId}`;
      const partitions = await adminRead(
        what,
        async () => {
          const [offsets] = await deps.admin.fetchOffsets({ groupId: deps.groupId, topics: [physical] });
          return covering(what, topic, offsets?.partitions ?? []);
        },
        sleep,
        abort.signal,
      );
      return new Map(
        partitions
          .map((p) => [p.partition, startOf(physical, p.partition, Number(p.offset))] as const)
          .filter(([, offset]) => offset >= 0),
      );
    },
    lag: async () => {
      const what = `kafka: lag of ${deps.groupId}`;
      const leaders: Leaders = { stale: false };
      return adminRead(
        what,
        async () => {
          const out: { topic: string; partition: number; lag: number }[] = [];
          const committed = await deps.admin.fetchOffsets({
            groupId: deps.groupId,
            topics: options.topics.map(names.physical),
          });
          for (const topic of options.topics) {
            const physical = names.physical(topic);
            const partitions = covering(what, topic, committed.find((c) => c.topic === physical)?.partitions ?? []);
            const ends = covering(what, topic, await tryEndOffsets(deps, physical, what, leaders));
            const high = new Map(ends.map((p) => [p.partition, Number(p.high)]));
            for (const p of partitions)
              out.push({
                topic,
                partition: p.partition,
                lag: high.get(p.partition)! - Math.max(startOf(physical, p.partition, Number(p.offset)), 0),
              });
          }
          return out;
        },
        sleep,
        abort.signal,
      );
    },
    close: () => (closing ??= leave()),
  };
};
