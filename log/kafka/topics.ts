import type { Admin, ITopicConfig } from 'kafkajs';
import { ALL_TOPICS, TOPICS, type Topic } from '../../schemas/topics.ts';

/** Room above the largest event for the record's key, headers and the record-batch header. */
export const RECORD_OVERHEAD_BYTES = 64 * 1024;

export interface TopicSettings {
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly maxEventBytes: number;
  /** Retention of the delete-policy topics; -1 keeps events forever (they are the source of truth). */
  readonly retentionMs: number;
}

/** Logical topic name (`passk.trials`) ↔ the name on the cluster (`<namespace>passk.trials`). */
export interface TopicNames {
  physical(topic: string): string;
  logical(physical: string): string;
}

export const topicNames = (namespace: string): TopicNames => ({
  physical: (topic) => namespace + topic,
  logical: (physical) => (physical.startsWith(namespace) ? physical.slice(namespace.length) : physical),
});

export const topicConfig = (topic: Topic, s: TopicSettings): ITopicConfig['configEntries'] => [
  // passk.rowstate is a changelog: the latest state per key is all a restore needs
  ...(topic === TOPICS.rowstate
    ? [
        { name: 'cleanup.policy', value: 'compact' },
        { name: 'min.compaction.lag.ms', value: '60000' },
      ]
    : [
        { name: 'cleanup.policy', value: 'delete' },
        { name: 'retention.ms', value: String(s.retentionMs) },
      ]),
  { name: 'max.message.bytes', value: String(s.maxEventBytes + RECORD_OVERHEAD_BYTES) },
  { name: 'min.insync.replicas', value: String(s.replicationFactor >= 3 ? 2 : 1) },
  { name: 'message.timestamp.type', value: 'CreateTime' },
];

/**
 * Creates every passk topic that does not exist yet, with explicit partitions and settings.
 * Existing topics are left as they are (their partition count is what the partitioner uses).
 */
export const ensureTopics = async (admin: Admin, names: TopicNames, s: TopicSettings): Promise<void> => {
  const existing = new Set(await admin.listTopics());
  const missing = ALL_TOPICS.filter((t) => !existing.has(names.physical(t)));
  if (missing.length === 0) return;
  await admin.createTopics({
    // kafkajs's own wait retries only LEADER_NOT_AVAILABLE; a KRaft broker first answers
    // UNKNOWN_TOPIC_OR_PARTITION for a new topic, so wait for the leaders here instead
    waitForLeaders: false,
    topics: missing.map((t) => ({
      topic: names.physical(t),
      numPartitions: s.partitions,
      replicationFactor: s.replicationFactor,
      configEntries: topicConfig(t, s),
    })),
  });
  await waitForLeaders(admin, missing.map(names.physical));
};

const waitForLeaders = async (admin: Admin, topics: string[], timeoutMs = 30_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { topics: meta } = await admin.fetchTopicMetadata({ topics });
      if (
        meta.length === topics.length &&
        meta.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))
      )
        return;
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
    if (Date.now() > deadline) throw new Error(`topics have no leaders after ${timeoutMs} ms: ${topics.join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

/** How long `partitionCounts` waits for a broker that does not know a just-created topic yet. */
const NEW_TOPIC_WAIT_MS = 30_000;

/**
 * Partition count of every passk topic on the cluster, by logical name. A topic created a moment ago (by this log,
 * or by another process that started at the same time) may still be unknown to the broker asked — KRaft brokers
 * apply the topic records each in their own time — so UNKNOWN_TOPIC_OR_PARTITION is waited out (every 100 ms, up to
 * 30 s) instead of failing the open (the fault campaign's seed 23063422: "kafka: opening the event log: This server
 * does not host this topic-partition", 230 ms after the previous schedule's log had created its topics).
 */
export const partitionCounts = async (
  admin: Pick<Admin, 'fetchTopicMetadata'>,
  names: TopicNames,
  waitMs = NEW_TOPIC_WAIT_MS,
): Promise<Map<string, number>> => {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: ALL_TOPICS.map(names.physical) });
      return new Map(topics.map((t) => [names.logical(t.name), t.partitions.length]));
    } catch (e) {
      if ((e as { type?: string }).type !== 'UNKNOWN_TOPIC_OR_PARTITION' || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
};
