import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kafka, logLevel } from 'kafkajs';
import { createEmbeddedEventLog, createKafkaEventLog, createRegistryClient } from '../log/index.ts';
import type { EventLog } from '../processors/ports.ts';
import { deterministicEventId } from '../schemas/ids.ts';
import { TOPICS } from '../schemas/topics.ts';
import type { TrialRecorded } from '../schemas/events/trialRecorded.ts';

export interface EventLogBenchOptions {
  /** Events per run. @default 20000 */
  readonly n?: number;
  /** Events per publish call. @default 1000 */
  readonly publishBatch?: number;
  /** Also measure Kafka (plus a raw kafkajs consume loop on the same topic) when given. */
  readonly kafka?: { readonly brokers: readonly string[]; readonly schemaRegistryUrl: string };
  readonly log?: (line: string) => void;
}

export interface Throughput {
  /** events/s through publish (encode, validate, append, ack) */
  readonly publishPerSec: number;
  /** events/s through a consumer (fetch, decode, validate, commit per batch) */
  readonly consumePerSec: number;
  /** n / (publish time + consume time) */
  readonly endToEndPerSec: number;
}

export interface EventLogBenchResult {
  readonly n: number;
  readonly embedded: Throughput;
  readonly kafka?: Throughput & { readonly rawConsumePerSec: number; readonly consumeVsRaw: number };
}

const T0 = Date.UTC(2025, 0, 1);
const events = (n: number): TrialRecorded[] =>
  Array.from({ length: n }, (_, i) => ({
    event_id: deterministicEventId(T0 + i, 'bench', i),
    type: 'TrialRecorded',
    schema_version: 1,
    occurred_at: T0 + i,
    producer: 'passk-bench/0',
    suite: 'bench',
    dataset_version: 'v1',
    row_id: `row-${i % 500}`,
    run_id: 'run-1',
    attempt: Math.floor(i / 500),
    agent: { version: 'agent-1', model: 'model-x' },
    output: `answer ${i}`,
    expected: 'answer',
    passed: i % 3 !== 0,
    latency_ms: 120,
  }));

const perSec = (n: number, ms: number) => Math.round((n / ms) * 1000);

const measure = async (log: EventLog, n: number, batch: number): Promise<Throughput> => {
  const all = events(n);
  const t0 = performance.now();
  for (let i = 0; i < n; i += batch) await log.publisher.publish(all.slice(i, i + batch));
  const published = performance.now() - t0;
  const consumer = await log.consumer({ groupId: 'bench', topics: [TOPICS.trials], maxBatch: 1_000 });
  const t1 = performance.now();
  let seen = 0;
  for await (const b of consumer.batches()) {
    seen += b.events.length;
    await consumer.commit([{ topic: b.topic, partition: b.partition, nextOffset: b.lastOffset + 1 }]);
    if (seen >= n) break;
  }
  const consumed = performance.now() - t1;
  await consumer.close();
  return {
    publishPerSec: perSec(n, published),
    consumePerSec: perSec(n, consumed),
    endToEndPerSec: perSec(n, published + consumed),
  };
};

const rawConsume = async (kafka: Kafka, topic: string, n: number): Promise<number> => {
  const consumer = kafka.consumer({
    groupId: `raw-${randomBytes(4).toString('hex')}`,
    maxBytesPerPartition: 1_048_576,
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  let seen = 0;
  // from run() on, group join and first fetch included, as for passk's consumer: timing from the
  // first batch measured nothing when one fetch brought every message (92M msg/s)
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    void consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        seen += batch.messages.length;
        if (seen >= n) resolve();
      },
    });
  });
  const ms = performance.now() - t0;
  await consumer.disconnect();
  return perSec(n, ms);
};

/** End-to-end events/s through the embedded log and (optionally) Kafka, vs raw kafkajs. */
export async function benchEventLog(opts: EventLogBenchOptions = {}): Promise<EventLogBenchResult> {
  const n = opts.n ?? 20_000;
  const batch = opts.publishBatch ?? 1_000;
  const say = opts.log ?? (() => {});
  const dataDir = mkdtempSync(join(tmpdir(), 'passk-bench-log-'));
  let embedded: Throughput;
  const log = createEmbeddedEventLog({ dataDir });
  try {
    embedded = await measure(log, n, batch);
  } finally {
    await log.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  say(
    `embedded: publish ${embedded.publishPerSec}/s, consume ${embedded.consumePerSec}/s, end-to-end ${embedded.endToEndPerSec}/s`,
  );
  if (!opts.kafka) return { n, embedded };

  const namespace = `bench${Date.now().toString(36)}.`;
  const kafka = new Kafka({ clientId: 'passk-bench', brokers: [...opts.kafka.brokers], logLevel: logLevel.NOTHING });
  const registry = createRegistryClient({ url: opts.kafka.schemaRegistryUrl });
  const klog = await createKafkaEventLog({ kafka, registry, namespace });
  try {
    const k = await measure(klog, n, batch);
    const raw = await rawConsume(kafka, namespace + TOPICS.trials, n);
    const result = { ...k, rawConsumePerSec: raw, consumeVsRaw: Math.round((k.consumePerSec / raw) * 100) / 100 };
    say(
      `kafka: publish ${k.publishPerSec}/s, consume ${k.consumePerSec}/s, end-to-end ${k.endToEndPerSec}/s; raw kafkajs consume ${raw}/s (passk/raw = ${result.consumeVsRaw})`,
    );
    return { n, embedded, kafka: result };
  } finally {
    await klog.close();
    const admin = kafka.admin();
    await admin.connect();
    const mine = (await admin.listTopics()).filter((t) => t.startsWith(namespace));
    await admin.deleteTopics({ topics: mine }).catch(() => {});
    await admin.disconnect();
  }
}

export interface KeyIndexAppendResult {
  /** Records appended per run. */
  readonly n: number;
  /** µs per record appended to passk.rowstate with the indexes by key (as a log has them), best of the runs. */
  readonly withIndexUs: number;
  /** The same on a log whose indexes by key were dropped (a log before them), same run. */
  readonly withoutIndexUs: number;
  /** ms to build the indexes over the `n` records on the first open of a log written without them. */
  readonly migrationMs: number;
}

/**
 * The append cost of the embedded log's indexes by key (`records_rowstate_by_key`, `records_decisions_by_key`):
 * `n` row-state-sized records (400 bytes, keyed as row states: 50 rows per version, versions in turn) appended to
 * passk.rowstate in publishes of `publishBatch`, on a log with the indexes and on one with them dropped, alternately
 * (`runs` each, best kept). synchronous = NORMAL, so the fsync per publish does not hide the index's own cost. Then
 * the migration: the log without them opened again, which builds them.
 */
export async function benchKeyIndexAppend(
  opts: { n?: number; publishBatch?: number; runs?: number } = {},
): Promise<KeyIndexAppendResult> {
  const n = opts.n ?? 200_000;
  const batch = opts.publishBatch ?? 1_000;
  const value = randomBytes(400);
  const records = Array.from({ length: n }, (_, i) => ({
    key: ['s', 'd1', `v${Math.floor(i / 50)}`, `row-${i % 50}`].join('\u001f'),
    value,
  }));
  const appendUs = async (dropIndexes: boolean): Promise<{ us: number; dataDir: string }> => {
    const dataDir = mkdtempSync(join(tmpdir(), 'passk-bench-keyindex-'));
    const log = createEmbeddedEventLog({ dataDir, synchronous: 'NORMAL' });
    if (dropIndexes) {
      // dropped with the log open (its statements are prepared again by SQLite; none it appends with names them)
      const db = new Database(join(dataDir, 'log.sqlite'));
      db.exec(
        'DROP INDEX records_rowstate_by_key; DROP INDEX records_decisions_by_key; DROP INDEX records_rowstate_odd',
      );
      db.close();
    }
    try {
      const t0 = performance.now();
      for (let i = 0; i < n; i += batch) await log.publisher.publishRaw(TOPICS.rowstate, records.slice(i, i + batch));
      return { us: ((performance.now() - t0) * 1000) / n, dataDir };
    } finally {
      await log.close();
    }
  };
  let withIndexUs = Infinity;
  let withoutIndexUs = Infinity;
  let migrationMs = Infinity;
  for (let r = 0; r < (opts.runs ?? 3); r++) {
    const a = await appendUs(true);
    withoutIndexUs = Math.min(withoutIndexUs, a.us);
    const t0 = performance.now();
    await createEmbeddedEventLog({ dataDir: a.dataDir, synchronous: 'NORMAL' }).close();
    migrationMs = Math.min(migrationMs, performance.now() - t0);
    rmSync(a.dataDir, { recursive: true, force: true });
    const b = await appendUs(false);
    withIndexUs = Math.min(withIndexUs, b.us);
    rmSync(b.dataDir, { recursive: true, force: true });
  }
  return { n, withIndexUs, withoutIndexUs, migrationMs };
}
