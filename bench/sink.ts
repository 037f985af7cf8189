import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { RowStateChanged } from '../schemas/events/decisions.ts';
import type { TrialRecorded } from '../schemas/events/trialRecorded.ts';
import { deterministicEventId } from '../schemas/ids.ts';
import { createClickHouseRowSink, migrate, openClickHouse, passCurve, renderCreateTable, TABLES, trialToRow, versionSummary } from '../sinks/clickhouse/index.ts';

/**
 * Store benchmarks on embedded chDB:
 * - sink insert throughput (rows/s) as a ratio to a raw `client.insert` of the same rows, in the
 *   same run (same batch size), so machine and load mostly cancel out;
 * - the per-version summary and the pass^k curve queries over `trials` trials of one version, warm
 *   (median of `queryRuns` runs after one untimed run). Target: summary under 100 ms per 1M trials.
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
  readonly log?: (line: string) => void;
}

export interface BenchSinkResult {
  readonly trials: number;
  readonly rows: number;
  readonly rawRowsPerSec: number;
  readonly sinkRowsPerSec: number;
  /** sink / raw: 1.0 means the sink costs nothing over a raw insert. */
  readonly ratio: number;
  readonly summaryMs: number;
  /** The same summary from the processors' row state (one row per dataset row), checked equal. */
  readonly summaryFromRowStateMs: number;
  readonly summaryFromRowStateMsPer1M: number;
  readonly passCurveMs: number;
  /** Summary ms scaled to 1M trials, against the 100 ms target. */
  readonly summaryMsPer1M: number;
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
      batches.push(Array.from({ length: Math.min(batch, total - i) }, (_, j) => trialToRow(syntheticTrial(i + j, rows))));

    // Alternate raw and sink batches, so both see the same machine load over the run.
    const sink = createClickHouseRowSink({ client: store.client, insertJsonRows: store.insertJsonRows, maxRows: batch, maxWaitMs: 60_000, maxBufferedRows: 2 * batch });
    let rawMs = 0;
    let sinkMs = 0;
    for (const [i, b] of batches.entries()) {
      let t = performance.now();
      await store.client.insert({ table: 'bench_raw_trials', values: b, format: 'JSONEachRow' });
      rawMs += performance.now() - t;
      t = performance.now();
      await sink.write('trials', b);
      if (i === batches.length - 1) await sink.flush();
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
    const summaryMs = await timed(() => versionSummary(store.client, scope));

    // What the processors keep: one RowStateChanged per row with its attempts (a plain fold here).
    const states = new Map<number, TrialRecorded[]>();
    for (let i = 0; i < total; i++) {
      const t = syntheticTrial(i, rows);
      const row = i % rows;
      states.set(row, [...(states.get(row) ?? []), t]);
    }
    const stateSink = createClickHouseRowSink({ client: store.client, insertJsonRows: store.insertJsonRows, maxRows: batch, maxWaitMs: 60_000 });
    const pending: RowStateChanged[] = [];
    for (const [row, ts] of states) {
      pending.push({
        event_id: deterministicEventId(T0, 'bench-state', row),
        type: 'RowStateChanged', schema_version: 1, occurred_at: T0, producer: 'passk-bench/0',
        suite: 'bench', dataset_version: 'd1', agent_version: 'agent-1', row_id: `row-${row}`, seq: ts.length,
        n: ts.length, c: ts.filter((t) => t.passed).length, ungraded: 0, class: 'unclassified',
        attempts: ts.map((t) => ({ attempt: t.attempt, run_id: t.run_id, event_id: t.event_id, passed: t.passed, output: t.output ?? null })),
      });
      if (pending.length === batch) await stateSink.writeEvents(pending.splice(0));
    }
    await stateSink.writeEvents(pending);
    await stateSink.close();
    const fromState = { ...scope, from: 'row_state' as const };
    const [a, b] = [await versionSummary(store.client, scope), await versionSummary(store.client, fromState)];
    if (JSON.stringify(a.bins) !== JSON.stringify(b.bins)) throw new Error('row-state summary differs from the trials summary');
    const summaryFromRowStateMs = await timed(() => versionSummary(store.client, fromState));
    const passCurveMs = await timed(() => passCurve(store.client, scope));
    const parts = (await (await store.client.query({ query: "SELECT count() AS p FROM system.parts WHERE active AND database = currentDatabase() AND table = 'trials'", format: 'JSONEachRow' })).json<{ p: number }>())[0]!.p;
    const rawRowsPerSec = total / (rawMs / 1000);
    const sinkRowsPerSec = total / (sinkMs / 1000);
    return { trials: total, rows, rawRowsPerSec, sinkRowsPerSec, ratio: sinkRowsPerSec / rawRowsPerSec, summaryMs, summaryFromRowStateMs, summaryFromRowStateMsPer1M: summaryFromRowStateMs * (1_000_000 / total), passCurveMs, summaryMsPer1M: summaryMs * (1_000_000 / total), parts };
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
