import { bootstrapMeansOfKeys, DEFAULT_BOOTSTRAP, type BootstrapOptions } from './bootstrap.ts';
import { checkStability, hiddenCheckFlips, type CheckStability, type HiddenCheckFlip } from './checks.ts';
import { DEFAULT_MIN_ATTEMPTS, STABILITY_CLASSES, type ClassCounts } from './classify.ts';
import { histogramBuilder, summarizeHistogram, type ByK, type HistogramSummary } from './histogram.ts';
import { clusteredMeanAccuracy, wilson, type Interval } from './intervals.ts';
import type { AttemptRecord, GroupKey, RowState } from './rowState.ts';
import { isAdaptiveRunId, isConfirmationRun } from './screening.ts';
import { rowIdOrder, type Group } from './groups.ts';
import { summarizeRow, type ReportRow, type RowSummary, type VerdictPolicy } from './rowSummary.ts';
import { rowColumns } from './rowColumns.ts';
import { declaredKOf, type DeclaredRun } from './declaredK.ts';

export type ReportOptions = VerdictPolicy & {
  /**
   * Report pass@k and pass^k up to this k; default: the attempts every row was given, graded or not (`defaultK`:
   * the fewest recorded of any row with a graded one), each k averaged over the rows with k graded attempts.
   */
  k?: number;
  /**
   * Runs that declared the attempts they gave each row (`declaredRunsOf`; `passk report` reads them from the files or
   * the store): a group's default K is at least the fewest its runs declared (`declaredKOf`), so an attempt missing
   * from a file does not lower it. @default none: K is counted from the recorded attempts
   */
  declared?: readonly DeclaredRun[];
  /**
   * Count the attempts of confirmation runs (run_id starting with "confirm"). They target suspected
   * regressions only, so pooling them with the planned attempts would weigh those rows more in
   * mean accuracy. @default false: the report describes the planned attempts; compare and gate use both.
   */
  includeConfirmation?: boolean;
  /**
   * Adaptive runs (run_id starting with "adaptive-"): count only each row's first this many graded attempts of
   * each such run, the fixed first stage behind its unbiased headline numbers (docs/adaptive.md). The later
   * attempts, which the stopping rule gave some rows and not others, are left out. @default all attempts
   */
  firstStage?: number;
  /**
   * Adaptive runs' first stage for the headline numbers only (`passk report` on adaptive runs): mean accuracy,
   * pass@k, pass^k and the flip rate (and their intervals) from each adaptive run's first this many graded
   * attempts of a row, classified at that many; rows, trials and classes from all attempts (classes by the run's
   * rule, `mixedIsFlip`). A group without an adaptive run is untouched.
   */
  headlineFirstStage?: number;
  /** Run ids of adaptive runs besides those named `adaptive-…` (a run given its own --run-id; from its rounds). */
  adaptiveRuns?: readonly string[];
  bootstrap: BootstrapOptions;
};

export const DEFAULT_REPORT_OPTIONS: ReportOptions = {
  ungradedAsFailure: false,
  minAttempts: DEFAULT_MIN_ATTEMPTS,
  bootstrap: DEFAULT_BOOTSTRAP,
};

export type GroupIntervals = {
  confidence: number;
  bootstrap: { reps: number; seed: number; method: 'percentile, rows resampled' };
  mean_accuracy: { clustered_se: number | null; clustered: Interval | null; wilson_iid: Interval | null };
  pass_at_k: ByK<Interval | null>;
  pass_hat_k: ByK<Interval | null>;
  flip_rate: { bootstrap: Interval | null; wilson: Interval | null };
  /** Wilson intervals for each class's share of the classified rows. */
  classes: Record<Exclude<keyof ClassCounts, 'unclassified'>, Interval | null>;
};

export type GroupReport = GroupKey &
  Omit<HistogramSummary, 'passes'> & {
    ungraded: number;
    /** Rows with fewer attempts recorded (graded or not) than `declared_k`: an attempt missing from the source. */
    rows_short: number;
    ungraded_as_failure: boolean;
    min_attempts: number;
    attempts_per_row: { min: number | null; max: number | null; mean: number | null; counts: Record<string, number> };
    pass_at_1: number | null;
    output_flip: { rate: number | null; rows: number; eligible: number; stable_wrong: number };
    checks: CheckStability[];
    stable_verdict_check_flips: HiddenCheckFlip[];
    forbidden_trials: number;
    intervals: GroupIntervals;
  };

/**
 * What the report counts row by row, in one pass over the rows (100k at 1M trials) instead of one per number: the
 * (n, c) histogram with each bin's fewest recorded attempts, and the plain counts beside it. Sums are of integers,
 * so their order does not matter.
 */
const tallyRows = (rows: readonly ReportRow[], opts: ReportOptions, declared: number | undefined) => {
  const histogram = histogramBuilder();
  const perRow = new Map<number, number>();
  let ungraded = 0,
    forbidden = 0,
    short = 0,
    graded = 0,
    attempts = 0,
    min = Infinity,
    max = -Infinity,
    eligible = 0,
    differ = 0,
    differStableWrong = 0;
  for (const r of rows) {
    // a row's recorded attempts: its counted ones and the ungraded ones left out (ungradedAsFailure counts them in n)
    const recorded = opts.ungradedAsFailure ? r.n : r.n + r.ungraded;
    histogram.add(r.n, r.c, recorded);
    ungraded += r.ungraded;
    forbidden += r.forbidden_trials;
    if (declared !== undefined && recorded > 0 && recorded < declared) short++;
    if (r.n > 0) {
      graded++;
      attempts += r.n;
      if (r.n < min) min = r.n;
      if (r.n > max) max = r.n;
      perRow.set(r.n, (perRow.get(r.n) ?? 0) + 1);
    }
    if (r.outputs_differ !== null) {
      eligible++;
      if (r.outputs_differ) {
        differ++;
        if (r.class === 'stable_wrong') differStableWrong++;
      }
    }
  }
  // integer keys: an object lists them in numeric order, however they were added
  const counts: Record<string, number> = {};
  for (const [n, count] of perRow) counts[String(n)] = count;
  const attemptsPerRow: GroupReport['attempts_per_row'] =
    graded === 0 ? { min: null, max: null, mean: null, counts } : { min, max, mean: attempts / graded, counts };
  const outputFlip: GroupReport['output_flip'] = {
    rate: eligible > 0 ? differ / eligible : null,
    rows: differ,
    eligible,
    stable_wrong: differStableWrong,
  };
  return { bins: histogram.bins(), ungraded, forbidden, short, attemptsPerRow, outputFlip };
};

const intervalsFor = (rows: readonly ReportRow[], s: HistogramSummary, opts: ReportOptions): GroupIntervals => {
  const { confidence } = opts.bootstrap;
  // the rows with a graded attempt, each by a key for its (n, c): a row's columns are its (n, c)'s
  const keyIds = new Map<number, Map<number, number>>();
  const keys: { n: number; c: number }[] = [];
  const keyOfRow: number[] = [];
  for (const { n, c } of rows) {
    if (n <= 0) continue;
    let byC = keyIds.get(n);
    if (!byC) keyIds.set(n, (byC = new Map()));
    let key = byC.get(c);
    if (key === undefined) {
      byC.set(c, (key = keys.length));
      keys.push({ n, c });
    }
    keyOfRow.push(key);
  }
  const cols = rowColumns(keys, s.k_max, opts.minAttempts);
  const boot = bootstrapMeansOfKeys(
    Int32Array.from(keyOfRow),
    [...cols.passAt, ...cols.passHat, cols.flip],
    opts.bootstrap,
  );
  const byK = (offset: number): ByK<Interval | null> =>
    Object.fromEntries(cols.passAt.map((_, i) => [String(i + 1), boot[offset + i] ?? null]));
  const clustered = clusteredMeanAccuracy(rows, confidence);
  const [sc, sw, fl] = STABILITY_CLASSES.slice(0, 3).map((k) => wilson(s.classes[k], s.classified, confidence));
  return {
    confidence,
    bootstrap: { reps: opts.bootstrap.reps, seed: opts.bootstrap.seed, method: 'percentile, rows resampled' },
    mean_accuracy: {
      clustered_se: clustered?.se ?? null,
      clustered: clustered?.interval ?? null,
      wilson_iid: wilson(s.passes, s.trials, confidence),
    },
    pass_at_k: byK(0),
    pass_hat_k: byK(s.k_max),
    flip_rate: { bootstrap: boot[2 * s.k_max] ?? null, wilson: wilson(s.classes.flip, s.classified, confidence) },
    classes: { stable_correct: sc ?? null, stable_wrong: sw ?? null, flip: fl ?? null },
  };
};

/** The report of one (suite, dataset version, agent version): every headline number with its evidence. */
export const reportGroup = (
  key: GroupKey,
  rows: readonly ReportRow[],
  opts: ReportOptions = DEFAULT_REPORT_OPTIONS,
): GroupReport => {
  const declared = declaredKOf(key, opts.declared);
  const t = tallyRows(rows, opts, declared);
  const s = summarizeHistogram(t.bins, {
    k: opts.k,
    minAttempts: opts.minAttempts,
    mixedIsFlip: opts.mixedIsFlip,
    ...(declared === undefined ? {} : { declared }),
  });
  const { confidence } = opts.bootstrap;
  return {
    suite: key.suite,
    dataset_version: key.dataset_version,
    agent_version: key.agent_version,
    rows: s.rows,
    rows_without_graded: s.rows_without_graded,
    trials: s.trials,
    ungraded: t.ungraded,
    rows_short: declared === undefined ? 0 : t.short,
    ungraded_as_failure: opts.ungradedAsFailure,
    attempts_per_row: t.attemptsPerRow,
    mean_accuracy: s.mean_accuracy,
    pass_at_1: s.pass_at_k['1'] ?? null,
    k_max: s.k_max,
    declared_k: s.declared_k,
    pass_at_k: s.pass_at_k,
    pass_hat_k: s.pass_hat_k,
    rows_at_k: s.rows_at_k,
    flip_rate: s.flip_rate,
    classified: s.classified,
    min_attempts: opts.minAttempts,
    classes: s.classes,
    output_flip: t.outputFlip,
    checks: checkStability(rows, confidence),
    stable_verdict_check_flips: hiddenCheckFlips(rows),
    forbidden_trials: t.forbidden,
    intervals: intervalsFor(rows, s, opts),
  };
};

/** Row summaries of a group over all its attempts, in row-id order. */
const isMarkedConfirmation = isConfirmationRun({});

const adaptiveRun =
  (listed: readonly string[] = []) =>
  (runId: string): boolean =>
    isAdaptiveRunId(runId) || listed.includes(runId);

/** The adaptive runs among a group's attempts (run id `adaptive-…`, or listed), sorted. */
export const adaptiveRunsOf = (g: Group, listed: readonly string[] = []): string[] => {
  const runs = new Set<string>();
  for (const s of g.rows.values())
    for (const a of s.attempts) if (isAdaptiveRunId(a.run_id) || listed.includes(a.run_id)) runs.add(a.run_id);
  return [...runs].sort();
};

/**
 * Of each adaptive run's attempts on a row, those of its first stage: by attempt number, up to and including
 * the `k`-th graded one (the ungraded attempts before it stay, as they would in any run).
 */
const firstStageOf = (
  attempts: readonly AttemptRecord[],
  k: number,
  isAdaptiveRun: (runId: string) => boolean,
): AttemptRecord[] => {
  const kept = new Set<AttemptRecord>();
  const byRun = new Map<string, AttemptRecord[]>();
  for (const a of attempts) if (isAdaptiveRun(a.run_id)) byRun.set(a.run_id, [...(byRun.get(a.run_id) ?? []), a]);
  for (const run of byRun.values()) {
    let graded = 0;
    for (const a of run.sort((x, y) => x.attempt - y.attempt)) {
      if (graded >= k) break;
      kept.add(a);
      if (a.passed !== null) graded++;
    }
  }
  return attempts.filter((a) => !isAdaptiveRun(a.run_id) || kept.has(a));
};

/** The attempts a report counts: all of them, or all but those of confirmation runs; adaptive runs' first stage. */
const reportedState = (
  state: RowState,
  includeConfirmation: boolean,
  firstStage?: number,
  adaptiveRuns?: readonly string[],
): RowState => {
  const counted = includeConfirmation ? state.attempts : state.attempts.filter((a) => !isMarkedConfirmation(a.run_id));
  const attempts = firstStage === undefined ? counted : firstStageOf(counted, firstStage, adaptiveRun(adaptiveRuns));
  return attempts.length === state.attempts.length ? state : { ...state, attempts };
};

/**
 * One row's attempts behind an adaptive version's headline numbers, the report's own rule (`headlineFirstStage`):
 * confirmation runs left out, each adaptive run's first `k` graded attempts, other runs' attempts all. The process
 * summary (processors/folds/versionSummary.ts) counts the same attempts, so it says what `passk report` says.
 */
export const firstStageState = (state: RowState, k: number, adaptiveRuns?: readonly string[]): RowState =>
  reportedState(state, false, k, adaptiveRuns);

/** Whether a row has an attempt of an adaptive run (run id `adaptive-…`, or listed). */
export const hasAdaptiveRun = (state: RowState, listed: readonly string[] = []): boolean =>
  state.attempts.some((a) => adaptiveRun(listed)(a.run_id));

/** Attempts of confirmation runs in a group (counted or not, see `includeConfirmation`). */
export const confirmationAttempts = (g: Group): number =>
  [...g.rows.values()].reduce((sum, s) => sum + s.attempts.filter((a) => isMarkedConfirmation(a.run_id)).length, 0);

export const summarizeGroup = (
  g: Group,
  policy: VerdictPolicy & { includeConfirmation?: boolean; firstStage?: number; adaptiveRuns?: readonly string[] },
): RowSummary[] =>
  [...g.rows]
    .sort(([a], [b]) => rowIdOrder(a, b))
    .map(([id, state]) =>
      summarizeRow(
        id,
        reportedState(state, policy.includeConfirmation ?? false, policy.firstStage, policy.adaptiveRuns),
        policy,
      ),
    );

/** Where an adaptive group's headline numbers come from: the first stage of its adaptive runs. */
export type FirstStageHeadline = {
  k: number;
  runs: string[];
  /** Rows with k graded first-stage attempts (the flip rate's denominator), and how many of them flipped. */
  rows: number;
  flips: number;
  /**
   * Attempts of the version's other runs (not adaptive, confirmation runs left out unless counted) that the headline
   * numbers count beside the first stage, all of them (they were not stopped adaptively); absent when none. With them
   * a row has more than `k` attempts, and pass^k goes past `k`: a fixed `passk run --k 3` and an adaptive run of the
   * same version on the same dataset version give 3 + 2 a row.
   */
  other_attempts?: number;
  /**
   * Set by the store's report (`reportFromStore`) when `k` is the runner's default `--first-k` because no round of
   * these runs was found on the event log (it could not be read, or it lacks them).
   */
  assumed?: true;
};

/** `passk report --json`: one entry per (suite, dataset version, agent version). */
export type ReportedGroup = GroupReport & {
  confirmation_attempts: { count: number; counted: boolean };
  first_stage?: FirstStageHeadline;
};

/**
 * An adaptive version's report: `full` (all its attempts, classed by the run's rule) with the headline numbers —
 * mean accuracy, pass@k, pass^k, the flip rate and their intervals — of `head` (each row's first-stage attempts,
 * classified at the first stage's k). `passk report`, `passk compare` and the overview all take it.
 */
export const withFirstStageHeadline = (full: GroupReport, head: GroupReport): GroupReport => ({
  ...full,
  mean_accuracy: head.mean_accuracy,
  pass_at_1: head.pass_at_1,
  k_max: head.k_max,
  declared_k: head.declared_k,
  rows_short: head.rows_short,
  pass_at_k: head.pass_at_k,
  pass_hat_k: head.pass_hat_k,
  rows_at_k: head.rows_at_k,
  flip_rate: head.flip_rate,
  intervals: {
    ...full.intervals,
    mean_accuracy: head.intervals.mean_accuracy,
    pass_at_k: head.intervals.pass_at_k,
    pass_hat_k: head.intervals.pass_hat_k,
    flip_rate: head.intervals.flip_rate,
  },
});

/** The options a first stage of k is reported with: classified at k, no declaration (the stopping rule gave rows different attempts). */
export const firstStageOptions = <O extends ReportOptions>(opts: O, k: number): O => {
  const { declared: _declared, ...undeclared } = opts;
  return { ...undeclared, firstStage: k, minAttempts: k } as O;
};

/** The headline numbers of one group from its adaptive runs' first stage; everything else from all attempts. */
const withFirstStage = (g: Group, full: GroupReport, k: number, runs: string[], opts: ReportOptions): ReportedGroup => {
  const stage = firstStageOptions(opts, k);
  const head = reportGroup(g.key, summarizeGroup(g, stage), stage);
  const adaptive = adaptiveRun(opts.adaptiveRuns);
  let other = 0;
  for (const s of g.rows.values())
    for (const a of reportedState(s, opts.includeConfirmation ?? false).attempts) if (!adaptive(a.run_id)) other++;
  return {
    ...withFirstStageHeadline(full, head),
    confirmation_attempts: { count: confirmationAttempts(g), counted: opts.includeConfirmation ?? false },
    first_stage: {
      k,
      runs,
      rows: head.classified,
      flips: head.classes.flip,
      ...(other > 0 ? { other_attempts: other } : {}),
    },
  };
};

export const buildReport = (
  groups: readonly Group[],
  opts: ReportOptions = DEFAULT_REPORT_OPTIONS,
): { groups: ReportedGroup[] } => ({
  groups: groups.map((g) => {
    const runs = opts.headlineFirstStage === undefined ? [] : adaptiveRunsOf(g, opts.adaptiveRuns);
    if (runs.length > 0) {
      // classes as the adaptive run made them: a row it stopped with a pass and a fail is a flip, not unclassified
      const adaptive = { ...opts, mixedIsFlip: true };
      const full = reportGroup(g.key, summarizeGroup(g, adaptive), adaptive);
      return withFirstStage(g, full, opts.headlineFirstStage!, runs, opts);
    }
    const full = reportGroup(g.key, summarizeGroup(g, opts), opts);
    return {
      ...full,
      confirmation_attempts: { count: confirmationAttempts(g), counted: opts.includeConfirmation ?? false },
    };
  }),
});
