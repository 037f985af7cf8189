/**
 * `passk process --until-caught-up` with its store (chDB), as a whole process, against the same job in plain code
 * with the store, as a whole process (issue #30, item 1): on the embedded log (bench/plain/embeddedProcess.ts, on
 * copies of one log) or on Kafka (bench/plain/kafkaProcess.ts, the same trials published under a fresh namespace
 * for each repetition, read by both). Both clocks run from spawn to exit: start-up, opening and migrating the store, and the last unit's
 * commit are in both. Each repetition copies the seeded log twice, runs the two in alternating order, and then
 * checks that the two stores hold the same bytes of `trials` and of each row's latest `row_state`
 * (bench/plain/storeDigest.ts): a baseline that stores something else is not the same job, and the bench fails.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PasskConfig } from '../deploy/config.ts';
import { openEventLog } from '../deploy/eventLog.ts';
import { createEmbeddedEventLog } from '../log/embedded/embeddedLog.ts';
import { chunks, syntheticTrials } from './processors.ts';

export interface ProcessStoreRun {
  /** Wall seconds, spawn to exit. */
  readonly passkSeconds: number;
  readonly plainSeconds: number;
  /** CPU seconds (user + sys) of each process, when /usr/bin/time is there. */
  readonly passkCpu?: number;
  readonly plainCpu?: number;
  /** 1-minute load average after the pair. */
  readonly load: number;
}

export interface ProcessStore {
  readonly trials: number;
  /** Bytes of the log's trial records per trial. */
  readonly bytesPerTrial: number;
  readonly runs: readonly ProcessStoreRun[];
  /** The stores differed (each sentence names the table): the bench must fail. */
  readonly differences: readonly string[];
}

const TIME = '/usr/bin/time';

/** Runs a node command to its end: wall seconds, CPU seconds (with /usr/bin/time), stdout. Throws on a failure. */
const run = (root: string, args: string[], env: NodeJS.ProcessEnv): { wall: number; cpu?: number; out: string } => {
  const withTime = spawnSync(TIME, ['-V'], { stdio: 'ignore' }).status === 0;
  const cmd = withTime ? TIME : process.execPath;
  const argv = withTime ? ['-f', 'cpu %U %S', process.execPath, ...args] : args;
  const t = performance.now();
  const r = spawnSync(cmd, argv, { cwd: root, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const wall = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2_000)}`);
  const m = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  return { wall, out: r.stdout, ...(m ? { cpu: Number(m[1]) + Number(m[2]) } : {}) };
};

export async function benchProcessStore(o: {
  root: string;
  trials: number;
  rows: number;
  versions?: number;
  repetitions?: number;
  /** On Kafka (the store still chDB in a data dir): each repetition publishes the trials under a fresh namespace. */
  kafka?: { brokers: readonly string[]; schemaRegistryUrl: string };
  log: (line: string) => void;
}): Promise<ProcessStore> {
  const work = mkdtempSync(join(tmpdir(), 'passk-bench-process-'));
  try {
    const seed = join(work, 'seed');
    const events = [...syntheticTrials({ events: o.trials, rows: o.rows, versions: o.versions ?? 2 })];
    const bytesPerTrial = events.reduce((n, e) => n + JSON.stringify(e).length, 0) / events.length;
    const k = o.kafka;
    const publish = async (namespace: string) => {
      const log = k
        ? await openEventLog(
            PasskConfig.parse({
              backend: 'kafka',
              kafka: { brokers: [...k.brokers], schemaRegistryUrl: k.schemaRegistryUrl },
            }),
            { namespace },
          )
        : createEmbeddedEventLog({ dataDir: seed, synchronous: 'NORMAL' });
      for (const part of chunks(events, 5_000)) await log.publisher.publish(part);
      await log.close();
    };
    if (!k) await publish('');
    const env: NodeJS.ProcessEnv = k
      ? {
          ...process.env,
          PASSK_BACKEND: 'kafka',
          KAFKA_BROKERS: k.brokers.join(','),
          SCHEMA_REGISTRY_URL: k.schemaRegistryUrl,
        }
      : { ...process.env, PASSK_BACKEND: 'embedded' };
    const runs: ProcessStoreRun[] = [];
    const differences: string[] = [];
    for (let i = 0; i < (o.repetitions ?? 3); i++) {
      const passkDir = join(work, `passk-${i}`);
      const plainDir = join(work, `plain-${i}`);
      const namespace = `bench-process-${Date.now().toString(36)}-${i}.`;
      if (k) {
        mkdirSync(passkDir);
        mkdirSync(plainDir);
        await publish(namespace);
      } else {
        cpSync(seed, passkDir, { recursive: true });
        cpSync(seed, plainDir, { recursive: true });
      }
      const passk = () =>
        run(o.root, ['bin/passk.mjs', 'process', '--until-caught-up', '--json'], {
          ...env,
          PASSK_DATA_DIR: passkDir,
          ...(k ? { PASSK_KAFKA_NAMESPACE: namespace } : {}),
        });
      const plain = () =>
        k
          ? run(
              o.root,
              ['--import', 'tsx', 'bench/plain/kafkaProcess.ts', plainDir, k.brokers.join(','), namespace],
              env,
            )
          : run(o.root, ['--import', 'tsx', 'bench/plain/embeddedProcess.ts', plainDir], env);
      // alternate which goes first, so a burst of load does not always hit the same side
      let a: ReturnType<typeof run>;
      let b: ReturnType<typeof run>;
      if (i % 2 === 0) {
        a = passk();
        b = plain();
      } else {
        b = plain();
        a = passk();
      }
      const r: ProcessStoreRun = {
        passkSeconds: a.wall,
        plainSeconds: b.wall,
        ...(a.cpu !== undefined ? { passkCpu: a.cpu } : {}),
        ...(b.cpu !== undefined ? { plainCpu: b.cpu } : {}),
        load: loadavg()[0]!,
      };
      runs.push(r);
      const digest = (dir: string) =>
        JSON.parse(run(o.root, ['--import', 'tsx', 'bench/plain/storeDigest.ts', dir], env).out) as Record<
          string,
          { rows: number; sha256: string }
        >;
      const [dp, dq] = [digest(passkDir), digest(plainDir)];
      for (const table of Object.keys(dp))
        if (dp[table]!.sha256 !== dq[table]?.sha256)
          differences.push(
            `${table}: passk stored ${dp[table]!.rows} rows (sha256 ${dp[table]!.sha256.slice(0, 12)}), the plain ` +
              `code ${dq[table]?.rows} (${dq[table]?.sha256.slice(0, 12)}): not the same job`,
          );
      o.log(
        `process with store${k ? ' (Kafka)' : ''} ${i + 1}: passk ${r.passkSeconds.toFixed(1)} s` +
          `${r.passkCpu !== undefined ? ` (CPU ${r.passkCpu.toFixed(1)} s)` : ''}, plain ${r.plainSeconds.toFixed(1)} s` +
          `${r.plainCpu !== undefined ? ` (CPU ${r.plainCpu.toFixed(1)} s)` : ''}: ` +
          `${(r.plainSeconds / r.passkSeconds).toFixed(2)}×, load ${r.load.toFixed(1)}; stores ` +
          `${differences.length === 0 ? `identical (${dp.trials!.rows} trials, ${dp.row_state!.rows} rows)` : 'DIFFER'}`,
      );
      rmSync(passkDir, { recursive: true, force: true });
      rmSync(plainDir, { recursive: true, force: true });
    }
    return { trials: o.trials, bytesPerTrial, runs, differences };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
