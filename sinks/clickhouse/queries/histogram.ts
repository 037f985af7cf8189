import { DEFAULT_MIN_ATTEMPTS } from '../../../processors/core/classify.ts';
import {
  binsWithRecorded,
  summarizeHistogram,
  type HistogramBin,
  type HistogramSummary,
} from '../../../processors/core/histogram.ts';
import {
  clusteredMeanAccuracy,
  wilson,
  type ClusteredMean,
  type Interval,
} from '../../../processors/core/intervals.ts';
import { z } from 'zod';
import { InputError } from '../../../schemas/errors.ts';
import { any, select, type Querier } from './select.ts';
import { HAS_ATTEMPTS, NOT_RETRACTED } from './retracted.ts';
import { declaredK } from './declaredRuns.ts';

/**
 * The per-version numbers come from one small query: each row's (n, c) is counted in SQL and the
 * rows are grouped by (n, c), so at most a few dozen bins leave the store whatever its size. The
 * bins go to the core's `summarizeHistogram`, the same code the offline report uses.
 */

export interface VersionScope {
  readonly suite: string;
  readonly agent_version: string;
  /** One dataset version, or every dataset version of the suite (rows are still per dataset version). */
  readonly dataset_version?: string;
  /** Count ungraded trials (passed NULL) as failures. @default false */
  readonly ungradedAsFailure?: boolean;
  /**
   * Where the per-row (n, c) come from, all the same numbers when the consistency invariant holds
   * (`checkConsistency`):
   * - `trials`: the raw trials, duplicates collapsed with FINAL (reads every trial);
   * - `row_state`: the processors' row state, one row per dataset row (the latest seq);
   * - `summaries`: the processors' per-version snapshots, the latest per trial partition, summed
   *   (a few rows whatever the size). Only versions the trial topology has folded; cannot answer
   *   `ungradedAsFailure` (the histogram holds graded attempts only) and refuses it.
   * Every source counts all attempts, confirmation runs included (`passk report` leaves them out by default).
   * @default 'trials'
   */
  readonly from?: 'trials' | 'row_state' | 'summaries';
}

const Bin = z.object({
  n: z.number(),
  c: z.number(),
  count: z.number(),
  ungraded: z.number(),
  recorded: z.number(),
});

const HISTOGRAM_SQL = `
SELECT n, c, count() AS count, sum(u) AS ungraded, min(r) AS recorded
FROM (
  SELECT
    if({ungraded_as_failure:Bool}, count(), countIf(passed IS NOT NULL)) AS n,
    countIf(passed) AS c,
    countIf(passed IS NULL) AS u,
    count() AS r
  FROM trials FINAL
  WHERE suite = {suite:String} AND agent_version = {agent_version:String}
    AND ({dataset_version:String} = '' OR dataset_version = {dataset_version:String})
    AND ${NOT_RETRACTED}
  GROUP BY dataset_version, row_id
)
GROUP BY n, c
ORDER BY n, c`;

const ROW_STATE_HISTOGRAM_SQL = `
SELECT n, c, count() AS count, sum(u) AS ungraded, min(r) AS recorded
FROM (
  SELECT if({ungraded_as_failure:Bool}, g + u, g) AS n, c, u, g + u AS r
  FROM (
    SELECT n AS g, c, ungraded AS u
    FROM row_state FINAL
    WHERE suite = {suite:String} AND agent_version = {agent_version:String}
      AND ({dataset_version:String} = '' OR dataset_version = {dataset_version:String})
      AND ${HAS_ATTEMPTS}
  )
)
GROUP BY n, c
ORDER BY n, c`;

/**
 * The latest snapshot of each (dataset version, trial partition) of the version, summed: `sumMap`
 * adds the `"n,c" → rows` maps (and the `"n,c,u" → rows` maps of rows with ungraded attempts).
 * An aggregate without GROUP BY: always one row (empty when none).
 */
const SUMMARIES_HISTOGRAM_SQL = `
SELECT sumMap(histogram) AS histogram, sumMap(ungraded_histogram) AS ungraded_histogram, sum(ungraded) AS ungraded
FROM version_summaries FINAL
WHERE suite = {suite:String} AND agent_version = {agent_version:String}
  AND ({dataset_version:String} = '' OR dataset_version = {dataset_version:String})`;

/** A `version_summaries` histogram, `"n,c" → rows`. */
export const SnapshotHistogram = z.record(z.string().regex(/^\d+,\d+$/), z.number());
/** Its `ungraded_histogram`, `"n,c,u" → rows` with u ungraded attempts (empty in a snapshot older than migration 17). */
export const SnapshotUngraded = z.record(z.string().regex(/^\d+,\d+,\d+$/), z.number());
const SummariesRow = z
  .object({ histogram: SnapshotHistogram, ungraded_histogram: SnapshotUngraded, ungraded: z.number() })
  .transform((r) => ({ bins: binsWithRecorded(r.histogram, r.ungraded_histogram), ungraded: r.ungraded }));

export interface VersionHistogram {
  readonly bins: HistogramBin[];
  /** Trials with passed NULL (left out of n unless ungradedAsFailure). */
  readonly ungraded: number;
}

/**
 * The (n, c) histogram of one agent version on one suite (duplicates counted once), from `scope.from`.
 * @throws InputError for `from: 'summaries'` with `ungradedAsFailure`: the snapshots cannot answer it.
 */
export const versionHistogram = async (client: Querier, scope: VersionScope): Promise<VersionHistogram> => {
  const params = {
    suite: scope.suite,
    agent_version: scope.agent_version,
    dataset_version: any(scope.dataset_version),
  };
  if (scope.from === 'summaries') {
    if (scope.ungradedAsFailure)
      throw new InputError(
        "version_summaries cannot count ungraded trials as failures: its histogram holds each row's graded attempts only, " +
          "not where its ungraded ones fall; read from 'trials' or 'row_state' instead",
        { field: 'ungradedAsFailure' },
      );
    const [row] = await select(client, SummariesRow, SUMMARIES_HISTOGRAM_SQL, params);
    return row ?? { bins: [], ungraded: 0 };
  }
  const rows = await select(client, Bin, scope.from === 'row_state' ? ROW_STATE_HISTOGRAM_SQL : HISTOGRAM_SQL, {
    ...params,
    ungraded_as_failure: scope.ungradedAsFailure === true,
  });
  return {
    // `recorded` only where every row of the bin has more attempts recorded than graded (the snapshots' rule)
    bins: rows.map(({ n, c, count, recorded }) => (recorded > n ? { n, c, count, recorded } : { n, c, count })),
    ungraded: rows.reduce((s, r) => s + r.ungraded, 0),
  };
};

export interface PassCurvePoint {
  readonly k: number;
  readonly pass_hat_k: number | null;
  readonly pass_at_k: number | null;
  /** Rows with at least k counted attempts: the rows this k is averaged over. */
  readonly rows: number;
}

/** What the version's runs declared (`declaredK`), as the core's histogram option; `{}` when none did. */
const declaredOf = async (client: Querier, scope: VersionScope): Promise<{ declared?: number }> => {
  const k = await declaredK(client, scope);
  return k === undefined ? {} : { declared: k };
};

/**
 * pass^k and pass@k for k = 1..K (default: as `passk report`, the attempts every row was given: what the version's
 * completed runs declared (`runs.k`, `declaredK`), else the fewest recorded of any row with a graded attempt, graded
 * or not; capped at the most graded; `defaultK`). Every source gives the same numbers, the snapshots too (their
 * `ungraded_histogram`); the declaration is read from `runs` whatever the source.
 */
export const passCurve = async (client: Querier, scope: VersionScope & { k?: number }): Promise<PassCurvePoint[]> => {
  const [{ bins }, declared] = await Promise.all([versionHistogram(client, scope), declaredOf(client, scope)]);
  const s = summarizeHistogram(bins, { ...declared, ...(scope.k === undefined ? {} : { k: scope.k }) });
  return Array.from({ length: s.k_max }, (_, i) => ({
    k: i + 1,
    pass_hat_k: s.pass_hat_k[String(i + 1)] ?? null,
    pass_at_k: s.pass_at_k[String(i + 1)] ?? null,
    rows: s.rows_at_k[String(i + 1)] ?? 0,
  }));
};

export interface VersionSummary extends HistogramSummary {
  readonly suite: string;
  readonly agent_version: string;
  readonly dataset_version: string | null;
  readonly ungraded: number;
  readonly min_attempts: number;
  readonly bins: HistogramBin[];
  /** Closed-form intervals (the report's): clustered SE for mean accuracy, Wilson for class shares and flip rate. */
  readonly intervals: {
    readonly confidence: number;
    readonly mean_accuracy: { clustered_se: number | null; clustered: Interval | null; wilson_iid: Interval | null };
    readonly flip_rate: Interval | null;
    readonly classes: { stable_correct: Interval | null; stable_wrong: Interval | null; flip: Interval | null };
  };
}

/**
 * The report's numbers for one version: rows, trials, mean accuracy, pass@k and pass^k for
 * k = 1..K, flip rate, classes, with their closed-form intervals. (The report's bootstrap intervals
 * for pass@k / pass^k need the rows in row order: `passk report --from-store` computes them.)
 */
export const versionSummary = async (
  client: Querier,
  scope: VersionScope & { k?: number; minAttempts?: number; confidence?: number },
): Promise<VersionSummary> => {
  const [{ bins, ungraded }, declared] = await Promise.all([
    versionHistogram(client, scope),
    declaredOf(client, scope),
  ]);
  const minAttempts = scope.minAttempts ?? DEFAULT_MIN_ATTEMPTS;
  const confidence = scope.confidence ?? 0.95;
  const s = summarizeHistogram(bins, { ...declared, ...(scope.k === undefined ? {} : { k: scope.k }), minAttempts });
  const clustered: ClusteredMean | null = clusteredMeanAccuracy(bins, confidence);
  return {
    suite: scope.suite,
    agent_version: scope.agent_version,
    dataset_version: scope.dataset_version ?? null,
    ...s,
    ungraded,
    min_attempts: minAttempts,
    bins,
    intervals: {
      confidence,
      mean_accuracy: {
        clustered_se: clustered?.se ?? null,
        clustered: clustered?.interval ?? null,
        wilson_iid: wilson(s.passes, s.trials, confidence),
      },
      flip_rate: wilson(s.classes.flip, s.classified, confidence),
      classes: {
        stable_correct: wilson(s.classes.stable_correct, s.classified, confidence),
        stable_wrong: wilson(s.classes.stable_wrong, s.classified, confidence),
        flip: wilson(s.classes.flip, s.classified, confidence),
      },
    },
  };
};

const VersionRow = z.object({
  suite: z.string(),
  dataset_version: z.string(),
  agent_version: z.string(),
  rows: z.number(),
  trials: z.number(),
  first_at: z.number(),
  last_at: z.number(),
});

/** Every (suite, dataset version, agent version) in the store, with its size and time span. */
export const listVersions = async (
  client: Querier,
  opts: { suite?: string } = {},
): Promise<z.infer<typeof VersionRow>[]> =>
  select(
    client,
    VersionRow,
    `SELECT suite, dataset_version, agent_version, uniqExact(row_id) AS rows, count() AS trials,
            toUnixTimestamp64Milli(min(occurred_at)) AS first_at, toUnixTimestamp64Milli(max(occurred_at)) AS last_at
     FROM trials FINAL
     WHERE ({suite:String} = '' OR suite = {suite:String}) AND ${NOT_RETRACTED}
     GROUP BY suite, dataset_version, agent_version
     ORDER BY suite, dataset_version, agent_version`,
    { suite: any(opts.suite) },
  );
