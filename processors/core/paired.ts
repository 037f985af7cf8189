import { bootstrapMeans, type BootstrapOptions } from './bootstrap.ts';
import { passCurvesAt } from './estimators.ts';
import type { ByK } from './histogram.ts';
import { zFor, type Interval } from './intervals.ts';
import type { CountedPair } from './pairing.ts';

/**
 * Paired differences, candidate − baseline, over rows that have counted screening attempts on both
 * sides. The rows are resampled jointly (a paired bootstrap), so row difficulty cancels out.
 */
export type PairedDelta = {
  rows: number;
  baseline: number | null;
  candidate: number | null;
  delta: number | null;
  interval: Interval | null;
};
export type PairedStats = {
  rows: number;
  k_max: number;
  /**
   * Σc/Σn on each side over the rows with graded screening attempts on both, and its change with a paired
   * cluster-robust (CR1) interval: the two ratios linearized per row, so a row's difficulty cancels.
   */
  mean_accuracy: PairedDelta;
  pass_at_1: PairedDelta;
  pass_hat_k: ByK<PairedDelta>;
  /** The share of flip rows over the rows classified on both sides, its change with a paired bootstrap interval. */
  flip_rate: PairedDelta;
};

const EMPTY: PairedDelta = { rows: 0, baseline: null, candidate: null, delta: null, interval: null };

/**
 * Δ = Σc_c/Σn_c − Σc_b/Σn_b over R paired rows. Each ratio's per-row influence is (c_i − p̂·n_i)/n̄ (n̄ = Σn/R); the
 * change's is the candidate's minus the baseline's, and Var = R/(R−1) · Σ u_i² / R² (CR1, rows as clusters): the
 * clustered SE of docs/metrics.md applied to the paired difference. Normal interval, clipped to [−1, 1].
 */
export const pairedMeanAccuracy = (
  rows: readonly { b: { n: number; c: number }; c: { n: number; c: number } }[],
  confidence: number,
): PairedDelta => {
  const R = rows.length;
  if (R === 0) return EMPTY;
  let nb = 0,
    cb = 0,
    nc = 0,
    cc = 0;
  for (const { b, c } of rows) {
    nb += b.n;
    cb += b.c;
    nc += c.n;
    cc += c.c;
  }
  const base = cb / nb;
  const cand = cc / nc;
  const delta = cand - base;
  if (R < 2) return { rows: R, baseline: base, candidate: cand, delta, interval: null };
  let ss = 0;
  for (const { b, c } of rows) {
    const u = (c.c - cand * c.n) / (nc / R) - (b.c - base * b.n) / (nb / R);
    ss += u * u;
  }
  const half = (zFor(confidence) * Math.sqrt((R / (R - 1)) * ss)) / R;
  return {
    rows: R,
    baseline: base,
    candidate: cand,
    delta,
    interval: [Math.max(-1, delta - half), Math.min(1, delta + half)],
  };
};

const mean = (xs: readonly number[]): number | null =>
  xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : null;

/**
 * The paired numbers for k = 1..`opts.k`: the K both versions can answer, which `comparePairs` takes as the smaller
 * of the two versions' report K (`defaultK` on each side: declared, else the attempts every row was given). A pair
 * counts at k when both sides have k graded screening attempts; 0 when no row has graded attempts on both sides.
 */
export const pairedStats = (
  pairs: readonly CountedPair[],
  opts: { k: number; bootstrap: BootstrapOptions },
): PairedStats => {
  const both = pairs.filter((p) => p.baseline.screening.n > 0 && p.candidate.screening.n > 0);
  const K = opts.k;
  const curvesOf = passCurvesAt(K);
  const curves = both.map((p) => ({
    b: curvesOf(p.baseline.screening.n, p.baseline.screening.c).passHat,
    c: curvesOf(p.candidate.screening.n, p.candidate.screening.c).passHat,
  }));
  // pass@1 = pass^1 = c/n per row; column i holds Δpass^(i+1), NaN where a side has fewer than k attempts.
  const columns = Array.from({ length: K }, (_, i) =>
    Float64Array.from(curves, ({ b, c }) => (b[i] === undefined || c[i] === undefined ? NaN : c[i]! - b[i]!)),
  );
  const intervals = bootstrapMeans(columns, opts.bootstrap);
  const at = (i: number): PairedDelta => {
    const used = curves.filter(({ b, c }) => b[i] !== undefined && c[i] !== undefined);
    const base = mean(used.map(({ b }) => b[i]!));
    const cand = mean(used.map(({ c }) => c[i]!));
    return {
      rows: used.length,
      baseline: base,
      candidate: cand,
      delta: base === null || cand === null ? null : cand - base,
      interval: intervals[i] ?? null,
    };
  };
  // Flip rate: rows classified on both sides, 1 for a flip row, 0 for a stable one; Δ per row, resampled jointly.
  const classified = pairs.filter(
    (p) => p.baseline.screening.class !== 'unclassified' && p.candidate.screening.class !== 'unclassified',
  );
  const isFlip = (s: CountedPair['baseline']) => (s.screening.class === 'flip' ? 1 : 0);
  const flipBase = mean(classified.map((p) => isFlip(p.baseline)));
  const flipCand = mean(classified.map((p) => isFlip(p.candidate)));
  const [flipInterval] = bootstrapMeans(
    [Float64Array.from(classified, (p) => isFlip(p.candidate) - isFlip(p.baseline))],
    opts.bootstrap,
  );
  return {
    rows: both.length,
    k_max: K,
    mean_accuracy: pairedMeanAccuracy(
      both.map((p) => ({ b: p.baseline.screening, c: p.candidate.screening })),
      opts.bootstrap.confidence,
    ),
    pass_at_1: K >= 1 ? at(0) : EMPTY,
    pass_hat_k: Object.fromEntries(Array.from({ length: K }, (_, i) => [String(i + 1), at(i)])),
    flip_rate: {
      rows: classified.length,
      baseline: flipBase,
      candidate: flipCand,
      delta: flipBase === null || flipCand === null ? null : flipCand - flipBase,
      interval: flipInterval ?? null,
    },
  };
};
