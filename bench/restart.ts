/**
 * Restart after a crash (issue #17, part 5), on Kafka: how long `passk process` takes to make progress again when it
 * is restarted right after a SIGKILL, against how long a clean first start takes, in the same run. Progress is the
 * first advance of the `passk-trials` group's committed offsets (read with the admin client). The process is killed
 * idle, caught up, as a member of its group; then more trials are published and it is started again at once. The difference is the
 * wait for the dead member's session to expire (10 s; log/kafka/consumer.ts), which kafkajs cannot skip (no static
 * membership).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel } from 'kafkajs';
import { loadConfig } from '../deploy/config.ts';
import { openEventLog } from '../deploy/eventLog.ts';
import { TOPICS } from '../schemas/topics.ts';
import { chunks, syntheticTrials } from './processors.ts';

export interface Restart {
  /** Clean start (empty group) to the first committed progress, ms. */
  readonly cleanStartMs: number;
  /** Restart right after a SIGKILL to the first committed progress past what the killed process committed, ms. */
  readonly restartMs: number;
}

export async function benchRestart(o: {
  kafka: { brokers: readonly string[]; schemaRegistryUrl: string };
  root: string;
  trials: number;
  log: (line: string) => void;
}): Promise<Restart> {
  const namespace = `bench-restart-${Date.now().toString(36)}.`;
  const dir = mkdtempSync(join(tmpdir(), 'passk-bench-restart-'));
  const env = {
    ...process.env,
    PASSK_BACKEND: 'kafka',
    KAFKA_BROKERS: o.kafka.brokers.join(','),
    SCHEMA_REGISTRY_URL: o.kafka.schemaRegistryUrl,
    PASSK_KAFKA_NAMESPACE: namespace,
    PASSK_DATA_DIR: dir,
  };
  const admin = new Kafka({ brokers: [...o.kafka.brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const log = await openEventLog(loadConfig({ backend: 'kafka' }), { namespace });
  const committed = async (): Promise<number> => {
    const [t] = await admin.fetchOffsets({ groupId: `${namespace}passk-trials`, topics: [namespace + TOPICS.trials] });
    return (t?.partitions ?? []).reduce((n, p) => n + Math.max(0, Number(p.offset)), 0);
  };
  const publish = async (from: number) => {
    const all = [...syntheticTrials({ events: from + o.trials, rows: 200, versions: 2 })].slice(from);
    for (const part of chunks(all, 500)) await log.publisher.publish(part);
  };
  const processor = (): ChildProcess =>
    spawn(process.execPath, [join(o.root, 'bin', 'passk.mjs'), 'process'], { env, stdio: 'ignore' });
  /** ms from now until the group's committed total passes `above`. */
  const progressPast = async (above: number, t0: number): Promise<number> => {
    while ((await committed()) <= above) {
      if (performance.now() - t0 > 180_000) throw new Error(`restart bench: no progress past ${above} in 180 s`);
      await sleep(50);
    }
    return performance.now() - t0;
  };
  let child: ChildProcess | undefined;
  try {
    await publish(0);
    let t0 = performance.now();
    child = processor();
    const cleanStartMs = await progressPast(0, t0);
    while ((await committed()) < o.trials) await sleep(100);
    // killed while it is a member of the group: the broker still counts it until its session expires
    child.kill('SIGKILL');
    await new Promise((resolve) => child!.once('exit', resolve));
    const before = await committed();
    await publish(o.trials);
    o.log(`restart: killed with ${before.toLocaleString('en-US')} trials committed, ${o.trials} more published`);
    t0 = performance.now();
    child = processor();
    const restartMs = await progressPast(before, t0);
    return { cleanStartMs, restartMs };
  } finally {
    child?.kill('SIGTERM');
    if (child && child.exitCode === null) await new Promise((resolve) => child!.once('exit', resolve));
    await log.close();
    await admin.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}
