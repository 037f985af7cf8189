/** Event-log adapters: the embedded SQLite log and Kafka with a schema registry. */
export { createEmbeddedEventLog, type EmbeddedEventLogOptions } from './embedded/embeddedLog.ts';
export { createKafkaEventLog, ONE_USE_SUFFIX, type KafkaEventLogOptions } from './kafka/kafkaLog.ts';
export type { RegistryClient } from './kafka/registryClient.ts';
export { createRegistryClient, REGISTRY_TIMEOUT_MS } from './kafka/registryClient.ts';
export {
  createRegistryCodec,
  registerJsonSchema,
  registeredSchemaOf,
  type RegistryCodec,
} from './kafka/registryCodec.ts';
export { CommitRejected, ConsumerMisuse, LogRejected, SchemaRejected } from './errors.ts';
export { DLQ_HEADERS } from './deadLetters.ts';
export { fastJsonCodec, validateDecoded } from './fastValidate.ts';
export { partitionOf } from './partitioner.ts';
