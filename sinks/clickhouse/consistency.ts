import { z } from 'zod';
import {
  binsWithRecorded,
  summarizeHistogram,
  histogramOf,
  type HistogramBin,
  type HistogramSummary,
} from '../../processors/core/histogram.ts';
import { SnapshotHistogram, SnapshotUngraded } from './queries/histogram.ts';
import { select, type Querier } from './queries/select.ts';
import { HAS_ATTEMPTS, NOT_RETRACTED } from './queries/retracted.ts';

/**
 * The consistency invariant: the metrics SQL recomputes from the raw trials equal those the
 * processors derived into `row_state` and into `version_summaries`. Checked per row (trials vs row
 * state: n, c, ungraded, attempt ids) and per version (the histogram summary from each of the
 * three sources: mean accuracy, pass@k, pass^k, flip rate, classes, plus the ungraded count).
 */

const Diff = z.object({
  suite: z.string(),
  dataset_version: z.string(),
  agent_version: z.string(),
  row_id: z.string(),
  in_trials: z.number(),
  in_row_state: z.number(),
  trials_n: z.number(),
  trials_c: z.number(),
  trials_ungraded: z.number(),
  state_n: z.number(),
  state_c: z.number(),
  state_ungraded: z.number(),
  same_attempts: z.number(),
});
export type RowDifference = z.infer<typeof Diff>;

const ROWS_SQL = `
SELECT
  if(t.in_t = 1, t.suite, s.suite) AS suite, if(t.in_t = 1, t.dataset_version, s.dataset_version) AS dataset_version,
  if(t.in_t = 1, t.agent_version, s.agent_version) AS agent_version, if(t.in_t = 1, t.row_id, s.row_id) AS row_id,
  t.in_t AS in_trials, s.in_s AS in_row_state,
  t.n AS trials_n, t.c AS trials_c, t.u AS trials_ungraded, s.n AS state_n, s.c AS state_c, s.ungraded AS state_ungraded,
  t.ids = s.ids AS same_attempts
FROM (
  SELECT suite, dataset_version, agent_version, row_id, 1 AS in_t,
         countIf(passed IS NOT NULL) AS n, countIf(passed) AS c, countIf(passed IS NULL) AS u, arraySort(groupArray(event_id)) AS ids
  FROM trials FINAL
  WHERE ({suite:String} = '' OR suite = {suite:String}) AND ${NOT_RETRACTED}
  GROUP BY suite, dataset_version, agent_version, row_id
) AS t
FULL OUTER JOIN (
  SELECT suite, dataset_version, agent_version, row_id, 1 AS in_s, n, c, ungraded,
         arraySort(arrayMap(a -> a.event_id, attempt_records)) AS ids
  FROM row_state FINAL
  WHERE ({suite:String} = '' OR suite = {suite:String}) AND ${HAS_ATTEMPTS}
) AS s
ON t.suite = s.suite AND t.dataset_version = s.dataset_version AND t.agent_version = s.agent_version AND t.row_id = s.row_id
ORDER BY suite, dataset_version, agent_version, row_id`;

const Snapshots = z
  .object({
    suite: z.string(),
    dataset_version: z.string(),
    agent_version: z.string(),
    histogram: SnapshotHistogram,
    ungraded_histogram: SnapshotUngraded,
    rows: z.number(),
    trials: z.number(),
    passes: z.number(),
    ungraded: z.number(),
  })
  .transform(({ histogram, ungraded_histogram, ...r }) => ({
    ...r,
    histogram: binsWithRecorded(histogram, ungraded_histogram),
  }));

/** Each version's latest snapshot per trial partition, summed. */
const SUMMARIES_SQL = `
SELECT suite, dataset_version, agent_version, sumMap(histogram) AS histogram,
       sumMap(ungraded_histogram) AS ungraded_histogram, sum(rows) AS rows, sum(trials) AS trials, sum(passes) AS passes, sum(ungraded) AS ungraded
FROM version_summaries FINAL
WHERE {suite:String} = '' OR suite = {suite:String}
GROUP BY suite, dataset_version, agent_version
HAVING rows > 0`;

/** One source's numbers for a version, or why they cannot be summarized. */
export type VersionNumbers = (HistogramSummary & { ungraded: number }) | { invalid: unknown };

export interface VersionCheck {
  readonly suite: string;
  readonly dataset_version: string;
  readonly agent_version: string;
  /** null: the version is missing from that source. */
  readonly from_trials: VersionNumbers | null;
  readonly from_row_state: VersionNumbers | null;
  /** Absent when summaries were not checked. */
  readonly from_summaries?: VersionNumbers | null;
  readonly ok: boolean;
}

export interface ConsistencyReport {
  /** Rows compared (present in either table). */
  readonly rows: number;
  /** Rows whose counts or attempt ids differ, or that exist on one side only. */
  readonly differences: RowDifference[];
  /** Every version found in any source, with each source's numbers. */
  readonly checked: VersionCheck[];
  /** The versions whose numbers differ between sources (or that some source lacks). */
  readonly versions: VersionCheck[];
  /** Whether `version_summaries` took part. */
  readonly summaries: boolean;
  readonly ok: boolean;
}

const numbersOf = (bins: HistogramBin[], ungraded: number): VersionNumbers => ({
  ...summarizeHistogram(bins),
  ungraded,
});

/**
 * Per-row (n, c) pairs, with n + u recorded, as numbers; a state with c > n cannot be summarized (it is already a row
 * difference).
 */
const fromRows = (rs: { n: number; c: number; u: number }[]): VersionNumbers =>
  rs.every((r) => r.c <= r.n)
    ? numbersOf(
        histogramOf(rs.map(({ n, c, u }) => ({ n, c, recorded: n + u }))),
        rs.reduce((a, r) => a + r.u, 0),
      )
    : { invalid: rs.filter((r) => r.c > r.n).map(({ n, c }) => ({ n, c })) };

/** A version's snapshots: their totals must match their own histogram too. */
const fromSnapshots = (s: z.infer<typeof Snapshots>): VersionNumbers => {
  const numbers = summarizeHistogram(s.histogram);
  const own = { rows: numbers.rows + numbers.rows_without_graded, trials: numbers.trials, passes: numbers.passes };
  const stored = { rows: s.rows, trials: s.trials, passes: s.passes };
  if (s.histogram.some((b) => b.c > b.n) || JSON.stringify(own) !== JSON.stringify(stored))
    return { invalid: { stored, from_histogram: own, bins: s.histogram } };
  return { ...numbers, ungraded: s.ungraded };
};

const same = (a: VersionNumbers | null | undefined, b: VersionNumbers | null | undefined): boolean =>
  a !== null && a !== undefined && !('invalid' in a) && JSON.stringify(a) === JSON.stringify(b);

/**
 * Compares the raw trials with the row state (per row) and with the version summaries (per version);
 * `ok` when every row and every version agree. `summaries: false` leaves `version_summaries` out (a
 * store written before it existed, until the processors rewrite it).
 */
export const checkConsistency = async (
  client: Querier,
  opts: { suite?: string; summaries?: boolean } = {},
): Promise<ConsistencyReport> => {
  const withSummaries = opts.summaries ?? true;
  const rows = await select(client, Diff, ROWS_SQL, { suite: opts.suite ?? '' });
  const snapshots = withSummaries ? await select(client, Snapshots, SUMMARIES_SQL, { suite: opts.suite ?? '' }) : [];
  const differences = rows.filter(
    (r) =>
      r.in_trials !== 1 ||
      r.in_row_state !== 1 ||
      r.trials_n !== r.state_n ||
      r.trials_c !== r.state_c ||
      r.trials_ungraded !== r.state_ungraded ||
      r.same_attempts !== 1,
  );
  type Sides = {
    suite: string;
    dataset_version: string;
    agent_version: string;
    t: { n: number; c: number; u: number }[];
    s: { n: number; c: number; u: number }[];
    snap?: z.infer<typeof Snapshots>;
  };
  const byVersion = new Map<string, Sides>();
  const version = (r: { suite: string; dataset_version: string; agent_version: string }): Sides => {
    const id = JSON.stringify([r.suite, r.dataset_version, r.agent_version]);
    let v = byVersion.get(id);
    if (!v)
      byVersion.set(
        id,
        (v = { suite: r.suite, dataset_version: r.dataset_version, agent_version: r.agent_version, t: [], s: [] }),
      );
    return v;
  };
  for (const r of rows) {
    const v = version(r);
    if (r.in_trials === 1) v.t.push({ n: r.trials_n, c: r.trials_c, u: r.trials_ungraded });
    if (r.in_row_state === 1) v.s.push({ n: r.state_n, c: r.state_c, u: r.state_ungraded });
  }
  for (const snap of snapshots) version(snap).snap = snap;
  const checked = [...byVersion.values()]
    .sort(
      (a, b) =>
        a.suite.localeCompare(b.suite) ||
        a.dataset_version.localeCompare(b.dataset_version) ||
        a.agent_version.localeCompare(b.agent_version),
    )
    .map(({ suite, dataset_version, agent_version, t, s, snap }): VersionCheck => {
      const from_trials = t.length ? fromRows(t) : null;
      const from_row_state = s.length ? fromRows(s) : null;
      const from_summaries = snap ? fromSnapshots(snap) : null;
      const ok = same(from_trials, from_row_state) && (!withSummaries || same(from_trials, from_summaries));
      return {
        suite,
        dataset_version,
        agent_version,
        from_trials,
        from_row_state,
        ...(withSummaries ? { from_summaries } : {}),
        ok,
      };
    });
  const versions = checked.filter((v) => !v.ok);
  return {
    rows: rows.length,
    differences,
    checked,
    versions,
    summaries: withSummaries,
    ok: differences.length === 0 && versions.length === 0,
  };
};
