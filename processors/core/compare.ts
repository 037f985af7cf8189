import { STABILITY_CLASSES, type StabilityClass } from './classify.ts';
import {
  confirmSuspect,
  CONFIRMATION_OUTCOMES,
  type ConfirmationOutcome,
  type SuspectedRegression,
} from './confirm.ts';
import { mcnemarExact, type McNemar } from './mcnemar.ts';
import { pairedStats, type PairedStats } from './paired.ts';
import { DEFAULT_ADAPTIVE } from './adaptive.ts';
import { pairRows, type CompareOptions, type CountedPair, type CountedSide, type PairInput } from './pairing.ts';
import { firstStageOptions, reportGroup, withFirstStageHeadline, type GroupReport } from './report.ts';

export type Transitions = Record<StabilityClass, Record<StabilityClass, number>>;

/** A row-by-row comparison of a candidate against the baseline (the seed's steps 4–7). */
export type Comparison = {
  suite: string;
  dataset_version: string;
  baseline_version: string;
  candidate_version: string;
  screen_attempts: { baseline: number; candidate: number };
  /**
   * Per version, the first stage behind its headline numbers when it has an adaptive run (its screening is then
   * that run's attempts, as many as its stopping rule gave each row, not `screen_attempts`); null otherwise.
   */
  first_stage: { baseline: number | null; candidate: number | null };
  /**
   * Set (by the store's comparison, `comparisonFromStore`) when that first stage is the runner's default `--first-k`
   * because the adaptive runs' rounds were not found on the event log (it could not be read, or it lacks them): an
   * assumption the views name, never a fact they state.
   */
  first_stage_assumed?: true;
  /** Headline numbers of each version, from the screening attempts. */
  baseline: GroupReport;
  candidate: GroupReport;
  rows: { total: number; paired: number; baseline_only: string[]; candidate_only: string[] };
  /** transitions[baseline class][candidate class] = rows, from screening attempts. */
  transitions: Transitions;
  became_stable_correct: string[];
  /** Suspected regressions: stable-correct on the baseline, not on the candidate (kept even when every metric improves). */
  lost_stable_correct: string[];
  paired: PairedStats;
  /** Exact McNemar on stable-correct, over rows classified on both sides. */
  mcnemar: McNemar & { rows: number };
  confirmation: { rows: SuspectedRegression[]; counts: Record<ConfirmationOutcome, number> };
};

const transitions = (pairs: readonly CountedPair[]): Transitions => {
  const m = Object.fromEntries(
    STABILITY_CLASSES.map((b) => [b, Object.fromEntries(STABILITY_CLASSES.map((c) => [c, 0]))]),
  ) as Transitions;
  for (const p of pairs) m[p.baseline.screening.class][p.candidate.screening.class]++;
  return m;
};

const mcnemarOnStableCorrect = (pairs: readonly CountedPair[]): Comparison['mcnemar'] => {
  const classified = pairs.filter(
    (p) => p.baseline.screening.class !== 'unclassified' && p.candidate.screening.class !== 'unclassified',
  );
  const sc = (s: CountedPair['baseline']) => s.screening.class === 'stable_correct';
  const lost = classified.filter((p) => sc(p.baseline) && !sc(p.candidate)).length;
  const gained = classified.filter((p) => !sc(p.baseline) && sc(p.candidate)).length;
  return { rows: classified.length, ...mcnemarExact(lost, gained) };
};

const isLost = (p: CountedPair): boolean =>
  p.baseline.screening.class === 'stable_correct' && p.candidate.screening.class !== 'stable_correct';

/**
 * The comparison of paired rows, in row-id order: from the core's row states (`compareVersions`), or from
 * rows the store counted (sinks/clickhouse/queries/storeReport.ts). `input` gives the suite and versions only.
 */
export const comparePairs = (
  input: Pick<PairInput, 'suite' | 'dataset_version'> & {
    baseline: Pick<PairInput['baseline'], 'version'>;
    candidate: Pick<PairInput['candidate'], 'version'>;
  },
  paired: { screen_attempts: Comparison['screen_attempts']; rows: readonly CountedPair[] },
  opts: CompareOptions,
): Comparison => {
  const { rows } = paired;
  const suspects = rows.filter(isLost).map(confirmSuspect);
  const counts = Object.fromEntries(
    CONFIRMATION_OUTCOMES.map((o) => [o, suspects.filter((s) => s.outcome === o).length]),
  ) as Record<ConfirmationOutcome, number>;
  const key = (version: string) => ({
    suite: input.suite,
    dataset_version: input.dataset_version,
    agent_version: version,
  });
  const present = (s: CountedPair['baseline']) => s.all.n + s.all.ungraded > 0;
  const firstK = opts.headlineFirstStage ?? DEFAULT_ADAPTIVE.firstK;
  const stageOf = (of: (p: CountedPair) => CountedSide): number | null =>
    rows.some((p) => of(p).headline !== undefined) ? firstK : null;
  // a version with an adaptive run: its headline numbers from each row's first stage, as `passk report` gives them
  const side = (version: string, of: (p: CountedPair) => CountedSide): GroupReport => {
    // one pass over the rows (100k at 1M trials): the screening rows of the sides present, and whether one has a first stage
    const screening: CountedSide['screening'][] = [];
    let adaptive = false;
    for (const p of rows) {
      const s = of(p);
      if (!present(s)) continue;
      screening.push(s.screening);
      if (s.headline) adaptive = true;
    }
    // classes as the adaptive run made them: a row it stopped with a pass and a fail is a flip
    const full = reportGroup(key(version), screening, adaptive ? { ...opts, mixedIsFlip: true } : opts);
    if (!adaptive) return full;
    const stage = firstStageOptions(opts, firstK);
    const head: CountedSide['screening'][] = [];
    for (const p of rows) {
      const s = of(p);
      if (present(s)) head.push(s.headline ?? s.screening);
    }
    return withFirstStageHeadline(full, reportGroup(key(version), head, stage));
  };
  const baseline = side(input.baseline.version, (p) => p.baseline);
  const candidate = side(input.candidate.version, (p) => p.candidate);
  // the paired differences over the same attempts: each side's first stage where it has one (a copy of the rows
  // only when one has: pairedStats reads the screening)
  const headRows = rows.some((p) => p.baseline.headline || p.candidate.headline)
    ? rows.map((p) => ({
        ...p,
        baseline: { ...p.baseline, screening: p.baseline.headline ?? p.baseline.screening },
        candidate: { ...p.candidate, screening: p.candidate.headline ?? p.candidate.screening },
      }))
    : rows;
  // pairs up to the K both versions can answer: each one's report K (the report's rule: declared, else the attempts
  // every row was given, graded or not), the smaller of the two
  const anyPair = headRows.some((p) => p.baseline.screening.n > 0 && p.candidate.screening.n > 0);
  const k = opts.k ?? (anyPair ? Math.min(baseline.k_max, candidate.k_max) : 0);
  return {
    suite: input.suite,
    dataset_version: input.dataset_version,
    baseline_version: input.baseline.version,
    candidate_version: input.candidate.version,
    screen_attempts: paired.screen_attempts,
    first_stage: { baseline: stageOf((p) => p.baseline), candidate: stageOf((p) => p.candidate) },
    baseline,
    candidate,
    rows: {
      total: rows.length,
      paired: rows.filter((p) => present(p.baseline) && present(p.candidate)).length,
      baseline_only: rows.filter((p) => !present(p.candidate)).map((p) => p.row_id),
      candidate_only: rows.filter((p) => !present(p.baseline)).map((p) => p.row_id),
    },
    transitions: transitions(rows),
    became_stable_correct: rows
      .filter(
        (p) => p.candidate.screening.class === 'stable_correct' && p.baseline.screening.class !== 'stable_correct',
      )
      .map((p) => p.row_id),
    lost_stable_correct: rows.filter(isLost).map((p) => p.row_id),
    paired: pairedStats(headRows, { k, bootstrap: opts.bootstrap }),
    mcnemar: mcnemarOnStableCorrect(rows),
    confirmation: { rows: suspects, counts },
  };
};

/** Compares two versions on one suite and dataset version. */
export const compareVersions = (input: PairInput, opts: CompareOptions): Comparison =>
  comparePairs(input, pairRows(input, opts), opts);
