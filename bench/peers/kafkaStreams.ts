import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const dir = fileURLToPath(new URL('./kafka-streams/', import.meta.url));
const run = promisify(execFile);

/** Whether the peer can be built here: `mvn` (and so a JDK) on PATH. */
export const peerAvailable = (): boolean => spawnSync('mvn', ['-v'], { stdio: 'ignore' }).status === 0;

/**
 * The Kafka Streams peer (bench/peers/kafka-streams/: the same keyed (n, c, attempts) aggregation with
 * exactly_once_v2, RocksDB state with its changelog, one stream thread, the record cache on, a commit every
 * `commitIntervalMs`) over `topic`, built with Maven first. Returns its events/s, from its start() until its
 * committed offsets cover the topic (group join included), as passk's clock runs from opening its log to its last
 * commit.
 */
export const runKafkaStreamsPeer = async (o: {
  brokers: readonly string[];
  topic: string;
  events: number;
  /** passk's batch window. */
  commitIntervalMs: number;
  log: (line: string) => void;
}): Promise<number> => {
  o.log('processors: building the Kafka Streams peer (mvn package) …');
  await run('mvn', ['-q', '-B', '-DskipTests', 'package'], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
  const { stdout } = await run(
    'java',
    [
      '-cp',
      `${join(dir, 'target', 'kafka-streams-peer-0.1.0.jar')}:${join(dir, 'target', 'lib', '*')}`,
      'passk.peer.TrialAggregation',
      o.brokers.join(','),
      o.topic,
      String(o.events),
      `passk-peer-${Date.now().toString(36)}`,
      String(o.commitIntervalMs),
    ],
    { maxBuffer: 16 * 1024 * 1024, timeout: 15 * 60_000 },
  );
  const line = stdout.trim().split('\n').at(-1) ?? '';
  const r = JSON.parse(line) as { events: number; ms: number; foldedMs: number };
  o.log(`processors: Kafka Streams peer: last event folded at ${r.foldedMs} ms, committed at ${r.ms} ms`);
  return r.events / (r.ms / 1000);
};
