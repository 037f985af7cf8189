import { randomBytes } from 'node:crypto';
import type { Admin, Kafka } from 'kafkajs';
import { BackendUnavailable } from '../../schemas/errors.ts';
import { TOPICS } from '../../schemas/topics.ts';
import { READ_TO_END_WAIT_MS, type DeadLetter, type EventConsumer, type EventLog } from '../../processors/ports.ts';
import { createDeadLetterWriter, toDeadLetterRecord } from '../deadLetters.ts';
import { createKafkaConsumer, letterOfMessage, settledWithin } from './consumer.ts';
import { classifyKafkaError } from './errors.ts';
import { adminRead, endOffsets } from './offsets.ts';
import { applyKafkajsFixes } from './kafkajsFixes.ts';
import { createKafkaPublisher, type KafkaPublisher } from './publisher.ts';
import { createRegistryCodec, type RegistryCodec } from './registryCodec.ts';
import type { RegistryClient } from './registryClient.ts';
import { RECORD_OVERHEAD_BYTES, ensureTopics, partitionCounts, topicNames } from './topics.ts';

export interface KafkaEventLogOptions {
  readonly kafka: Kafka;
  readonly registry: RegistryClient;
  /** Largest encoded event accepted at publish, in bytes. @default 1000000 */
  readonly maxEventBytes?: number;
  /** Partitions of the topics passk creates. @default 4 */
  readonly partitions?: number;
  /** @default 1 */
  readonly replicationFactor?: number;
  /** Retention of the append-only topics, ms; -1 = forever (the log is the source of truth). @default -1 */
  readonly retentionMs?: number;
  /**
   * Prefix of every topic, consumer group and registry subject this log uses, so that several passk
   * installs (or test runs) share one cluster and one registry without colliding. @default ''
   */
  readonly namespace?: string;
}

const DLQ_READ_TIMEOUT_MS = 60_000;

/**
 * The last part of every one-use group's name (`ConsumerOptions.transient`, the DLQ reader): such a group never
 * holds a commit, so once it is empty it can go. A clean close deletes its own; a SIGKILLed process cannot, so
 * the next log of the same namespace that opens a one-use consumer deletes the ones it finds empty at two of its
 * sweeps at least 14 s apart (`oneUseSweep`).
 */
export const ONE_USE_SUFFIX = '.one-use';
/**
 * When the second sweep runs: a killed member stays in its groups until its session expires (10 s,
 * log/kafka/consumer.ts), so a restart right after a SIGKILL finds them not yet empty at its first sweep.
 */
const SECOND_SWEEP_MS = 15_000;

/** How often a sweep that failed, or left a group with members, is made again after the first. */
const SWEEP_RETRIES = 4;

/**
 * How long `close()` waits for one-use consumers still opening (a connect while a broker is away) and reads of the DLQ.
 * Until 2026-12-07 a restore's start offsets were set by kafkajs's `admin.setOffsets` while it opened, which made the
 * group and waited out one idle fetch (kafkajs's 5 s); they are now sought after the join (log/kafka/consumer.ts).
 */
const OPENING_WAIT_MS = 10_000;
/** How long `close()`'s last try at this log's own undeleted one-use groups may take. */
const LAST_DELETE_MS = 5_000;

/**
 * Runs `sweep` at once and `everyMs` later (`start`, once); a sweep that fails, or that found one-use groups of
 * other processes still with members (it resolves to how many), is made again every `everyMs`, up to `retries`
 * times. A dead member stays in its groups until its session expires — counted again from the start when the
 * group's coordinator moves (a broker killed or hung) — so one sweep 15 s after a start can come too early, and a
 * broker away can fail it; either left a dead member's groups for good (the long fault campaign: seeds 23237640,
 * `passk-gates.restore.<instance>.one-use` after a kill-processor and a kill-broker, and 23554400,
 * `passk-gates.passk.datasets.<instance>.one-use` after a processor's exit 3 and a pause-broker). `again` makes
 * one more round `everyMs` later (a group of this process whose delete was not confirmed; one round pending at a
 * time). `stop` clears what is pending.
 */
export const oneUseSweeper = (sweep: () => Promise<number>, everyMs = SECOND_SWEEP_MS, retries = SWEEP_RETRIES) => {
  const timers = new Set<NodeJS.Timeout>();
  let started = false;
  let stopped = false;
  let againPending = false;
  const later = (f: () => void) => {
    if (stopped) return;
    const t = setTimeout(() => (timers.delete(t), f()), everyMs);
    t.unref();
    timers.add(t);
  };
  const attempt = (left: number, always = false) =>
    void sweep().then(
      (busy) => {
        if (left > 0 && busy > 0 && !always) later(() => attempt(left - 1));
      },
      () => {
        if (left > 0) later(() => attempt(left - 1));
      },
    );
  return {
    start: () => {
      if (started) return;
      started = true;
      // the first sweep finds a dead member's groups still held (its session): the second is the one that counts
      attempt(retries, true);
      later(() => attempt(retries));
    },
    again: () => {
      if (againPending || stopped) return;
      againPending = true;
      later(() => ((againPending = false), attempt(retries)));
    },
    stop: () => {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
};

/**
 * How long a sweep leaves another process's one-use group it found `Empty` before it deletes it: it must have seen it
 * `Empty` at an earlier sweep at least this long before. A live process of a passk before 2026-12-07 leaves its group
 * `Empty` for a while: its kafkajs `admin.setOffsets` (a restore's start offsets) left it so, holding those offsets,
 * until the real consumer joined (seconds, more with a broker away). Deleted in between, that consumer restarted at
 * offset 0 and the reader's end (its start plus its lag) lay past the topic's end: the read hung or restored wrongly
 * (fix 16). This passk's readers seek after their join and their groups hold no offsets, so only such a process (one
 * namespace shared during an upgrade) needs the wait; it is kept for it. Sweeps are `SECOND_SWEEP_MS` apart; a
 * second less, as a timer may fire a little early by the wall clock.
 */
const OTHERS_EMPTY_MS = SECOND_SWEEP_MS - 1_000;

/**
 * A sweep of the one-use groups of `namespace` (each call one round): deletes this log's own closed ones whose delete
 * failed (`undeleted`, not `own`) once they are empty, and another process's once it has stayed empty from an earlier
 * round at least `OTHERS_EMPTY_MS` before (a killed process's: its first round marks them, a later one deletes them).
 * The broker refuses to delete a group with members. Resolves to how many groups, other than `own` (this process's
 * live ones), are left: with members, or empty and not yet old enough (so the sweeper makes another round).
 */
const oneUseSweep = (
  admin: Pick<Admin, 'listGroups' | 'describeGroups' | 'deleteGroups'>,
  namespace: string,
  own: ReadonlySet<string>,
  undeleted: Set<string>,
) => {
  /** Another process's group → when a round first found it empty (forgotten once gone or with members). */
  const emptySince = new Map<string, number>();
  return async (): Promise<number> => {
    const now = Date.now();
    const ours = (await admin.listGroups()).groups
      .map((g) => g.groupId)
      .filter((g) => g.startsWith(namespace + 'passk-') && g.endsWith(ONE_USE_SUFFIX) && !own.has(g));
    const listed = new Set(ours);
    for (const g of emptySince.keys()) if (!listed.has(g)) emptySince.delete(g);
    if (ours.length === 0) return 0;
    const groups = (await admin.describeGroups(ours)).groups;
    const due: string[] = [];
    for (const { groupId, state } of groups) {
      if (state !== 'Empty') emptySince.delete(groupId);
      else if (undeleted.has(groupId)) due.push(groupId);
      else if (!emptySince.has(groupId)) emptySince.set(groupId, now);
      else if (now - emptySince.get(groupId)! >= OTHERS_EMPTY_MS) due.push(groupId);
    }
    if (due.length > 0) await admin.deleteGroups(due);
    for (const g of due) {
      emptySince.delete(g);
      undeleted.delete(g);
    }
    return groups.length - due.length;
  };
};

/** Kafka + a Confluent-compatible schema registry behind the EventLog port. */
export const createKafkaEventLog = async (opts: KafkaEventLogOptions): Promise<EventLog> => {
  // kafkajs's fixes, before any of its clients is made: here, not at import (see kafkajsFixes.ts)
  applyKafkajsFixes();
  const namespace = opts.namespace ?? '';
  const maxEventBytes = opts.maxEventBytes ?? 1_000_000;
  const names = topicNames(namespace);
  const admin = opts.kafka.admin();
  const consumers = new Set<EventConsumer>();
  let codec: RegistryCodec;
  let publisher: KafkaPublisher;
  let partitions: Map<string, number>;
  try {
    await admin.connect();
    await ensureTopics(admin, names, {
      partitions: opts.partitions ?? 4,
      replicationFactor: opts.replicationFactor ?? 1,
      maxEventBytes,
      retentionMs: opts.retentionMs ?? -1,
    });
    partitions = await partitionCounts(admin, names);
    codec = await createRegistryCodec({ registry: opts.registry, subjectPrefix: namespace });
    publisher = await createKafkaPublisher({
      kafka: opts.kafka,
      codec,
      names,
      maxEventBytes,
      partitionsOf: (topic) => partitions.get(topic) ?? 1,
    });
  } catch (e) {
    await admin.disconnect().catch(() => {});
    throw classifyKafkaError(e, 'kafka: opening the event log');
  }

  // in the background: a broker away at a sweep is waited out a few times, then left to the next start
  const ownGroups = new Set<string>();
  /**
   * This log's one-use groups not known to be gone: a consumer's still opening or open, or one whose delete failed
   * (the consumer's 14 s of tries), or whose open failed (no group is made before the join: swept to be sure). A failed one
   * is swept again later (`again`, it is no longer `own`), at once if empty (a sweep waits before it deletes another
   * process's group, not this one), and forgotten once a sweep deleted it; `close()` makes one last try at those left.
   */
  const undeleted = new Set<string>();
  /**
   * Consumers being opened, and reads of the DLQ: `close()` waits for them (bounded), so they are closed (a one-use
   * group deleted) too.
   */
  const opening = new Set<Promise<unknown>>();
  const sweeper = oneUseSweeper(oneUseSweep(admin, namespace, ownGroups, undeleted));
  /** Awaits `p`, one of `opening` meanwhile. */
  const whileOpening = async <T>(p: Promise<T>): Promise<T> => {
    opening.add(p);
    try {
      return await p;
    } finally {
      opening.delete(p);
    }
  };
  /** A one-use group of this log's, taken: not swept while it is in use, and not known to be gone. */
  const takeOneUse = (groupId: string) => {
    ownGroups.add(groupId);
    undeleted.add(groupId);
  };
  /** A one-use group of this log's, let go: forgotten once deleted, else swept again later (no longer own). */
  const releaseOneUse = (groupId: string, deleted: boolean) => {
    ownGroups.delete(groupId);
    if (deleted) undeleted.delete(groupId);
    else sweeper.again();
  };

  const readDeadLetters = async (): Promise<DeadLetter[]> => {
    const topic = names.physical(TOPICS.dlq);
    // as the lag read does (offsets.ts): retried while a leader or the cluster's metadata moves, through a new admin
    // after a leadership error (fix 13); kafkajs's TypeError on its stale metadata cache (fix 8) is transient, not a
    // bug (exit 4; the campaign's seed 24275029 in a CI run: a processor restarted while broker 1 was SIGKILLed)
    const offsets = await endOffsets({ kafka: opts.kafka, admin }, topic, partitions.get(TOPICS.dlq) ?? 1);
    const ends = new Map(
      offsets.filter((p) => Number(p.high) > Number(p.low)).map((p) => [p.partition, Number(p.high)]),
    );
    if (ends.size === 0) return [];
    const groupId = `${namespace}passk-dlq-reader-${randomBytes(4).toString('hex')}${ONE_USE_SUFFIX}`;
    takeOneUse(groupId);
    // read to the ends taken above, then closed: its close is not held by an idle fetch (kafkajs's default is 5 s)
    const reader = opts.kafka.consumer({
      groupId,
      maxBytesPerPartition: maxEventBytes + RECORD_OVERHEAD_BYTES,
      maxWaitTimeInMs: READ_TO_END_WAIT_MS,
    });
    const letters: DeadLetter[] = [];
    try {
      await reader.connect();
      await reader.subscribe({ topics: [topic], fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new BackendUnavailable(`reading ${topic}: not at its end after ${DLQ_READ_TIMEOUT_MS} ms`)),
          DLQ_READ_TIMEOUT_MS,
        );
        const done = () => (clearTimeout(timer), resolve());
        reader.on(
          reader.events.CRASH,
          ({ payload }) => (clearTimeout(timer), reject(classifyKafkaError(payload.error, `reading ${topic}`))),
        );
        reader
          .run({
            autoCommit: false,
            eachBatch: async ({ batch }) => {
              for (const m of batch.messages) {
                letters.push(letterOfMessage(m));
                if (Number(m.offset) + 1 >= (ends.get(batch.partition) ?? 0)) ends.delete(batch.partition);
              }
              if (ends.size === 0) done();
            },
          })
          .catch((e: unknown) => (clearTimeout(timer), reject(classifyKafkaError(e, `reading ${topic}`))));
      });
    } finally {
      await reader.disconnect().catch(() => {});
      releaseOneUse(
        groupId,
        await admin.deleteGroups([groupId]).then(
          () => true,
          () => false,
        ),
      );
    }
    return letters;
  };
  /**
   * The DLQ's letters. A one-use group too, read while `close()` may come: the read is one of `opening`, so a close
   * waits for it (bounded) and its group is deleted before the process exits.
   */
  const deadLetters = (): Promise<DeadLetter[]> => whileOpening(readDeadLetters());
  // one writer per log: every consumer of this process shares what the DLQ already holds
  const deadLetter = createDeadLetterWriter({
    existing: deadLetters,
    append: (letters) => publisher.send(letters.map((d) => ({ topic: TOPICS.dlq, ...toDeadLetterRecord(d) }))),
  });

  // ingest's letters go through the same writer: each identity once, however often a request is re-sent
  Object.assign(publisher, {
    publishDeadLetters: async (letters: readonly DeadLetter[]) => (await deadLetter(letters)).length,
  });

  return {
    publisher,
    codec,
    consumer: async (options) => {
      const groupId = namespace + options.groupId + (options.transient ? ONE_USE_SUFFIX : '');
      if (options.transient) {
        takeOneUse(groupId);
        sweeper.start();
      }
      let consumer: EventConsumer | undefined;
      const opened = createKafkaConsumer({
        kafka: opts.kafka,
        admin,
        codec,
        deadLetter,
        names,
        partitionsOf: (topic) => partitions.get(topic) ?? 1,
        groupId,
        options,
        maxBytesPerPartition: maxEventBytes + RECORD_OVERHEAD_BYTES,
        onClose: (deleted) => {
          if (consumer) consumers.delete(consumer);
          if (options.transient) releaseOneUse(groupId, deleted);
        },
      });
      try {
        consumer = await whileOpening(opened);
      } catch (e) {
        // no group is made before the join, but a sweep costs little: no longer own, so a sweep takes any left
        if (options.transient) releaseOneUse(groupId, false);
        throw e;
      }
      consumers.add(consumer);
      return consumer;
    },
    deadLetters,
    // tried again while a coordinator moves, as the consumer's own offsets reads are (adminRead): one try ended a
    // store rebuild with exit 3 on NOT_COORDINATOR after a broker was killed (the fault campaign, seed 13007959)
    committed: async (groupId, topic) => {
      const [offsets] = await adminRead(`kafka: committed offsets of ${groupId}`, () =>
        admin.fetchOffsets({ groupId: namespace + groupId, topics: [names.physical(topic)] }),
      );
      return new Map(
        (offsets?.partitions ?? []).filter((p) => Number(p.offset) >= 0).map((p) => [p.partition, Number(p.offset)]),
      );
    },
    close: async () => {
      sweeper.stop();
      // A one-use consumer still opening when the log closes (under a SIGTERM) would be closed by nobody: the process
      // exits once the log is closed (the fault campaign, seed 7015860: `passk-gates.restore.<instance>.one-use` left
      // by a processor stopped while its restore's setOffsets, since replaced by a seek, made the group). So wait for
      // those, bounded, and close them with the others.
      const until = Date.now() + OPENING_WAIT_MS;
      while (opening.size > 0 && Date.now() < until)
        await settledWithin(Promise.allSettled([...opening]), until - Date.now());
      for (const c of [...consumers]) await c.close();
      // one last try, bounded, at this log's one-use groups whose delete failed or which never opened
      if (undeleted.size > 0) await settledWithin(admin.deleteGroups([...undeleted]), LAST_DELETE_MS);
      await publisher.close();
      await admin.disconnect();
    },
  };
};
