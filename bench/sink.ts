import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { classOf } from '../processors/core/classify.ts';
import { toAttemptRecord } from '../processors/core/rowState.ts';
import type { StreamRowState } from '../processors/folds/rowState.ts';
import { applyRowChanges, type VersionSummaries } from '../processors/folds/versionSummary.ts';
import type { VersionSnapshot } from '../processors/index.ts';
import type { RowStateChanged } from '../schemas/events/decisions.ts';
import type { TrialRecorded } from '../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../schemas/ids.ts';
import {
  createClickHouseRowSink,
  migrate,
  openClickHouse,
  passCurve,
  renderCreateTable,
  TABLES,
  toTrialSink,
  type StoreClient,
  trialToRow,
  versionSummary,
  type VersionScope,
} from '../sinks/clickhouse/index.ts';

/**
 * Store benchmarks on embedded chDB:
 * - sink insert throughput (rows/s) as a ratio to chDB's engine-only insert (`insertJsonRows`, the raw
 *   insert) of the same rows already serialized, in the same run (same batch size, alternating), so
 *   machine and load mostly cancel out;
 * - the per-version summary over `trials` trials of one version from each source (raw trials, row
 *   state, version summaries) and the pass^k curve, warm (median of `queryRuns` runs after one
 *   untimed run), each as a ratio to a bare `GROUP BY row_id` over the same trials in the same run
 *   (count and countIf(passed), no FINAL: the least any per-row summary costs). Target: ≤ 2×. Target: summary under 100 ms per 1M trials.
 *   The version summaries are written as the trial topology writes them: one snapshot per
 *   (version, partition) touched by each unit of `unitTrials` trials, over `partitions` partitions.
 */
export interface BenchSinkOptions {
  /** Trials of one agent version. @default 1_000_000 */
  readonly trials?: number;
  /** Attempts per row (rows = trials / attempts). @default 10 */
  readonly attempts?: number;
  /** Rows per insert, for the sink and the raw baseline. @default 10_000 */
  readonly batch?: number;
  /** @default 5 */
  readonly queryRuns?: number;
  /** Trial partitions of the simulated topology. @default 12 */
  readonly partitions?: number;
  /** Trials per durable unit of the simulated topology (each writes its snapshots). @default 5000 */
  readonly unitTrials?: number;
  readonly log?: (line: string) => void;
}

/** One timed query: warm median ms, scaled to 1M trials, and as a ratio to the same run's plain scan. */
export interface QueryTiming {
  readonly ms: number;
  readonly msPer1M: number;
  readonly vsScan: number;
}

export interface BenchSinkResult {
  readonly trials: number;
  readonly rows: number;
  readonly rawRowsPerSec: number;
  readonly sinkRowsPerSec: number;
  /** JSONEachRow bytes per trial row (for the bandwidth check). */
  readonly bytesPerRow: number;
  /** sink / raw: 1.0 means the sink costs nothing over a raw insert. */
  readonly ratio: number;
  /** The baseline: a bare `GROUP BY row_id` (count, countIf(passed)) over the version's trials, no FINAL. */
  readonly scanMs: number;
  /** The per-version summary from each source (checked equal): raw trials (FINAL), row state (FINAL), version summaries. */
  readonly summary: { readonly trials: QueryTiming; readonly row_state: QueryTiming; readonly summaries: QueryTiming };
  /** The pass^k curve k = 1..K from the raw trials and from the version summaries. */
  readonly passCurve: { readonly trials: QueryTiming; readonly summaries: QueryTiming };
  /** Snapshot rows written (units × partitions touched) and the table's active parts when timed. */
  readonly snapshots: number;
  readonly snapshotParts: number;
  readonly parts: number;
}

const T0 = 1_767_225_600_000;

const syntheticTrial = (i: number, rows: number): TrialRecorded => {
  const row = i % rows;
  const attempt = Math.floor(i / rows);
  return {
    event_id: deterministicEventId(T0 + i, 'bench', i),
    type: 'TrialRecorded',
    schema_version: 1,
    occurred_at: T0 + i,
    producer: 'passk-bench/0',
    suite: 'bench',
    dataset_version: 'd1',
    row_id: `row-${row}`,
    run_id: `run-${attempt}`,
    attempt,
    agent: { version: 'agent-1', model: 'model-x' },
    output: `answer ${(row * 7 + attempt) % 5}`,
    passed: (row * 2654435761 + attempt * 40503) % 10 < 6,
    checks: [{ name: 'return_window', answer: (row + attempt) % 3 === 0, passed: true }],
    latency_ms: 100 + (i % 50),
  };
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Folds the synthetic trials in arrival order, as the trial topology does, into per-partition version
 * summaries (the processors' own `applyRowChanges`), and writes after every unit of `unitTrials` trials
 * one snapshot per partition the unit touched, through the store's trial sink (one insert per unit).
 */
const writeSnapshots = async (
  store: StoreClient,
  total: number,
  rows: number,
  partitions: number,
  unitTrials: number,
): Promise<number> => {
  const rowSink = createClickHouseRowSink({
    client: store.client,
    insertJsonRows: store.insertJsonRows,
    maxWaitMs: 60_000,
  });
  const sink = toTrialSink(rowSink);
  const sums: VersionSummaries[] = Array.from({ length: partitions }, () => new Map());
  const offsets = new Array<number>(partitions).fill(0);
  const current = new Map<number, StreamRowState>();
  let written = 0;
  for (let start = 0; start < total; start += unitTrials) {
    const touched = new Set<number>();
    for (let i = start; i < Math.min(total, start + unitTrials); i++) {
      const t = syntheticTrial(i, rows);
      const row = i % rows;
      const p = row % partitions;
      const before = current.get(row);
      const n = (before?.n ?? 0) + 1;
      const c = (before?.c ?? 0) + (t.passed ? 1 : 0);
      const after: StreamRowState = {
        suite: t.suite,
        dataset_version: t.dataset_version,
        agent_version: t.agent.version,
        row_id: t.row_id,
        seq: n,
        occurred_at: t.occurred_at,
        n,
        c,
        ungraded: 0,
        class: classOf(n, c),
        attempts: [],
        tags: [],
      };
      applyRowChanges(sums[p]!, [{ before, after }]);
      current.set(row, after);
      offsets[p]!++;
      touched.add(p);
    }
    const snapshots: VersionSnapshot[] = [...touched].flatMap((p) =>
      [...sums[p]!.values()].map((summary) => ({
        partition: p,
        nextOffset: offsets[p]!,
        summary: structuredClone(summary),
      })),
    );
    await sink.writeTrials({ trials: [], rowStates: [], finished: [], summaries: snapshots });
    written += snapshots.length;
  }
  await rowSink.close();
  return written;
};

export async function benchSink(opts: BenchSinkOptions = {}): Promise<BenchSinkResult> {
  const total = opts.trials ?? 1_000_000;
  const rows = Math.max(1, Math.floor(total / (opts.attempts ?? 10)));
  const batch = opts.batch ?? 10_000;
  const runs = opts.queryRuns ?? 5;
  const log = opts.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'passk-bench-sink-'));
  const store = await openClickHouse({ kind: 'embedded', path: join(dir, 'store'), database: 'passk' });
  try {
    await migrate(store.client);
    await store.client.command({ query: renderCreateTable({ ...TABLES.trials, name: 'bench_raw_trials' }) });
    const batches: Record<string, unknown>[][] = [];
    for (let i = 0; i < total; i += batch)
      batches.push(
        Array.from({ length: Math.min(batch, total - i) }, (_, j) => trialToRow(syntheticTrial(i + j, rows))),
      );
    // the engine-only baseline: the same rows as JSONEachRow bytes, built before the clock starts
    const bodies = batches.map((b) => Buffer.from(b.map((r) => JSON.stringify(r)).join('\n') + '\n'));
    const bodyBytes = bodies.reduce((a, b) => a + b.length, 0);

    // Alternate raw and sink batches, so both see the same machine load over the run.
    const sink = createClickHouseRowSink({
      client: store.client,
      insertJsonRows: store.insertJsonRows,
      maxRows: batch,
      maxWaitMs: 60_000,
      maxBufferedRows: 2 * batch,
    });
    let rawMs = 0;
    let sinkMs = 0;
    for (const [i, b] of batches.entries()) {
      let t = performance.now();
      await store.insertJsonRows('bench_raw_trials', bodies[i]!);
      rawMs += performance.now() - t;
      t = performance.now();
      // durable before the clock stops: a buffered write would overlap the next baseline insert and be charged to it
      await sink.write('trials', b);
      await sink.flush();
      sinkMs += performance.now() - t;
      if (i % 20 === 19) log(`  inserted ${(i + 1) * batch} rows`);
    }
    await sink.close();

    const scope = { suite: 'bench', agent_version: 'agent-1' };
    const timed = async (f: () => Promise<unknown>): Promise<number> => {
      await f();
      const ms: number[] = [];
      for (let r = 0; r < runs; r++) {
        const t = performance.now();
        await f();
        ms.push(performance.now() - t);
      }
      return median(ms);
    };

    // What the processors keep: one RowStateChanged per row with its attempts (a plain fold here).
    const states = new Map<number, TrialRecorded[]>();
    for (let i = 0; i < total; i++) {
      const t = syntheticTrial(i, rows);
      const row = i % rows;
      const list = states.get(row);
      if (list) list.push(t);
      else states.set(row, [t]);
    }
    const stateSink = createClickHouseRowSink({
      client: store.client,
      insertJsonRows: store.insertJsonRows,
      maxRows: batch,
      maxWaitMs: 60_000,
    });
    const pending: RowStateChanged[] = [];
    for (const [row, ts] of states) {
      pending.push({
        event_id: deterministicEventId(T0, 'bench-state', row),
        type: 'RowStateChanged',
        schema_version: 2,
        occurred_at: T0,
        producer: 'passk-bench/0',
        suite: 'bench',
        dataset_version: 'd1',
        agent_version: 'agent-1',
        row_id: `row-${row}`,
        seq: ts.length,
        n: ts.length,
        c: ts.filter((t) => t.passed).length,
        ungraded: 0,
        class: 'unclassified',
        attempt_records: ts.map(toAttemptRecord),
      });
      if (pending.length === batch) await stateSink.writeEvents(pending.splice(0));
    }
    await stateSink.writeEvents(pending);
    await stateSink.close();
    states.clear();

    // What the trial topology writes per durable unit: a snapshot of each (version, partition) it touched.
    const snapshotCount = await writeSnapshots(store, total, rows, opts.partitions ?? 12, opts.unitTrials ?? 5_000);

    const sources = {
      trials: scope,
      row_state: { ...scope, from: 'row_state' },
      summaries: { ...scope, from: 'summaries' },
    } satisfies Record<string, VersionScope>;
    const bins = await Promise.all(
      Object.values(sources).map(async (s) => JSON.stringify((await versionSummary(store.client, s)).bins)),
    );
    if (new Set(bins).size !== 1) throw new Error('the summaries from trials, row state and version summaries differ');

    const scanMs = await timed(() =>
      store.client
        .query({
          query:
            "SELECT row_id, count() AS n, countIf(passed) AS c FROM trials WHERE suite = 'bench' AND agent_version = 'agent-1' GROUP BY row_id",
          format: 'JSONEachRow',
        })
        .then((r) => r.json()),
    );
    const timing = (ms: number): QueryTiming => ({ ms, msPer1M: ms * (1_000_000 / total), vsScan: ms / scanMs });
    const summary = {
      trials: timing(await timed(() => versionSummary(store.client, sources.trials))),
      row_state: timing(await timed(() => versionSummary(store.client, sources.row_state))),
      summaries: timing(await timed(() => versionSummary(store.client, sources.summaries))),
    };
    const curve = {
      trials: timing(await timed(() => passCurve(store.client, sources.trials))),
      summaries: timing(await timed(() => passCurve(store.client, sources.summaries))),
    };
    const activeParts = async (table: string) =>
      (
        await (
          await store.client.query({
            query:
              'SELECT count() AS p FROM system.parts WHERE active AND database = currentDatabase() AND table = {t:String}',
            query_params: { t: table },
            format: 'JSONEachRow',
          })
        ).json<{ p: number }>()
      )[0]!.p;
    const rawRowsPerSec = total / (rawMs / 1000);
    const sinkRowsPerSec = total / (sinkMs / 1000);
    return {
      trials: total,
      rows,
      rawRowsPerSec,
      sinkRowsPerSec,
      bytesPerRow: bodyBytes / total,
      ratio: sinkRowsPerSec / rawRowsPerSec,
      scanMs,
      summary,
      passCurve: curve,
      snapshots: snapshotCount,
      snapshotParts: await activeParts('version_summaries'),
      parts: await activeParts('trials'),
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const trials = Number(process.argv[2] ?? 1_000_000);
  const r = await benchSink({ trials, log: (l) => process.stderr.write(l + '\n') });
  process.stdout.write(JSON.stringify(r, null, 2) + '\n');
}
