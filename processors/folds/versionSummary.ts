import { z } from 'zod';
import { StabilityClass } from '../../schemas/events/decisions.ts';
import {
  binsWithRecorded,
  summarizeHistogram,
  type HistogramBin,
  type HistogramOptions,
  type HistogramSummary,
} from '../core/histogram.ts';
import type { StreamRowState } from './rowState.ts';
import { KEY_SEP } from '../../schemas/topics.ts';
import { classOf, DEFAULT_MIN_ATTEMPTS } from '../core/classify.ts';
import { isConfirmationRun } from '../core/screening.ts';
import { DEFAULT_ADAPTIVE, firstStageOfRuns } from '../core/adaptive.ts';
import { firstStageState, hasAdaptiveRun } from '../core/report.ts';

/**
 * Per-version aggregates, kept incrementally from row changes: each change removes the row's old
 * (n, c, class) and adds its new one. The histogram of per-row (n, c) pairs is all the estimators
 * need, so the report numbers come out of it in O(distinct pairs), not O(rows).
 */
export const VersionSummary = z.object({
  suite: z.string(),
  dataset_version: z.string(),
  agent_version: z.string(),
  rows: z.number().int().nonnegative(),
  trials: z.number().int().nonnegative(),
  passes: z.number().int().nonnegative(),
  ungraded: z.number().int().nonnegative(),
  classes: z.record(StabilityClass, z.number().int().nonnegative()),
  /** `${n},${c}` → number of rows with n graded attempts and c passes. */
  histogram: z.record(z.string(), z.number().int().positive()),
  /**
   * `${n},${c},${u}` → number of those rows that also have u ≥ 1 ungraded attempts (a row with none is in
   * `histogram` only). With it each row's recorded attempts, n + u, are known: the default K is the fewest recorded
   * of any row with a graded attempt (`defaultK`). A snapshot written before it existed reads as `{}`.
   */
  ungraded_histogram: z.record(z.string(), z.number().int().positive()).default({}),
});
export type VersionSummary = z.infer<typeof VersionSummary>;

export const versionKeyOf = (r: { suite: string; dataset_version: string; agent_version: string }): string =>
  r.suite + KEY_SEP + r.dataset_version + KEY_SEP + r.agent_version;

const empty = (r: StreamRowState): VersionSummary => ({
  suite: r.suite,
  dataset_version: r.dataset_version,
  agent_version: r.agent_version,
  rows: 0,
  trials: 0,
  passes: 0,
  ungraded: 0,
  classes: { stable_correct: 0, stable_wrong: 0, flip: 0, unclassified: 0 },
  histogram: {},
  ungraded_histogram: {},
});

/** A histogram bin's name, `${n},${c}`, kept per (n, c): the fold names two bins per changed row. */
const BIN_NAMES_MAX = 100_000;
const binNames = new Map<number, string>();
const binOf = (n: number, c: number): string => {
  // n, c < 2^21 in practice; larger ones are named each time
  if (n >= 2 ** 21 || c >= 2 ** 21) return `${n},${c}`;
  const id = n * 2 ** 21 + c;
  let name = binNames.get(id);
  if (name === undefined) {
    if (binNames.size >= BIN_NAMES_MAX) binNames.clear();
    binNames.set(id, (name = `${n},${c}`));
  }
  return name;
};

type Tally = Pick<StreamRowState, 'n' | 'c' | 'ungraded' | 'class'>;

const isEmpty = (r: Tally): boolean => r.n === 0 && r.ungraded === 0;

/** Counts a row with ungraded attempts in `ungraded_histogram` (`sign` -1 takes it out); others are not in it. */
const tallyUngraded = (s: VersionSummary, r: Tally, sign: 1 | -1): void => {
  if (r.ungraded === 0) return;
  const bin = `${r.n},${r.c},${r.ungraded}`;
  const count = (s.ungraded_histogram[bin] ?? 0) + sign;
  if (count === 0) delete s.ungraded_histogram[bin];
  else s.ungraded_histogram[bin] = count;
};

const add = (s: VersionSummary, r: Tally, sign: 1 | -1): void => {
  s.rows += sign;
  s.trials += sign * r.n;
  s.passes += sign * r.c;
  s.ungraded += sign * r.ungraded;
  s.classes[r.class] += sign;
  const bin = binOf(r.n, r.c);
  const count = (s.histogram[bin] ?? 0) + sign;
  if (count === 0) delete s.histogram[bin];
  else s.histogram[bin] = count;
  tallyUngraded(s, r, sign);
};

/** The summaries of many versions, updated in place from a batch's row changes (the topology's hot path). */
export type VersionSummaries = Map<string, VersionSummary>;
/**
 * Applies a batch's row changes; returns the keys of the versions they changed. Consecutive changes of one
 * version (the usual case: rows of a run arrive together) look their summary up once.
 */
export const applyRowChanges = (
  summaries: VersionSummaries,
  changes: Iterable<{
    before: Pick<StreamRowState, 'n' | 'c' | 'ungraded' | 'class'> | undefined;
    after: StreamRowState;
  }>,
): Set<string> => {
  const changed = new Set<string>();
  let last: StreamRowState | undefined;
  let s: VersionSummary | undefined;
  for (const { before, after } of changes) {
    if (
      s === undefined ||
      last!.agent_version !== after.agent_version ||
      last!.dataset_version !== after.dataset_version ||
      last!.suite !== after.suite
    ) {
      const key = versionKeyOf(after);
      s = summaries.get(key);
      if (!s) summaries.set(key, (s = empty(after)));
      changed.add(key);
    }
    last = after;
    // a row with no attempt (all of them retracted) is no row: it leaves, or never joins, the summary
    const was = before !== undefined && !isEmpty(before) ? before : undefined;
    const now = isEmpty(after) ? undefined : after;
    if (was && now) move(s, was, now);
    else if (now) add(s, now, 1);
    else if (was) add(s, was, -1);
  }
  return changed;
};

/** `add(s, before, -1)` then `add(s, after, 1)`, in one pass: a change moves one row from one bin to another. */
const move = (s: VersionSummary, before: Tally, after: Tally): void => {
  s.trials += after.n - before.n;
  s.passes += after.c - before.c;
  s.ungraded += after.ungraded - before.ungraded;
  if (before.class !== after.class) {
    s.classes[before.class] -= 1;
    s.classes[after.class] += 1;
  }
  if (before.ungraded !== 0 || after.ungraded !== 0) {
    tallyUngraded(s, before, -1);
    tallyUngraded(s, after, 1);
  }
  if (before.n === after.n && before.c === after.c) return;
  const from = binOf(before.n, before.c);
  const left = (s.histogram[from] ?? 0) - 1;
  if (left === 0) delete s.histogram[from];
  else s.histogram[from] = left;
  const to = binOf(after.n, after.c);
  s.histogram[to] = (s.histogram[to] ?? 0) + 1;
};

/** A copy that later in-place updates of `s` do not reach. */
export const copySummary = (s: VersionSummary): VersionSummary => ({
  ...s,
  classes: { ...s.classes },
  histogram: { ...s.histogram },
  ungraded_histogram: { ...s.ungraded_histogram },
});

/** The summary of a version over two disjoint sets of rows (e.g. two partitions). */
export const addSummaries = (a: VersionSummary, b: VersionSummary): VersionSummary => {
  const histogram = { ...a.histogram };
  for (const [bin, count] of Object.entries(b.histogram)) histogram[bin] = (histogram[bin] ?? 0) + count;
  const ungraded_histogram = { ...a.ungraded_histogram };
  for (const [bin, count] of Object.entries(b.ungraded_histogram))
    ungraded_histogram[bin] = (ungraded_histogram[bin] ?? 0) + count;
  return {
    ...a,
    rows: a.rows + b.rows,
    trials: a.trials + b.trials,
    passes: a.passes + b.passes,
    ungraded: a.ungraded + b.ungraded,
    classes: {
      stable_correct: a.classes.stable_correct + b.classes.stable_correct,
      stable_wrong: a.classes.stable_wrong + b.classes.stable_wrong,
      flip: a.classes.flip + b.classes.flip,
      unclassified: a.classes.unclassified + b.classes.unclassified,
    },
    histogram,
    ungraded_histogram,
  };
};

/**
 * One version's aggregates over one trial partition, as of `nextOffset` of that partition: the
 * store keeps the snapshot with the highest `nextOffset` per (version, partition), and a version's
 * summary is the sum of its partitions' snapshots (a few rows, whatever the number of trials).
 */
export interface VersionSnapshot {
  readonly partition: number;
  /** The partition's position after the unit that produced this snapshot (monotonic per partition). */
  readonly nextOffset: number;
  readonly summary: VersionSummary;
}

/**
 * What a store of snapshots serves: the latest snapshot per (partition, version), summed over
 * partitions, one summary per version in key order (the reference for the sink's query).
 */
export const summariesOfSnapshots = (snapshots: Iterable<VersionSnapshot>): VersionSummary[] => {
  const latest = new Map<string, VersionSnapshot>();
  for (const s of snapshots) {
    const key = `${s.partition}${KEY_SEP}${versionKeyOf(s.summary)}`;
    if ((latest.get(key)?.nextOffset ?? -1) < s.nextOffset) latest.set(key, s);
  }
  const sums = new Map<string, VersionSummary>();
  for (const { summary } of latest.values()) {
    const key = versionKeyOf(summary);
    const have = sums.get(key);
    sums.set(key, have ? addSummaries(have, summary) : copySummary(summary));
  }
  return [...sums.keys()].sort().map((k) => sums.get(k)!);
};

const isMarkedConfirmation = isConfirmationRun({});

/** A version's summary as `passk report` counts it, and the attempts of confirmation runs it leaves out. */
export interface ReportedSummary {
  readonly summary: VersionSummary;
  readonly confirmation_attempts: number;
  /**
   * A version with an adaptive run: its rows counted on the attempts `passk report` takes its headline numbers from
   * (`firstStageState`: each adaptive run's first `k` graded attempts of a row), to be classified at `k`
   * (`numbersOf(summary, { minAttempts: k })`); `summary` still counts every attempt (rows, trials).
   */
  readonly first_stage?: { readonly k: number; readonly summary: VersionSummary };
}

/**
 * The summaries `passk report` (and `report --from-store`, and the dashboard) gives these rows by default: each row's
 * attempts of confirmation runs left out (`includeConfirmation`, processors/core/report.ts), the row classified on
 * the rest. The fold's own summaries (`applyRowChanges`, the store's `version_summaries`) count every attempt, as the
 * trials and `row_state` do, so that the store's consistency check can compare them; this one is computed when asked
 * (`passk process`'s summary: one pass over the rows' attempts), never stored. In key order.
 */
export const reportedSummaries = (
  rows: Iterable<StreamRowState>,
  minAttempts: number = DEFAULT_MIN_ATTEMPTS,
  firstStage: number | ReadonlyMap<string, number> = DEFAULT_ADAPTIVE.firstK,
): ReportedSummary[] => {
  type Sum = { summary: VersionSummary; confirmation_attempts: number; head: VersionSummary; adaptive: boolean };
  const sums = new Map<string, Sum>();
  // an adaptive version's first stage: a number given, else its runs' --first-k from their rounds (run id → first_k,
  // `firstStageOfRuns`), the default where none has rounds; the runs the rounds name are adaptive whatever their id
  const listed = typeof firstStage === 'number' ? [] : [...firstStage.keys()];
  const all = typeof firstStage === 'number' ? rows : [...rows];
  const stages = new Map<string, number>();
  if (typeof firstStage !== 'number') {
    const runs = new Map<string, Set<string>>();
    for (const row of all) {
      const key = versionKeyOf(row);
      for (const a of row.attempts)
        if (firstStage.has(a.run_id)) (runs.get(key) ?? runs.set(key, new Set()).get(key)!).add(a.run_id);
    }
    for (const [key, ids] of runs) stages.set(key, firstStageOfRuns(ids, firstStage).k);
  }
  const stageOf = (key: string): number =>
    typeof firstStage === 'number' ? firstStage : (stages.get(key) ?? DEFAULT_ADAPTIVE.firstK);
  for (const row of all) {
    let tally: Tally = row;
    let left = 0;
    if (row.attempts.some((a) => isMarkedConfirmation(a.run_id))) {
      const t = { n: 0, c: 0, ungraded: 0 };
      for (const a of row.attempts) {
        if (isMarkedConfirmation(a.run_id)) left++;
        else if (a.passed === null) t.ungraded++;
        else {
          t.n++;
          if (a.passed) t.c++;
        }
      }
      tally = { ...t, class: classOf(t.n, t.c, minAttempts) };
    }
    const key = versionKeyOf(row);
    let s = sums.get(key);
    if (s === undefined)
      sums.set(key, (s = { summary: empty(row), confirmation_attempts: 0, head: empty(row), adaptive: false }));
    s.confirmation_attempts += left;
    if (!isEmpty(tally)) add(s.summary, tally, 1);
    // the report's first stage of an adaptive version (a version is one when any row has an adaptive attempt)
    if (hasAdaptiveRun(row, listed)) s.adaptive = true;
    const k = stageOf(key);
    const head = tallyOf(firstStageState(row, k, listed).attempts, k);
    if (!isEmpty(head)) add(s.head, head, 1);
  }
  return [...sums.keys()].sort().map((k) => {
    const { summary, confirmation_attempts, head, adaptive } = sums.get(k)!;
    return adaptive
      ? { summary, confirmation_attempts, first_stage: { k: stageOf(k), summary: head } }
      : { summary, confirmation_attempts };
  });
};

/** A row's counts over these attempts, classified at `minAttempts`. */
const tallyOf = (attempts: readonly { passed: boolean | null }[], minAttempts: number): Tally => {
  const t = { n: 0, c: 0, ungraded: 0 };
  for (const a of attempts)
    if (a.passed === null) t.ungraded++;
    else {
      t.n++;
      if (a.passed) t.c++;
    }
  return { ...t, class: classOf(t.n, t.c, minAttempts) };
};

/** The histogram as the core's bins, each with its rows' fewest recorded attempts where more than n. */
export const binsOf = (s: VersionSummary): HistogramBin[] => binsWithRecorded(s.histogram, s.ungraded_histogram);

/** The `report` headline numbers of a version, from its histogram, by the core's estimator (one implementation of the math). */
export const numbersOf = (s: VersionSummary, opts: HistogramOptions = {}): HistogramSummary =>
  summarizeHistogram(binsOf(s), opts);
