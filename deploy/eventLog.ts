import type { EventLog } from '../processors/ports.ts';
import type { PasskConfig } from './config.ts';

/**
 * The event log the config asks for: the embedded SQLite log in `config.dataDir` (default), or
 * Kafka + the schema registry when `backend` is `kafka` (PASSK_BACKEND=kafka, KAFKA_BROKERS,
 * SCHEMA_REGISTRY_URL). Each backend's modules load only when it is chosen: the embedded log does not pay for
 * kafkajs and the registry client (docs/performance.md, "CLI start-up").
 */
export const openEventLog = async (config: PasskConfig, opts: { namespace?: string } = {}): Promise<EventLog> => {
  if (config.backend === 'embedded') {
    const { createEmbeddedEventLog } = await import('../log/embedded/embeddedLog.ts');
    return createEmbeddedEventLog({ dataDir: config.dataDir, maxEventBytes: config.maxEventBytes });
  }
  const k = config.kafka;
  if (!k) throw new Error('PASSK_BACKEND=kafka needs KAFKA_BROKERS and SCHEMA_REGISTRY_URL');
  const [{ Kafka, logLevel }, { createKafkaEventLog }, { createRegistryClient }] = await Promise.all([
    import('kafkajs'),
    import('../log/kafka/kafkaLog.ts'),
    import('../log/kafka/registryClient.ts'),
  ]);
  return createKafkaEventLog({
    kafka: new Kafka({
      clientId: k.clientId,
      brokers: k.brokers,
      logLevel: logLevel.WARN,
      // every broker call has a deadline: a connect, then each request; a failed one is retried by kafkajs's
      // retrier (its default: 5 retries, 300 ms doubling, jittered; set no `retry` here, else kafkajs warns that the
      // idempotent producer's retries are limited). Every call passk makes is safe to repeat: produce is idempotent,
      // admin calls are reads, creates that accept "exists" and best-effort deletes. Then it fails, classified
      // (log/kafka/errors.ts).
      connectionTimeout: k.connectionTimeoutMs,
      requestTimeout: k.requestTimeoutMs,
      enforceRequestTimeout: true,
    }),
    registry: createRegistryClient({
      url: k.schemaRegistryUrl,
      clientId: k.clientId,
      ...(k.registryTimeoutMs ? { timeoutMs: k.registryTimeoutMs } : {}),
    }),
    maxEventBytes: config.maxEventBytes,
    partitions: k.partitions,
    replicationFactor: k.replicationFactor,
    ...((opts.namespace ?? k.namespace) === undefined ? {} : { namespace: opts.namespace ?? k.namespace }),
  });
};
