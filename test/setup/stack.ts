import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

/**
 * Integration tests get a real Kafka broker and schema registry:
 *  1. from env, when KAFKA_BROKERS and SCHEMA_REGISTRY_URL are set;
 *  2. else from Testcontainers, when a Docker engine answers;
 *  3. else from the local stack (deploy/local/up.sh: Kafka + Apicurio from Maven Central, no Docker).
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const dockerAnswers = (): boolean => {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
};

const startLocalStack = (): { brokers: string; registry: string; stop: () => void } => {
  const up = spawnSync('bash', [join(root, 'deploy/local/up.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  process.stderr.write(up.stderr ?? '');
  process.stderr.write(up.stdout ?? '');
  // A stack that was up before this run (another run's, or one started by hand) is not this run's to stop.
  const reused = /already up and healthy/.test(up.stderr ?? '');
  if (up.status !== 0) throw new Error(`deploy/local/up.sh failed with exit code ${up.status}`);
  const value = (name: string) => up.stdout.match(new RegExp(`^${name}=(.+)$`, 'm'))?.[1]?.trim();
  const brokers = value('KAFKA_BROKERS');
  const registry = value('SCHEMA_REGISTRY_URL');
  if (!brokers || !registry) throw new Error('deploy/local/up.sh did not print KAFKA_BROKERS and SCHEMA_REGISTRY_URL');
  return {
    brokers,
    registry,
    stop: () => {
      if (!reused) spawnSync('bash', [join(root, 'deploy/local/down.sh')], { stdio: 'inherit' });
    },
  };
};

const startContainers = async (): Promise<{ brokers: string; registry: string; stop: () => Promise<void> }> => {
  const { GenericContainer, Network, Wait } = await import('testcontainers');
  const network = await new Network().start();
  const kafka = await new GenericContainer('apache/kafka:4.1.0')
    .withNetwork(network)
    .withNetworkAliases('kafka')
    .withExposedPorts({ container: 9092, host: 19092 })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093',
      KAFKA_ADVERTISED_LISTENERS: 'PLAINTEXT://127.0.0.1:19092',
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
    })
    .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
    .start();
  const registry = await new GenericContainer('apicurio/apicurio-registry:3.1.7')
    .withExposedPorts(8080)
    .withWaitStrategy(Wait.forHttp('/apis/ccompat/v7/subjects', 8080))
    .start();
  return {
    brokers: `127.0.0.1:19092`,
    registry: `http://${registry.getHost()}:${registry.getMappedPort(8080)}/apis/ccompat/v7`,
    stop: async () => {
      await registry.stop();
      await kafka.stop();
      await network.stop();
    },
  };
};

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { KAFKA_BROKERS, SCHEMA_REGISTRY_URL } = process.env;
  if (KAFKA_BROKERS && SCHEMA_REGISTRY_URL) {
    project.provide('kafkaBrokers', KAFKA_BROKERS);
    project.provide('schemaRegistryUrl', SCHEMA_REGISTRY_URL);
    project.provide('stackKind', 'env');
    return async () => {};
  }
  const stack = dockerAnswers()
    ? { kind: 'testcontainers' as const, ...(await startContainers()) }
    : { kind: 'local' as const, ...startLocalStack() };
  project.provide('kafkaBrokers', stack.brokers);
  project.provide('schemaRegistryUrl', stack.registry);
  project.provide('stackKind', stack.kind);
  return async () => {
    await stack.stop();
  };
}
