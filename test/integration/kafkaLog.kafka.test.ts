import { randomBytes } from 'node:crypto';
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import { describe, expect, inject, it } from 'vitest';
import { createKafkaEventLog, createRegistryClient } from '../../log/index.ts';
import { ALL_TOPICS, TOPICS } from '../../schemas/topics.ts';
import { eventLogContract } from '../contracts/eventLog.contract.ts';

const maxEventBytes = 100_000;
const brokers = inject('kafkaBrokers').split(',');
const registryUrl = inject('schemaRegistryUrl');

eventLogContract('Kafka + schema registry', async () => {
  // a fresh namespace per test: reruns against a long-lived broker and registry never collide
  const namespace = `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}.`;
  const kafka = new Kafka({ clientId: 'passk-test', brokers, logLevel: logLevel.NOTHING });
  const registry = createRegistryClient({ url: registryUrl });
  return {
    maxEventBytes,
    partitions: 4,
    open: () => createKafkaEventLog({ kafka, registry, namespace, maxEventBytes, partitions: 4 }),
    dispose: async () => {
      const admin = kafka.admin();
      await admin.connect();
      const mine = (await admin.listTopics()).filter((t) => t.startsWith(namespace));
      if (mine.length > 0) await admin.deleteTopics({ topics: mine }).catch(() => {});
      await admin.disconnect();
    },
  };
});

describe('Kafka event log: topics', () => {
  it('creates every topic with explicit partitions and settings (rowstate compacted, max.message.bytes from maxEventBytes)', async () => {
    const namespace = `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}.`;
    const kafka = new Kafka({ clientId: 'passk-test', brokers, logLevel: logLevel.NOTHING });
    const registry = createRegistryClient({ url: registryUrl });
    const log = await createKafkaEventLog({ kafka, registry, namespace, maxEventBytes, partitions: 3 });
    const admin = kafka.admin();
    await admin.connect();
    try {
      const names = ALL_TOPICS.map((t) => namespace + t);
      const { topics } = await admin.fetchTopicMetadata({ topics: names });
      expect(topics.map((t) => [t.name, t.partitions.length]).sort()).toEqual(names.map((n) => [n, 3]).sort());
      const { resources } = await admin.describeConfigs({
        includeSynonyms: false,
        resources: names.map((name) => ({ type: ConfigResourceTypes.TOPIC, name })),
      });
      const config = (topic: string, key: string) =>
        resources.find((r) => r.resourceName === namespace + topic)?.configEntries.find((c) => c.configName === key)
          ?.configValue;
      expect(config(TOPICS.rowstate, 'cleanup.policy')).toBe('compact');
      for (const t of ALL_TOPICS.filter((x) => x !== TOPICS.rowstate)) {
        expect(config(t, 'cleanup.policy')).toBe('delete');
        expect(config(t, 'retention.ms')).toBe('-1');
      }
      for (const t of ALL_TOPICS) expect(Number(config(t, 'max.message.bytes'))).toBe(maxEventBytes + 64 * 1024);
    } finally {
      await log.close();
      await admin.deleteTopics({ topics: ALL_TOPICS.map((t) => namespace + t) }).catch(() => {});
      await admin.disconnect();
    }
  });
});
