import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { lastValueFrom, toArray } from 'rxjs';
import { fastJsonCodec } from '../log/fastValidate.ts';
import type { TrialRecorded } from '../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../schemas/ids.ts';
import { TOPICS, KEY_SEP } from '../schemas/topics.ts';
import { decodeRecords } from '../log/deadLetters.ts';
import { createEmbeddedEventLog } from '../log/embedded/embeddedLog.ts';
import { partitionOf } from '../log/partitioner.ts';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { PasskConfig } from '../deploy/config.ts';
import { openEventLog } from '../deploy/eventLog.ts';
import type {
  EventBatch,
  EventConsumer,
  EventLog,
  EventPublisher,
  EventSource,
  RawRecord,
} from '../processors/ports.ts';
import { trialTopology, type TrialSink } from '../processors/index.ts';
import { peerAvailable, runKafkaStreamsPeer } from './peers/kafkaStreams.ts';

/**
 * Processor benchmarks. Every number is a ratio to a baseline measured in the same run on the same
 * events, so machines and load cancel out:
 * - fold: the trial topology (its real operators, with no-op log and sink ports) vs a plain `for`
 *   loop calling the same row fold on a Map. The topology also builds a changelog record per changed
 *   row per durable unit, which the loop does not.
 * - decode+fold: the topology fed raw bytes decoded as the log adapters do (`decodeRecords`: JSON
 *   parse + one validation, log/fastValidate.ts) vs a plain loop that decodes each record the same way, then folds.
 * - end to end (embedded log): events/s of the topology consuming a real embedded log, vs a raw
 *   consume loop over the same log (fetch, decode, commit; no fold).
 * - end to end (Kafka, when `kafka` is given): the topology through the Kafka adapter (registry
 *   decode, group consumer, commits), with and without its changelog publish, vs a raw kafkajs
 *   consume loop on the same topic (no decode, no commit). Wall time, group joins included.
 * - ceilings: the same job in plain code (attempts kept, a changelog record per changed row per batch; decode
 *   and fold; on Kafka, decode, fold, changelog send and commit) against the same baselines, and passk against
 *   it: how much of each target any implementation could reach here (docs/performance.md, "Session 10").
 * In-memory ratios are medians of alternating runs, in CPU time of this process (GC threads
 * included): on a shared machine that is steadier than wall time.
 */
export interface BenchProcessorsOptions {
  /** @default 2_000_000 */
  readonly events?: number;
  /** Distinct rows (each run on `versions` agent versions, events/(rows·versions) attempts each). @default 50_000 */
  readonly rows?: number;
  /** @default 4 */
  readonly versions?: number;
  /** Alternating baseline/topology runs per in-memory ratio (median reported). @default 3 */
  readonly pairs?: number;
  /** Events through the embedded log end to end. @default 200_000 */
  readonly e2eEvents?: number;
  /**
   * Also measure end to end through Kafka: `open` opens the Kafka event log under the topic namespace it is
   * given (or give `schemaRegistryUrl` and it is opened here).
   */
  readonly kafka?: {
    readonly brokers: string[];
    readonly schemaRegistryUrl?: string;
    readonly open?: (namespace: string) => Promise<EventLog>;
    readonly log?: (line: string) => void;
  };
  /** Events through Kafka end to end. @default 100_000 */
  readonly kafkaEvents?: number;
  readonly log?: (line: string) => void;
}

export interface BenchLine {
  readonly name: string;
  /** Encoded bytes per event (for the bandwidth check, bench/plausible.ts). */
  readonly bytesPerItem?: number;
  /** The baseline does a subset of passk's work: it must beat passk. */
  readonly subset?: boolean;
  readonly eventsPerSec: number;
  readonly baseline: string;
  readonly baselineEventsPerSec: number;
  readonly ratio: number;
}

const T0 = 1_767_225_600_000;
const PRODUCER = 'passk-bench/0';
/** passk's batch window (`batchWindowMs`, deploy/config.ts): its durable unit, and the peer's commit interval. */
const BATCH_WINDOW_MS = 500;

/** Attempt-major order, like k runs over the dataset one after the other. */
export const syntheticTrials = function* (o: {
  events: number;
  rows: number;
  versions: number;
}): Generator<TrialRecorded> {
  const agents = Array.from({ length: o.versions }, (_, v) => ({ version: `agent-${v}`, model: 'model-x' }));
  const attempts = Math.ceil(o.events / (o.rows * o.versions));
  let i = 0;
  for (let a = 0; a < attempts; a++)
    for (let r = 0; r < o.rows; r++)
      for (let v = 0; v < o.versions; v++) {
        if (i >= o.events) return;
        const at = T0 + i;
        yield {
          event_id: deterministicEventId(at, i),
          type: 'TrialRecorded',
          schema_version: 1,
          occurred_at: at,
          producer: PRODUCER,
          suite: 'bench',
          dataset_version: 'd1',
          row_id: `row-${r}`,
          run_id: `run-${a}`,
          attempt: a,
          agent: agents[v]!,
          output: (r + a) % 7 === 0 ? 'deny' : 'approve',
          passed: (r * 31 + v * 7 + a) % 5 !== 0,
          checks: [{ name: 'return_window', answer: (r + a) % 3 === 0 }],
        };
        i++;
      }
};

/** Every event's JSON in one buffer; ends[i] is where event i's bytes end. */
const encodeAll = (events: Iterable<TrialRecorded>, n: number): { bytes: Buffer; ends: Uint32Array } => {
  let bytes = Buffer.allocUnsafe(n * 400);
  const ends = new Uint32Array(n);
  let at = 0;
  let i = 0;
  for (const e of events) {
    const json = JSON.stringify(e);
    if (at + json.length * 3 > bytes.length) {
      const bigger = Buffer.allocUnsafe(bytes.length * 2);
      bytes.copy(bigger, 0, 0, at);
      bytes = bigger;
    }
    at += bytes.write(json, at);
    ends[i++] = at;
  }
  return { bytes: bytes.subarray(0, at), ends };
};

/**
 * The tight fold: the fastest plain code doing the topology's work — one mutable entry per row, an
 * event-id set for dedupe, one (run, attempt) slot per attempt with its pass/fail and output, counts
 * kept alongside. No copies, no sorting, no changelog records (those are passk's choices to pay for).
 */
interface TightRow {
  n: number;
  c: number;
  ungraded: number;
  slots: Map<string, { event_id: string; passed: boolean | null; output: string | null }>;
}
/** A verdict counted into (sign 1) or out of (sign -1) a plain fold's row. */
const tally = (row: { n: number; c: number; ungraded: number }, passed: boolean | null, sign: 1 | -1): void => {
  if (passed === null) row.ungraded += sign;
  else {
    row.n += sign;
    if (passed) row.c += sign;
  }
};

export const tightFold = (events: readonly TrialRecorded[]): number => tightFolder().fold(events);

/** The tight fold batch by batch: `fold` folds one batch into `table` and returns its rows so far. */
export const tightFolder = (): {
  fold: (events: readonly TrialRecorded[]) => number;
  table: ReadonlyMap<string, Readonly<Pick<TightRow, 'n' | 'c' | 'ungraded'>>>;
} => {
  const table = new Map<string, TightRow>();
  const seen = new Set<string>();
  const fold = (events: readonly TrialRecorded[]): number => {
    for (const e of events) {
      if (seen.has(e.event_id)) continue;
      seen.add(e.event_id);
      const key = `${e.suite}${KEY_SEP}${e.dataset_version}${KEY_SEP}${e.agent.version}${KEY_SEP}${e.row_id}`;
      let row = table.get(key);
      if (!row) table.set(key, (row = { n: 0, c: 0, ungraded: 0, slots: new Map() }));
      const slot = `${e.run_id}${KEY_SEP}${e.attempt}`;
      const held = row.slots.get(slot);
      if (held && held.event_id < e.event_id) continue;
      if (held) tally(row, held.passed, -1);
      row.slots.set(slot, { event_id: e.event_id, passed: e.passed, output: e.output ?? null });
      tally(row, e.passed, 1);
    }
    return table.size;
  };
  return { fold, table };
};

/** One attempt as the tight changelog fold keeps it: what a changelog record carries of it. */
interface TightAttempt {
  event_id: string;
  run_id: string;
  attempt: number;
  occurred_at: number;
  passed: boolean | null;
  output: string | null;
  checks: NonNullable<TrialRecorded['checks']>;
}
interface TightChangelogRow {
  key: string;
  seq: number;
  n: number;
  c: number;
  ungraded: number;
  slots: Map<string, TightAttempt>;
  attempts: TightAttempt[];
}
/** A changelog-shaped record: a row's counts and a copy of its attempts, as the tight changelog fold emits it. */
export interface TightChangelogRecord {
  event_id: string;
  type: 'RowStateChanged';
  key: string;
  seq: number;
  n: number;
  c: number;
  ungraded: number;
  attempt_records: TightAttempt[];
}

/**
 * The tight fold's work plus what a fold that keeps a changelog must do: each row keeps its attempts, and
 * each batch emits one changelog-shaped record per row it changed, with a copy of the row's attempts (the
 * least that lets a later batch change the row while the record is still being sent). The fastest plain
 * code doing the topology's whole job: the ceiling a changelog-keeping fold can reach against `tightFold`.
 * Returns a function folding one batch into the state it keeps and returning the batch's records.
 */
export const tightChangelogFold = (): ((batch: Iterable<TrialRecorded>) => TightChangelogRecord[]) => {
  const table = new Map<string, TightChangelogRow>();
  const seen = new Set<string>();
  return (batch) => {
    const changed = new Set<TightChangelogRow>();
    for (const e of batch) {
      if (seen.has(e.event_id)) continue;
      seen.add(e.event_id);
      const key = `${e.suite}${KEY_SEP}${e.dataset_version}${KEY_SEP}${e.agent.version}${KEY_SEP}${e.row_id}`;
      let row = table.get(key);
      if (!row) table.set(key, (row = { key, seq: 0, n: 0, c: 0, ungraded: 0, slots: new Map(), attempts: [] }));
      const slot = `${e.run_id}${KEY_SEP}${e.attempt}`;
      const held = row.slots.get(slot);
      if (held && held.event_id < e.event_id) continue;
      const rec: TightAttempt = {
        event_id: e.event_id,
        run_id: e.run_id,
        attempt: e.attempt,
        occurred_at: e.occurred_at,
        passed: e.passed,
        output: e.output ?? null,
        checks: e.checks ?? [],
      };
      if (held) {
        row.attempts[row.attempts.indexOf(held)] = rec;
        tally(row, held.passed, -1);
      } else row.attempts.push(rec);
      row.slots.set(slot, rec);
      tally(row, e.passed, 1);
      row.seq++;
      changed.add(row);
    }
    const records: TightChangelogRecord[] = [];
    for (const row of changed)
      records.push({
        event_id: row.key + row.seq,
        type: 'RowStateChanged',
        key: row.key,
        seq: row.seq,
        n: row.n,
        c: row.c,
        ungraded: row.ungraded,
        attempt_records: row.attempts.slice(),
      });
    return records;
  };
};

/** `tightChangelogFold` over batches: the number of records emitted. */
export const tightChangelogFoldAll = (batches: readonly (readonly TrialRecorded[])[]): number => {
  const fold = tightChangelogFold();
  let records = 0;
  for (const b of batches) records += fold(b).length;
  return records;
};

/** A consumer over batches already in memory: the topology's I/O costs nothing. */
export const memorySource = (batches: () => AsyncIterable<EventBatch>): EventSource => ({
  consumer: async (o) => {
    const consumer: EventConsumer = {
      batches: async function* () {
        await o.onAssigned?.([]);
        yield* batches();
      },
      commit: async () => {},
      committed: async () => new Map(),
      lag: async () => [],
      close: async () => {},
    };
    return consumer;
  },
});
const noSink: TrialSink = { writeTrials: async () => {} };
const noPublisher: EventPublisher = {
  publish: async () => {},
  publishRaw: async () => {},
  publishDeadLetters: async () => 0,
  close: async () => {},
};

export const runTopology = async (source: EventSource): Promise<number> => {
  const progress = await lastValueFrom(
    trialTopology(
      { source, publisher: noPublisher, sink: noSink },
      { instanceId: 'bench', producer: PRODUCER, partitionOf, maxRows: 5_000, maxWaitMs: 50, maxInFlight: 20_000 },
    ).pipe(toArray()),
  );
  return progress.reduce((a, p) => a + p.trials, 0);
};

export const chunks = <T>(items: readonly T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

/** In-memory trials as consumer batches of 1,000, dealt round-robin to 4 partitions, each partition's offsets from 0. */
export const batchesOf = (events: readonly TrialRecorded[]): EventBatch[] =>
  chunks(events, 1_000).map((evs, i) => ({
    topic: TOPICS.trials,
    partition: i % 4,
    lastOffset: Math.floor(i / 4) * 1_000 + evs.length - 1,
    highWatermark: events.length,
    events: evs.map((event, j) => ({
      topic: TOPICS.trials,
      partition: i % 4,
      offset: Math.floor(i / 4) * 1_000 + j,
      key: '',
      event,
    })),
  }));

const timed = async (f: () => Promise<unknown> | unknown): Promise<number> => {
  const t = performance.now();
  await f();
  return (performance.now() - t) / 1000;
};

/** CPU seconds of this process (all threads: GC included) spent in f. On a shared machine this is steadier than wall time. */
const cpu = async (f: () => Promise<unknown> | unknown): Promise<number> => {
  const c = process.cpuUsage();
  await f();
  const d = process.cpuUsage(c);
  return (d.user + d.system) / 1e6;
};

/**
 * Baseline and candidate run alternately (after one warm-up each), `pairs` times; the ratio is the
 * median of the per-pair ratios of CPU time, so a burst of load on the machine hits both sides.
 */
export const paired = async (
  pairs: number,
  baseline: () => Promise<unknown> | unknown,
  candidate: () => Promise<unknown> | unknown,
) => {
  await baseline();
  await candidate();
  const ratios: number[] = [];
  let b = Infinity;
  let c = Infinity;
  for (let i = 0; i < pairs; i++) {
    const tb = await cpu(baseline);
    const tc = await cpu(candidate);
    ratios.push(tb / tc);
    b = Math.min(b, tb);
    c = Math.min(c, tc);
  }
  ratios.sort((x, y) => x - y);
  return { ratio: ratios[Math.floor(ratios.length / 2)]!, baseline: b, candidate: c };
};

export async function benchProcessors(opts: BenchProcessorsOptions = {}): Promise<BenchLine[]> {
  const say = opts.log ?? ((line: string) => console.log(line));
  const shape = { events: opts.events ?? 2_000_000, rows: opts.rows ?? 50_000, versions: opts.versions ?? 4 };
  const lines: BenchLine[] = [];
  /** A line from a `paired` measurement over the run's events (`extra`: its bytes per item). */
  const reportPair = (
    name: string,
    baseline: string,
    m: Awaited<ReturnType<typeof paired>>,
    extra: Pick<BenchLine, 'bytesPerItem'> = {},
  ) =>
    report({
      name,
      subset: true,
      ...extra,
      eventsPerSec: shape.events / m.candidate,
      baseline,
      baselineEventsPerSec: shape.events / m.baseline,
      ratio: m.ratio,
    });
  const report = (l: BenchLine) => {
    lines.push(l);
    say(
      `${l.name.padEnd(44)} ${Math.round(l.eventsPerSec).toLocaleString('en-US').padStart(11)} ev/s   ${l.ratio.toFixed(2)}× ${l.baseline} (${Math.round(l.baselineEventsPerSec).toLocaleString('en-US')} ev/s)`,
    );
  };
  say(
    `processors: ${shape.events.toLocaleString('en-US')} trials over ${shape.rows.toLocaleString('en-US')} rows × ${shape.versions} versions`,
  );

  // 1. fold: topology vs plain loop, 4 partitions of 1000-event batches
  {
    const events = [...syntheticTrials(shape)];
    const batches = batchesOf(events);
    const topology = () =>
      runTopology(
        memorySource(async function* () {
          yield* batches;
        }),
      );
    const m = await paired(opts.pairs ?? 3, () => tightFold(events), topology);
    reportPair('fold: trial topology', 'tight mutable Map fold (attempts, dedupe)', m);
    // the ceiling: the fastest plain code doing the topology's whole job (attempts kept, a changelog record per
    // changed row per batch) against the same tight fold: the most any changelog-keeping fold can reach there
    const parts = batches.map((b) => b.events.map((e) => e.event as TrialRecorded));
    const ceiling = await paired(
      opts.pairs ?? 3,
      () => tightFold(events),
      () => tightChangelogFoldAll(parts),
    );
    reportPair('fold ceiling: plain fold + changelog', 'tight mutable Map fold (attempts, dedupe)', ceiling);
    const same = await paired(opts.pairs ?? 3, () => tightChangelogFoldAll(parts), topology);
    reportPair('fold: trial topology vs the same job, plain', 'plain fold + changelog records', same);
  }

  // 2. decode + fold: both decode every record with the adapters' decoder (JSON + one validation). The bytes sit in
  //    one buffer (2M small Buffers would not fit the heap next to the tables); both sides cut the same
  //    views out of it.
  {
    const { bytes, ends } = encodeAll(syntheticTrials(shape), shape.events);
    const recordsOf = function* (size: number): Generator<RawRecord[]> {
      for (let from = 0; from < shape.events; from += size) {
        const batch: RawRecord[] = [];
        for (let i = from; i < Math.min(shape.events, from + size); i++)
          batch.push({
            topic: TOPICS.trials,
            partition: 0,
            offset: i,
            key: '',
            value: bytes.subarray(i === 0 ? 0 : ends[i - 1]!, ends[i]!),
            timestamp: 0,
          });
        yield batch;
      }
    };
    // decode alone: utf8 + JSON.parse of the same bytes, the least any consumer of JSON records pays
    let sink = 0;
    const utf8 = new TextDecoder();
    const loop = () => {
      for (const batch of recordsOf(1_000))
        for (const r of batch) sink += (JSON.parse(utf8.decode(r.value)) as TrialRecorded).attempt;
    };
    const m = await paired(opts.pairs ?? 3, loop, () =>
      runTopology(
        memorySource(async function* () {
          for (const records of recordsOf(1_000)) {
            const { events } = await decodeRecords(fastJsonCodec, records);
            yield {
              topic: TOPICS.trials,
              partition: 0,
              events,
              lastOffset: records.at(-1)!.offset,
              highWatermark: shape.events,
            };
          }
        }),
      ),
    );
    reportPair('decode+fold: trial topology', 'decode alone (utf8 + JSON.parse)', m, {
      bytesPerItem: bytes.length / shape.events,
    });
    // the ceiling: decode (no validation) and the tight fold, the least any decode + fold costs, against decode alone
    const decodeAndFold = () => {
      const { fold } = tightFolder();
      for (const batch of recordsOf(1_000))
        sink += fold(batch.map((r) => JSON.parse(utf8.decode(r.value)) as TrialRecorded));
    };
    const ceiling = await paired(opts.pairs ?? 3, loop, decodeAndFold);
    reportPair('decode+fold ceiling: JSON.parse + tight fold', 'decode alone (utf8 + JSON.parse)', ceiling, {
      bytesPerItem: bytes.length / shape.events,
    });
    if (sink < 0) say('');
  }

  // 3. end to end through the embedded log
  {
    const n = opts.e2eEvents ?? 200_000;
    const dir = mkdtempSync(join(tmpdir(), 'passk-bench-'));
    try {
      const log = createEmbeddedEventLog({ dataDir: dir, synchronous: 'NORMAL' });
      const events = [...syntheticTrials({ ...shape, events: n })];
      for (const part of chunks(events, 5_000)) await log.publisher.publish(part);
      const raw = await timed(async () => {
        const c = await log.consumer({ groupId: 'bench-raw', topics: [TOPICS.trials], maxBatch: 1_000 });
        let seen = 0;
        for await (const b of c.batches()) {
          seen += b.events.length;
          await c.commit([{ topic: b.topic, partition: b.partition, nextOffset: b.lastOffset + 1 }]);
          if (seen >= n) break;
        }
        await c.close();
      });
      const topo = await timed(() =>
        lastValueFrom(
          trialTopology(
            { source: log, publisher: noPublisher, sink: noSink },
            { instanceId: 'bench', producer: PRODUCER, partitionOf, maxBatch: 1_000, untilCaughtUpEveryMs: 20 },
          ).pipe(toArray()),
        ),
      );
      await log.close();
      report({
        name: 'end to end: embedded log → topology',
        eventsPerSec: n / topo,
        subset: true,
        baseline: 'raw consume loop (embedded)',
        baselineEventsPerSec: n / raw,
        ratio: raw / topo,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (opts.kafka)
    for (const line of await benchKafka({ log: say, ...opts.kafka }, opts.kafkaEvents ?? 100_000, shape)) report(line);
  return lines;
}

/**
 * End to end through Kafka: the trial topology (C's Kafka adapter: registry decode, group consumer,
 * commits; changelog publish to passk.rowstate) vs a raw kafkajs consume loop over the same topic
 * (eachBatch, no decode, no commit): what the broker and client alone cost. Wall time.
 */
const benchKafka = async (
  k: NonNullable<BenchProcessorsOptions['kafka']>,
  n: number,
  shape: { rows: number; versions: number },
): Promise<BenchLine[]> => {
  const namespace = `bench${Date.now().toString(36)}.`;
  const open = () =>
    k.open
      ? k.open(namespace)
      : openEventLog(
          PasskConfig.parse({
            backend: 'kafka',
            kafka: { brokers: k.brokers, schemaRegistryUrl: k.schemaRegistryUrl },
          }),
          { namespace },
        );
  const log = await open();
  try {
    const physical = `${namespace}${TOPICS.trials}`;
    const events = [...syntheticTrials({ ...shape, events: n })];
    for (const part of chunks(events, 5_000)) await log.publisher.publish(part);
    const kafka = new Kafka({ clientId: 'passk-bench', brokers: k.brokers, logLevel: logLevel.NOTHING });
    const raw = await timed(async () => {
      const consumer = kafka.consumer({ groupId: `${namespace}raw`, maxBytesPerPartition: 4 * 1024 * 1024 });
      await consumer.connect();
      await consumer.subscribe({ topics: [physical], fromBeginning: true });
      let seen = 0;
      await new Promise<void>((resolve) => {
        void consumer.run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            seen += batch.messages.length;
            if (seen >= n) resolve();
          },
        });
      });
      await consumer.disconnect();
    });
    // the ceiling: the fastest plain code doing the topology's whole job on Kafka with the same client — decode
    // (no validation), the tight changelog fold, one changelog record per changed row per batch sent as passk sends
    // its changelog (idempotent, acks all, gzip), then the batch's offset committed
    // set up outside the clock, as passk's publisher is (its topics exist and its producer is connected)
    const admin = kafka.admin();
    await admin.connect();
    const [meta] = (await admin.fetchTopicMetadata({ topics: [physical] })).topics;
    const changelogTopic = `${namespace}ceiling.rowstate`;
    await admin.createTopics({
      topics: [{ topic: changelogTopic, numPartitions: meta!.partitions.length, replicationFactor: 1 }],
      waitForLeaders: true,
    });
    await admin.disconnect();
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const ceiling = await timed(async () => {
      const consumer = kafka.consumer({ groupId: `${namespace}ceiling`, maxBytesPerPartition: 4 * 1024 * 1024 });
      await consumer.connect();
      await consumer.subscribe({ topics: [physical], fromBeginning: true });
      const fold = tightChangelogFold();
      let seen = 0;
      await new Promise<void>((resolve, reject) => {
        void consumer
          .run({
            autoCommit: false,
            eachBatch: async ({ batch }) => {
              const trials = batch.messages.map((m) => {
                const v = m.value!; // Confluent framing (magic byte, schema id) then the JSON
                return JSON.parse(v.toString('utf8', v[0] === 0 ? 5 : 0)) as TrialRecorded;
              });
              const records = fold(trials);
              if (records.length > 0)
                await producer.send({
                  topic: changelogTopic,
                  acks: -1,
                  compression: CompressionTypes.GZIP,
                  messages: records.map((r) => ({ key: r.key, value: JSON.stringify(r) })),
                });
              await consumer.commitOffsets([
                { topic: batch.topic, partition: batch.partition, offset: String(Number(batch.lastOffset()) + 1) },
              ]);
              seen += batch.messages.length;
              if (seen >= n) resolve();
            },
          })
          .catch(reject);
      });
      await consumer.disconnect();
    });
    await producer.disconnect();
    // from start to committed, as the peer's clock: the log opened (clients connected, registry read) inside the
    // clock, which stops when the topology has committed its last unit and completed; closing is outside it
    const run = async (groupId: string, changelog: boolean): Promise<number> => {
      const t = performance.now();
      const own = await open();
      try {
        await lastValueFrom(
          trialTopology(
            { source: own, publisher: changelog ? own.publisher : noPublisher, sink: noSink },
            {
              instanceId: 'bench',
              groupId,
              producer: PRODUCER,
              partitionOf,
              maxBatch: 1_000,
              maxWaitMs: BATCH_WINDOW_MS,
              untilCaughtUpEveryMs: 50,
            },
          ).pipe(toArray()),
        );
        return (performance.now() - t) / 1000;
      } finally {
        await own.close();
      }
    };
    const full = await run('bench-full', true);
    const fold = await run('bench-fold', false);
    const base = {
      subset: true,
      baseline: 'raw kafkajs eachBatch loop, counting',
      baselineEventsPerSec: n / raw,
      bytesPerItem: JSON.stringify(events[0]).length,
    };
    const lines: BenchLine[] = [
      { name: 'end to end: Kafka → topology → changelog', eventsPerSec: n / full, ...base, ratio: raw / full },
      {
        name: 'Kafka ceiling: plain decode, fold, changelog',
        eventsPerSec: n / ceiling,
        ...base,
        ratio: raw / ceiling,
      },
      {
        name: 'Kafka → topology → changelog vs the same job, plain',
        eventsPerSec: n / full,
        subset: false,
        baseline: 'plain kafkajs decode, fold, changelog, commit',
        baselineEventsPerSec: n / ceiling,
        ratio: ceiling / full,
      },
      { name: 'end to end: Kafka → topology (no changelog)', eventsPerSec: n / fold, ...base, ratio: raw / fold },
    ];
    // the peer: the same job in Kafka Streams on the same topic, only where Maven can build it
    if (peerAvailable()) {
      const peer = await runKafkaStreamsPeer({
        brokers: k.brokers,
        topic: physical,
        events: n,
        commitIntervalMs: BATCH_WINDOW_MS,
        log: k.log ?? (() => {}),
      });
      lines.push({
        name: 'end to end: Kafka → topology → changelog, vs Kafka Streams',
        eventsPerSec: n / full,
        baseline: `Kafka Streams peer (exactly_once_v2, commit ${BATCH_WINDOW_MS} ms, cache on, 1 thread), to committed`,
        baselineEventsPerSec: peer,
        ratio: n / full / peer,
      });
    } else k.log?.('processors: no mvn on PATH: the Kafka Streams peer is not run');
    return lines;
  } finally {
    await log.close();
  }
};
