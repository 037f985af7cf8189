/**
 * In-process A/B of the Kafka changelog pipelining (issue #14, docs/performance.md): the trial topology
 * on Kafka with its changelog (no store), with one changelog publish in flight at a time (A, before) and
 * with `maxPublishesInFlight` of them (B), alternating A/B in one process, each run on its own namespace
 * (so no run restores another's changelog), wall time:
 *   KAFKA_BROKERS=… SCHEMA_REGISTRY_URL=… node --import tsx bench/profile/kafkaAb.ts [events=50000] [pairs=3] [b=4] [a=1]
 * (a or b = 0: no changelog publish at all)
 */
import { lastValueFrom, toArray } from 'rxjs';
import { performance } from 'node:perf_hooks';
import { PasskConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import { partitionOf } from '../../log/partitioner.ts';
import { trialTopology } from '../../processors/index.ts';
import { chunks, syntheticTrials } from '../processors.ts';

const n = Number(process.argv[2] ?? 50_000);
const pairs = Number(process.argv[3] ?? 3);
const b = Number(process.argv[4] ?? 4);
const a = Number(process.argv[5] ?? 1);
const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
const schemaRegistryUrl = process.env.SCHEMA_REGISTRY_URL;
if (brokers.length === 0 || !schemaRegistryUrl) throw new Error('set KAFKA_BROKERS and SCHEMA_REGISTRY_URL');
const config = PasskConfig.parse({ backend: 'kafka', kafka: { brokers, schemaRegistryUrl } });
const events = [...syntheticTrials({ events: n, rows: 5_000, versions: 4 })];

const once = async (inFlight: number, tag: string): Promise<number> => {
  const log = await openEventLog(config, { namespace: `ab${Date.now().toString(36)}${tag}.` });
  try {
    for (const part of chunks(events, 5_000)) await log.publisher.publish(part);
    const t0 = performance.now();
    await lastValueFrom(
      trialTopology(
        {
          source: log,
          // 0 in flight: no changelog at all (what the rest of the pipeline costs)
          publisher: inFlight === 0 ? { ...log.publisher, publish: async () => {} } : log.publisher,
          sink: { writeTrials: async () => {} },
        },
        {
          instanceId: 'ab',
          producer: 'passk-bench/0',
          partitionOf,
          maxBatch: 1_000,
          untilCaughtUpEveryMs: 50,
          maxPublishesInFlight: Math.max(1, inFlight),
        },
      ).pipe(toArray()),
    );
    return n / ((performance.now() - t0) / 1_000);
  } finally {
    await log.close();
  }
};

const rate = (r: number) => `${Math.round(r).toLocaleString('en-US')} ev/s`;
const ratios: number[] = [];
for (let i = 0; i < pairs; i++) {
  // alternate which goes first, so a trend in the machine's load does not favour one side
  const first = i % 2 === 0 ? a : b;
  const r1 = await once(first, `p${i}a`);
  const r2 = await once(first === a ? b : a, `p${i}b`);
  const [ra, rb] = first === a ? [r1, r2] : [r2, r1];
  ratios.push(rb / ra);
  console.log(`pair ${i + 1}: ${a} in flight ${rate(ra)}, ${b} in flight ${rate(rb)}: ${(rb / ra).toFixed(2)}×`);
}
ratios.sort((x, y) => x - y);
console.log(`median ${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)}× (${pairs} pairs, ${n} trials each)`);
