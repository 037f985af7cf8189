/**
 * `npm run bench`: every figure is a ratio to a baseline measured in the same run, on the same
 * events, so machine speed and load mostly cancel out. Absolute rates are printed for context only.
 *
 *   npm run bench                      processors, event log and store (embedded)
 *   npm run bench -- processors sink   only those
 *   npm run bench -- startup           CLI start-up: built dist/ against the tsx dev entry
 *   KAFKA_BROKERS=… SCHEMA_REGISTRY_URL=… npm run bench   also through Kafka
 *   PASSK_BENCH_SCALE=0.1 npm run bench                 a tenth of the default sizes (a quick look)
 */
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import { loadConfig } from '../deploy/config.ts';
import { openEventLog } from '../deploy/eventLog.ts';
import { benchEventLog } from './eventLog.ts';
import { benchProcessors } from './processors.ts';
import { benchSink } from './sink.ts';
import { benchStartup } from './startup.ts';

const scale = Number(process.env.PASSK_BENCH_SCALE ?? 1);
const only = new Set(process.argv.slice(2));
const wanted = (name: string) => only.size === 0 || only.has(name);
const log = (line: string) => process.stderr.write(`${line}\n`);
const kafka =
  process.env.KAFKA_BROKERS && process.env.SCHEMA_REGISTRY_URL
    ? { brokers: process.env.KAFKA_BROKERS.split(','), schemaRegistryUrl: process.env.SCHEMA_REGISTRY_URL }
    : undefined;

const rate = (x: number) => `${Math.round(x).toLocaleString('en-US')}/s`;
const table = new Table({ head: ['what', 'rate', 'baseline (same run)', 'baseline rate', 'ratio'] });

if (wanted('processors')) {
  log('processors: fold and decode+fold over synthetic trials …');
  const lines = await benchProcessors({
    events: Math.round(2_000_000 * scale),
    rows: Math.max(1, Math.round(50_000 * scale)),
    e2eEvents: Math.round(200_000 * scale),
    ...(kafka
      ? {
          kafka: {
            brokers: kafka.brokers,
            open: () => openEventLog(loadConfig({ backend: 'kafka' }), { namespace: `bench-${Date.now()}-` }),
          },
        }
      : {}),
    log,
  });
  for (const l of lines)
    table.push([l.name, rate(l.eventsPerSec), l.baseline, rate(l.baselineEventsPerSec), `${l.ratio.toFixed(2)}×`]);
}

if (wanted('log')) {
  log('event log: publish then consume …');
  const r = await benchEventLog({ n: Math.round(20_000 * scale), ...(kafka ? { kafka } : {}), log });
  table.push(['embedded log, end to end', rate(r.embedded.endToEndPerSec), '—', '—', '—']);
  if (r.kafka)
    table.push([
      'Kafka consume (decode + validate)',
      rate(r.kafka.consumePerSec),
      'raw kafkajs consume, same topic',
      rate(r.kafka.rawConsumePerSec),
      `${r.kafka.consumeVsRaw.toFixed(2)}×`,
    ]);
}

if (wanted('sink')) {
  log('store: inserts and queries on chDB …');
  const r = await benchSink({ trials: Math.round(1_000_000 * scale), log });
  table.push([
    'sink insert (trials)',
    rate(r.sinkRowsPerSec),
    'raw client.insert, same rows',
    rate(r.rawRowsPerSec),
    `${r.ratio.toFixed(2)}×`,
  ]);
  const per1M = (ms: number) => `${((ms * 1_000_000) / r.trials).toFixed(0)} ms per 1M`;
  const scan = 'plain scan, same trials (countIf, no FINAL)';
  const query = (what: string, t: { ms: number; vsScan: number }) =>
    table.push([
      what,
      `${t.ms.toFixed(1)} ms (${per1M(t.ms)})`,
      scan,
      `${r.scanMs.toFixed(1)} ms`,
      `${t.vsScan.toFixed(2)}×`,
    ]);
  const trials = `${r.trials.toLocaleString('en-US')} trials`;
  query(`summary from trials FINAL (${trials})`, r.summary.trials);
  query(`summary from row_state FINAL (${r.rows.toLocaleString('en-US')} rows)`, r.summary.row_state);
  query(`summary from version_summaries (${r.snapshots} snapshots, ${r.snapshotParts} parts)`, r.summary.summaries);
  query('pass^k curve from trials FINAL', r.passCurve.trials);
  query('pass^k curve from version_summaries', r.passCurve.summaries);
  log(
    `summary target: under 100 ms per 1M trials; from version_summaries ${per1M(r.summary.summaries.ms)}, from row_state ${per1M(r.summary.row_state.ms)}, from trials ${per1M(r.summary.trials.ms)}`,
  );
}

if (wanted('startup')) {
  log('CLI start-up: dist/cli/bin.js against bin/passk.mjs (tsx) …');
  const root = fileURLToPath(new URL('..', import.meta.url));
  for (const l of benchStartup({ root, runs: Math.max(3, Math.round(5 * scale)), log }))
    table.push([
      `${l.name} (built, median)`,
      `${l.builtMs.toFixed(0)} ms`,
      'dev entry through tsx',
      `${l.devMs.toFixed(0)} ms`,
      `${(l.devMs / l.builtMs).toFixed(2)}× faster`,
    ]);
}

process.stdout.write(`${table.toString()}\n`);
