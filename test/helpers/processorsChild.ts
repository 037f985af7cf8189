/**
 * A processor instance in its own process, for the processors' integration tests:
 *   node --import tsx processorsChild.ts '<json options>'
 * Opens the event log (embedded in `dataDir`, or Kafka under `namespace`), runs the processors and
 * prints one JSON line per committed unit ({"type":"progress",…}) and one at the end ({"type":"done",…}).
 * SIGTERM stops it cleanly (what is in flight is made durable and committed); SIGKILL is the crash.
 */
import { PasskConfig } from '../../deploy/config.ts';
import { openEventLog } from '../../deploy/eventLog.ts';
import { startProcessors } from '../../deploy/processors.ts';

export interface ChildOptions {
  backend: 'embedded' | 'kafka';
  dataDir: string;
  brokers?: string;
  registry?: string;
  namespace?: string;
  store?: boolean;
  untilCaughtUp?: boolean;
  instanceId: string;
  maxBatch?: number;
  maxWaitMs?: number;
}

const o = JSON.parse(process.argv[2] ?? '{}') as ChildOptions;
const config = PasskConfig.parse({
  backend: o.backend,
  dataDir: o.dataDir,
  ...(o.backend === 'kafka'
    ? { kafka: { brokers: o.brokers!.split(','), schemaRegistryUrl: o.registry!, partitions: 4 } }
    : {}),
});
const log = await openEventLog(config, o.namespace === undefined ? {} : { namespace: o.namespace });
const run = await startProcessors(config, {
  log,
  store: o.store ?? false,
  untilCaughtUp: o.untilCaughtUp ?? false,
  instanceId: o.instanceId,
  ...(o.maxBatch ? { maxBatch: o.maxBatch } : {}),
  ...(o.maxWaitMs !== undefined ? { maxWaitMs: o.maxWaitMs } : {}),
  onDecision: (d) => {
    for (const e of d.emitted) process.stdout.write(JSON.stringify({ type: 'decision', event: e.type }) + '\n');
  },
  onAssignment: (a) => process.stdout.write(JSON.stringify({ type: 'assignment', ...a }) + '\n'),
  onProgress: (p) =>
    process.stdout.write(
      JSON.stringify({ type: 'progress', records: p.records, trials: p.trials, committed: p.committed }) + '\n',
    ),
});
process.on('SIGTERM', () => {
  process.stdout.write(JSON.stringify({ type: 'stopping' }) + '\n');
  run.stop();
});
process.stdout.write(JSON.stringify({ type: 'started' }) + '\n');
const totals = await run.done;
process.stdout.write(JSON.stringify({ type: 'drained', ...totals }) + '\n');
await log.close();
process.stdout.write(JSON.stringify({ type: 'done', ...totals }) + '\n');
// kafkajs can leave a crash-restart timer behind a consumer closed mid-rebalance: nothing is pending, so leave
process.exit(0);
