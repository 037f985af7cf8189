import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { hashString } from '../processors/core/hash.ts';
import { deterministicEventId } from '../schemas/ids.ts';
import type { GateEvaluated } from '../schemas/events/decisions.ts';
import type { RunFinished } from '../schemas/events/runFinished.ts';
import type { TrialRecorded } from '../schemas/events/trialRecorded.ts';
import { eventToRow, migrate, openClickHouse } from '../sinks/clickhouse/index.ts';

/**
 * A store of `rows` rows × 2 versions × `attempts` attempts (5 by default; PASSK_BENCH_ATTEMPTS) written by SQL inside embedded chDB (`INSERT … SELECT FROM
 * numbers()`), not through the event log nor row by row from Node: 1M trials in seconds (issue #32's first-paint
 * bench and the browser test over a generated store). What it holds, all consistent (`passk check` says so):
 * - `trials`: exactly the rows `trialToRow(trial(row, v, attempt))` gives (ids, times,
 *   verdicts, outputs, checks, latencies: the same formulas in SQL; generatedStore.int.test.ts compares them);
 * - `row_state`: one row per (row, version) as the processors keep it: n, c, class, the attempt records in the
 *   canonical order with output hashes from processors/core/hash.ts (the outputs are five texts), and each
 *   attempt's category, latency and cost (`attempt_extras`, migration 20);
 * - `version_summaries`: each version's snapshot (one trial partition), histogram and classes from the row states;
 * - `runs`: one RunFinished per version (run-1, completed, k = attempts), `dataset_rows`: the dataset `bench` d1 with one row
 *   per row, and `gate_decisions`: one gate, v1 → v2, so every view has something to draw.
 * The store is left closed in `<dataDir>/store` (database `passk`), ready for `passk --data-dir <dataDir> serve`.
 */
export type GeneratedStore = { trials: number; rows: number; attempts: number; ms: number };

/** The bench's trials: the first one's time, the versions and the attempts per row and version. */
export const T0 = Date.UTC(2026, 0, 1);
export const VERSIONS = ['v1', 'v2'];
export const ATTEMPTS = 5;

/**
 * The attempts per row and version a bench's generated store holds: PASSK_BENCH_ATTEMPTS, 1 to 5 (the trials' times
 * leave 5 ms per row and version, and the outputs are five texts), ATTEMPTS (5) when unset. With fewer than three
 * (DEFAULT_MIN_ATTEMPTS) every row is unclassified, as the processors' fold would leave it.
 */
export const benchAttempts = (env: NodeJS.ProcessEnv = process.env): number => {
  const raw = env.PASSK_BENCH_ATTEMPTS;
  if (raw === undefined || raw === '') return ATTEMPTS;
  const attempts = Number(raw);
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > ATTEMPTS)
    throw new Error(`PASSK_BENCH_ATTEMPTS must be an integer from 1 to ${ATTEMPTS}, not ${raw}`);
  return attempts;
};

/** The bench's trial of `row` on version `v` (v1, v2), attempt `attempt`: the same for every run (bench/dashboard.ts and bench/profile read the store of them). */
export const trial = (row: number, v: number, attempt: number): TrialRecorded => {
  const at = T0 + (row * 10 + v * 5 + attempt);
  return {
    event_id: deterministicEventId(at, 'bench-dashboard', row, v, attempt),
    type: 'TrialRecorded',
    schema_version: 1,
    occurred_at: at,
    producer: 'passk-bench/0',
    suite: 'bench',
    dataset_version: 'd1',
    row_id: `row-${row}`,
    run_id: 'run-1',
    attempt,
    agent: { version: VERSIONS[v]!, model: 'model-x' },
    input: `request ${row}`,
    output: `answer ${(row * 7 + attempt + v) % 5}`,
    passed: (row * 2654435761 + attempt * 40503 + v * 97) % 10 < 7,
    checks: [{ name: 'return_window', answer: (row + attempt) % 3 === 0 }],
    latency_ms: 100 + ((row + attempt) % 50),
  };
};

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** Crockford base32 of the low `5 × digits` bits of the UInt64 expression `x`, most significant first. */
const base32 = (x: string, digits: number): string =>
  `arrayStringConcat(arrayMap(i -> substring('${CROCKFORD}', toUInt8(bitAnd(bitShiftRight(${x}, 5 * (${digits - 1} - i)), 31)) + 1, 1), range(${digits})))`;
/** Bytes `from`…`from + 4` of the String `s` as a big-endian UInt64 (40 bits). */
const bytes40 = (s: string, from: number): string => `reinterpretAsUInt64(reverse(substring(${s}, ${from}, 5)))`;

const q = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const sqlArray = (xs: readonly string[]): string => `[${xs.map(q).join(', ')}]`;

/**
 * The trials of `trial()` (bench/dashboard.ts), for `number` = (row × 2 + v) × `attempts` + attempt. `deterministicEventId`
 * is the time part (10 base32 digits of occurred_at) then 80 bits of SHA-256 of the parts' JSON.
 */
const TRIALS_SQL = (rows: number, attempts: number): string => {
  const outputs = Array.from({ length: 5 }, (_, i) => `answer ${i}`);
  return `
INSERT INTO trials (event_id, occurred_at, producer, schema_version, suite, dataset_id, dataset_version, row_id, run_id,
  attempt, agent_id, agent_version, agent_model, input, output, passed, grader_kind, checks, latency_ms, absent)
SELECT
  concat(${base32('at', 10)}, ${base32(bytes40('h', 1), 8)}, ${base32(bytes40('h', 6), 8)}),
  fromUnixTimestamp64Milli(toInt64(at), 'UTC'),
  'passk-bench/0', 1, 'bench', '', 'd1', concat('row-', toString(row)), 'run-1', attempt, '',
  ${sqlArray(VERSIONS)}[v + 1], 'model-x', concat('request ', toString(row)),
  ${sqlArray(outputs)}[(row * 7 + attempt + v) % 5 + 1],
  (row * 2654435761 + attempt * 40503 + v * 97) % 10 < 7, '',
  [tuple('return_window', if((row + attempt) % 3 = 0, 'true', 'false'), CAST(NULL, 'Nullable(Bool)'))],
  100 + (row + attempt) % 50,
  ['expected', 'score', 'error_kind', 'failure_category', 'actions', 'retrieved_refs', 'forbidden_actions', 'tags']
FROM (
  SELECT intDiv(number, ${VERSIONS.length * attempts}) AS row, intDiv(number, ${attempts}) % ${VERSIONS.length} AS v,
         number % ${attempts} AS attempt, ${T0} + row * 10 + v * 5 + attempt AS at,
         SHA256(concat('["bench-dashboard",', toString(row), ',', toString(v), ',', toString(attempt), ']')) AS h
  FROM numbers(${rows * VERSIONS.length * attempts})
)`;
};

/**
 * Each (row, version)'s state from its trials, as the processors' fold leaves it after the row's last attempt
 * (seq = attempts folded): classOf with the default three attempts, the records in `attemptOrder`.
 */
const ROW_STATE_SQL = () => {
  const outputs = Array.from({ length: 5 }, (_, i) => `answer ${i}`);
  return `
INSERT INTO row_state (event_id, occurred_at, producer, schema_version, suite, dataset_version, agent_version, row_id,
  seq, n, c, ungraded, class, attempt_records, tags, retracted_runs, attempt_extras)
SELECT
  concat(${base32('toUInt64(toUnixTimestamp64Milli(max(occurred_at)))', 10)}, ${base32(bytes40('h', 1), 8)},
    ${base32(bytes40('h', 6), 8)}), max(occurred_at), 'passk-bench/0', 2,
  suite, dataset_version, agent_version, row_id, count() AS seq,
  countIf(passed IS NOT NULL) AS n, countIf(passed) AS c, countIf(passed IS NULL) AS ungraded,
  multiIf(n < 3, 'unclassified', c = n, 'stable_correct', c = 0, 'stable_wrong', 'flip') AS class,
  arrayMap(a -> (a.1, a.2, a.3, a.4, a.5, a.6, a.7, CAST([], 'Array(String)')),
    arraySort(a -> (a.4, a.2, a.3, a.1), groupArray(tuple(event_id, run_id, attempt, occurred_at, passed,
      transform(assumeNotNull(output), ${sqlArray(outputs)}, ${sqlArray(outputs.map((o) => hashString(o)))}, ''),
      arrayMap(x -> (x.name, x.answer), checks),
      (CAST(failure_category, 'Nullable(String)'), latency_ms, cost_usd)))) AS sorted),
  [], [], arrayMap(a -> a.8, sorted)
FROM trials
GROUP BY suite, dataset_version, agent_version, row_id, SHA256(concat('["bench-row-state",', row_id, ',', agent_version, ']')) AS h`;
};

/** One snapshot per version (trial partition 0), as the trial topology writes it, from the row states. */
const SUMMARIES_SQL = `
INSERT INTO version_summaries (suite, dataset_version, agent_version, partition, next_offset, rows, trials, passes,
  ungraded, classes, histogram, ungraded_histogram)
SELECT suite, dataset_version, agent_version, 0, sum(k) AS next_offset, sum(bin_rows), sum(n * bin_rows),
  sum(c * bin_rows), sum(u), sumMap(cls), sumMap(map(concat(toString(n), ',', toString(c)), toUInt64(bin_rows))),
  map()
FROM (
  SELECT suite, dataset_version, agent_version, n, c, count() AS bin_rows, sum(ungraded) AS u, sum(seq) AS k,
         sumMap(map(class, toUInt64(1))) AS cls
  FROM row_state
  GROUP BY suite, dataset_version, agent_version, n, c
)
GROUP BY suite, dataset_version, agent_version`;

const DATASET_SQL = (rows: number, at: number) => `
INSERT INTO dataset_rows (event_id, occurred_at, producer, schema_version, dataset_id, dataset_version, row_id, input,
  expected, tags, provenance_kind, removed, json_fields)
SELECT concat(${base32(`toUInt64(${at})`, 10)}, ${base32(bytes40('h', 1), 8)}, ${base32(bytes40('h', 6), 8)}),
  fromUnixTimestamp64Milli(toInt64(${at}), 'UTC'), 'passk-bench/0', 1, 'bench', 'd1', concat('row-', toString(number)),
  concat('request ', toString(number)), concat('answer ', toString(number % 5)), [], 'manual', false, []
FROM (SELECT number, SHA256(concat('["bench-dataset",', toString(number), ']')) AS h FROM numbers(${rows}))`;

/** The last attempt of the generated trials ends before this. */
const after = (rows: number) => T0 + rows * 10 + 1_000;

const smallEvents = (rows: number, attempts: number): (RunFinished | GateEvaluated)[] => {
  const at = after(rows);
  const runs = VERSIONS.map((version, v): RunFinished => ({
    event_id: deterministicEventId(at + v, 'bench-run', version),
    type: 'RunFinished',
    schema_version: 1,
    occurred_at: at + v,
    producer: 'passk-bench/0',
    run_id: 'run-1',
    suite: 'bench',
    dataset_version: 'd1',
    agent: { version, model: 'model-x' },
    status: 'completed',
    trials: rows * attempts,
    ungraded: 0,
    rows,
    k: attempts,
    started_at: T0,
  }));
  const evidence = (row: number) => ({
    row_id: `row-${row}`,
    baseline_attempts: Array.from({ length: attempts }, (_, a) => trial(row, 0, a).event_id),
    candidate_attempts: Array.from({ length: attempts }, (_, a) => trial(row, 1, a).event_id),
  });
  const gate: GateEvaluated = {
    event_id: deterministicEventId(at + 10, 'bench-gate'),
    type: 'GateEvaluated',
    schema_version: 2,
    occurred_at: at + 10,
    producer: 'passk-bench/0',
    gate_id: 'gate-bench',
    suite: 'bench',
    dataset_version: 'd1',
    baseline: VERSIONS[0]!,
    candidate: VERSIONS[1]!,
    verdict: 'fail',
    reasons: [{ rule: 'no_stable_correct_regressions', passed: false, detail: 'generated', rows: ['row-0'] }],
    evidence: [evidence(0)],
  };
  return [...runs, gate];
};

/**
 * Writes the store into `<dataDir>/store` (it must not exist yet, or hold no trials) and closes it; `rows` 0 leaves it
 * migrated and empty. `attempts` per row and version: benchAttempts() (PASSK_BENCH_ATTEMPTS, 5 unset) by default.
 */
export async function generateStore(o: {
  dataDir: string;
  rows: number;
  attempts?: number;
  log?: (line: string) => void;
}): Promise<GeneratedStore> {
  const log = o.log ?? (() => {});
  const attempts = o.attempts ?? benchAttempts();
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > ATTEMPTS)
    throw new Error(`attempts must be an integer from 1 to ${ATTEMPTS}, not ${attempts}`);
  const path = join(o.dataDir, 'store');
  mkdirSync(path, { recursive: true });
  const store = await openClickHouse({ kind: 'embedded', path, database: 'passk' });
  try {
    await migrate(store.client);
    const t0 = performance.now();
    if (o.rows === 0) return { trials: 0, rows: 0, attempts, ms: performance.now() - t0 };
    const step = async (what: string, query: string) => {
      const t = performance.now();
      await store.client.command({ query });
      log(`  ${what}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
    };
    await step('trials', TRIALS_SQL(o.rows, attempts));
    await step('row_state', ROW_STATE_SQL());
    await step('version_summaries', SUMMARIES_SQL);
    await step('dataset_rows', DATASET_SQL(o.rows, after(o.rows) + 20));
    const lines = smallEvents(o.rows, attempts).flatMap((e) => {
      const stored = eventToRow(e);
      return stored ? [stored] : [];
    });
    for (const { table, row } of lines) await store.insertJsonRows(table, Buffer.from(`${JSON.stringify(row)}\n`));
    return { trials: o.rows * VERSIONS.length * attempts, rows: o.rows, attempts, ms: performance.now() - t0 };
  } finally {
    await store.close();
  }
}
