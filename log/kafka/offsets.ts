import type { Admin, Kafka } from 'kafkajs';
import { BackendUnavailable } from '../../schemas/errors.ts';
import { classifyKafkaError, protocolTypes } from './errors.ts';

/** kafkajs's protocol errors that mean its cached metadata names a leader that no longer is (its `staleMetadata`). */
const STALE_LEADER_TYPES = new Set(['NOT_LEADER_FOR_PARTITION', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_OR_PARTITION']);

/**
 * The waits between the tries of an offsets read (lag, committed, end offsets) while the cluster moves a group
 * coordinator or a leader: 11.75 s in all, past KRaft's broker session (9 s), after which the partitions a killed
 * broker led have new leaders (kafkajs refreshes its metadata after a refused connection). 7.75 s (0.25 s doubling,
 * five waits) were not: a read that began as its leader's broker died was refused for all of it and ended the
 * processors with exit 3 (the fault campaign, seed 23237640: broker 3 SIGKILLed under the gates' start).
 */
export const ADMIN_READ_WAITS_MS = [250, 500, 1_000, 2_000, 4_000, 4_000];

const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * An admin read that is safe to repeat, tried again after each of `ADMIN_READ_WAITS_MS` on a transient error, then
 * classified: a group coordinator or a leader that moves during a broker fault is transient, and must not end the
 * processors as a bug. Once `closed` aborts (the consumer that asked is closing: a stop, and nobody waits for the
 * answer) a failed try is not tried again and a wait between tries ends at once, so a stop does not wait out a broker
 * away; the read then fails with the last try's error.
 */
export const adminRead = async <T>(
  what: string,
  read: () => Promise<T>,
  sleep: (ms: number) => Promise<void> = wait,
  closed?: AbortSignal,
): Promise<T> => {
  for (let attempt = 0; ; attempt++) {
    try {
      return await read();
    } catch (e) {
      const classified = classifyKafkaError(e, what);
      const waitMs = ADMIN_READ_WAITS_MS[attempt];
      if (!(classified instanceof BackendUnavailable) || waitMs === undefined || closed?.aborted) throw classified;
      await untilAborted(sleep(waitMs), closed);
      if (closed?.aborted) throw classified;
    }
  }
};

/** Resolves when `p` does or when `signal` aborts, whichever comes first; leaves no listener on `signal`. */
const untilAborted = async (p: Promise<void>, signal: AbortSignal | undefined): Promise<void> => {
  if (!signal) return p;
  let aborted!: () => void;
  const abort = new Promise<void>((resolve) => (aborted = resolve));
  signal.addEventListener('abort', aborted, { once: true });
  try {
    await Promise.race([p, abort]);
  } finally {
    signal.removeEventListener('abort', aborted);
  }
};

/**
 * An offsets read's partitions, checked to cover every partition of the topic. kafkajs 2.2.4 answers an offsets
 * read from its cached metadata, and a metadata refresh made for fewer topics that completes after one made for
 * more (concurrent reads of several topics on one admin, each on a random broker) leaves a topic out of the cache:
 * `fetchOffsets` then returns it with no partitions, silently, and a read to the end of it read nothing (the fault
 * campaign's misreads, docs/reliability.md). A short answer is transient: the next read refreshes the metadata.
 */
export const coveringFor =
  (partitionsOf: (topic: string) => number) =>
  <P extends { partition: number }>(what: string, topic: string, partitions: readonly P[]): readonly P[] => {
    const want = partitionsOf(topic);
    const have = new Set(partitions.map((p) => p.partition));
    const missing = Array.from({ length: want }, (_, i) => i).filter((i) => !have.has(i));
    if (missing.length > 0)
      throw new BackendUnavailable(
        `${what}: the answer for ${topic} lacks partition${missing.length > 1 ? 's' : ''} ${missing.join(', ')} ` +
          `of ${want} (stale client metadata)`,
      );
    return partitions;
  };

/** Whether a read's tries met a leadership error: its next tries go through an admin of their own (fix 13). */
export type Leaders = { stale: boolean };

/**
 * One try of a topic's end offsets (`physical`: its name on the cluster). kafkajs 2.2.4's `admin.fetchTopicOffsets`
 * gives up on a leadership error (the leader it cached died or moved) without refreshing its metadata, and refreshes
 * it only once it is 5 minutes old: read again on the same admin, it asks the old leader every time (fix 13,
 * docs/reliability.md). After such an error (`leaders.stale`) the read goes through an admin of its own, whose first
 * request loads the cluster's metadata as it is now. The same stale cache of fix 8 makes it throw a TypeError (it
 * destructures the answer for a topic it asked no broker about): transient too.
 */
export const tryEndOffsets = async (
  clients: { kafka: Kafka; admin: Admin },
  physical: string,
  what: string,
  leaders: Leaders,
) => {
  const read = async () => {
    if (!leaders.stale) return clients.admin.fetchTopicOffsets(physical);
    const admin = clients.kafka.admin();
    try {
      await admin.connect();
      return await admin.fetchTopicOffsets(physical);
    } finally {
      await admin.disconnect().catch(() => {});
    }
  };
  return read().catch((e: unknown) => {
    if (protocolTypes(e).some((t) => STALE_LEADER_TYPES.has(t))) leaders.stale = true;
    if (!(e instanceof TypeError)) throw e;
    throw new BackendUnavailable(`${what}: no offsets for ${physical} (stale client metadata): ${e.message}`, e);
  });
};

/**
 * A topic's end offsets, with an offsets read's tries (`adminRead`, `tryEndOffsets`): the dead letters' read. An answer
 * that lacks one of the topic's `partitions` (fix 8's stale cache) is read again, as the lag read's is: read short, the
 * dead letters would miss that partition's letters and a malformed event could be dead-lettered a second time.
 */
export const endOffsets = (
  clients: { kafka: Kafka; admin: Admin },
  physical: string,
  partitions: number,
  sleep?: (ms: number) => Promise<void>,
) => {
  const what = `kafka: end offsets of ${physical}`;
  const leaders: Leaders = { stale: false };
  const covering = coveringFor(() => partitions);
  return adminRead(
    what,
    async () => covering(what, physical, await tryEndOffsets(clients, physical, what, leaders)),
    sleep,
  );
};
