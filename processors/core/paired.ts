import { bootstrapMeans, bootstrapMeansOfKeys, type BootstrapOptions } from './bootstrap.ts';
import { passCurvesAt, type PassCurves } from './estimators.ts';
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
  const keyOf = new Int32Array(rows.length);
  for (let i = 0; i < rows.length; i++) keyOf[i] = i;
  return pairedMeanAccuracyOfKeys(keyOf, rows, confidence);
};

/**
 * `pairedMeanAccuracy` of rows given by key (row i is `keys[keyOf[i]]`): the same sums in the same row order, so the
 * same numbers to the bit, with each key's influence computed once.
 */
const pairedMeanAccuracyOfKeys = (
  keyOf: Int32Array,
  keys: readonly { b: { n: number; c: number }; c: { n: number; c: number } }[],
  confidence: number,
): PairedDelta => {
  const R = keyOf.length;
  if (R === 0) return EMPTY;
  let nb = 0,
    cb = 0,
    nc = 0,
    cc = 0;
  for (let i = 0; i < R; i++) {
    const { b, c } = keys[keyOf[i]!]!;
    nb += b.n;
    cb += b.c;
    nc += c.n;
    cc += c.c;
  }
  const base = cb / nb;
  const cand = cc / nc;
  const delta = cand - base;
  if (R < 2) return { rows: R, baseline: base, candidate: cand, delta, interval: null };
  const u2 = Float64Array.from(keys, ({ b, c }) => {
    const u = (c.c - cand * c.n) / (nc / R) - (b.c - base * b.n) / (nb / R);
    return u * u;
  });
  let ss = 0;
  for (let i = 0; i < R; i++) ss += u2[keyOf[i]!]!;
  const half = (zFor(confidence) * Math.sqrt((R / (R - 1)) * ss)) / R;
  return {
    rows: R,
    baseline: base,
    candidate: cand,
    delta,
    interval: [Math.max(-1, delta - half), Math.min(1, delta + half)],
  };
};

/**
 * The paired numbers for k = 1..`opts.k`: the K both versions can answer, which `comparePairs` takes as the smaller
 * of the two versions' report K (`defaultK` on each side: declared, else the attempts every row was given). A pair
 * counts at k when both sides have k graded screening attempts; 0 when no row has graded attempts on both sides.
 */
export const pairedStats = (
  pairs: readonly CountedPair[],
  opts: { k: number; bootstrap: BootstrapOptions },
): PairedStats => {
  const K = opts.k;
  const curvesOf = passCurvesAt(K);
  // one pass over the pairs (100k at 1M trials): the rows graded on both sides, each by a key for its (n, c) on both
  // sides (a few dozen distinct), and the rows classified on both
  const curveIds = new Map<Readonly<PassCurves>, number>();
  const curveId = (n: number, c: number): number => {
    const curves = curvesOf(n, c);
    let id = curveIds.get(curves);
    if (id === undefined) curveIds.set(curves, (id = curveIds.size));
    return id;
  };
  const keyIds = new Map<number, number>();
  const keys: { b: { n: number; c: number }; c: { n: number; c: number } }[] = [];
  const keyOfRow: number[] = [];
  const flipDiffs: number[] = [];
  let flipBase = 0;
  let flipCand = 0;
  for (const p of pairs) {
    const b = p.baseline.screening;
    const c = p.candidate.screening;
    if (b.n > 0 && c.n > 0) {
      // (baseline curves, candidate curves) as one number: fewer than 2^26 distinct curves on a side
      const pairId = curveId(b.n, b.c) * 0x4000000 + curveId(c.n, c.c);
      let key = keyIds.get(pairId);
      if (key === undefined) {
        keyIds.set(pairId, (key = keys.length));
        keys.push({ b: { n: b.n, c: b.c }, c: { n: c.n, c: c.c } });
      }
      keyOfRow.push(key);
    }
    // Flip rate: rows classified on both sides, 1 for a flip row, 0 for a stable one; Δ per row, resampled jointly.
    if (b.class !== 'unclassified' && c.class !== 'unclassified') {
      const fb = b.class === 'flip' ? 1 : 0;
      const fc = c.class === 'flip' ? 1 : 0;
      flipBase += fb;
      flipCand += fc;
      flipDiffs.push(fc - fb);
    }
  }
  const keyOf = Int32Array.from(keyOfRow);
  const R = keyOf.length;
  // pass@1 = pass^1 = c/n per row; column i holds Δpass^(i+1) of each key, NaN where a side has fewer than k
  // attempts. The means are summed row by row in row order, as one reduce over the rows used would.
  const hats = keys.map(({ b, c }) => ({ b: curvesOf(b.n, b.c).passHat, c: curvesOf(c.n, c.c).passHat }));
  const columns = Array.from({ length: K }, (_, i) =>
    Float64Array.from(hats, ({ b, c }) => (b[i] === undefined || c[i] === undefined ? NaN : c[i]! - b[i]!)),
  );
  const bSum = new Float64Array(K);
  const cSum = new Float64Array(K);
  const used = new Int32Array(K);
  for (let r = 0; r < R; r++) {
    const { b, c } = hats[keyOf[r]!]!;
    for (let i = 0; i < K; i++) {
      const bv = b[i];
      const cv = c[i];
      if (bv !== undefined && cv !== undefined) {
        bSum[i]! += bv;
        cSum[i]! += cv;
        used[i]!++;
      }
    }
  }
  const intervals = bootstrapMeansOfKeys(keyOf, columns, opts.bootstrap);
  const at = (i: number): PairedDelta => {
    const base = used[i]! > 0 ? bSum[i]! / used[i]! : null;
    const cand = used[i]! > 0 ? cSum[i]! / used[i]! : null;
    return {
      rows: used[i]!,
      baseline: base,
      candidate: cand,
      delta: base === null || cand === null ? null : cand - base,
      interval: intervals[i] ?? null,
    };
  };
  const classified = flipDiffs.length;
  const flipB = classified > 0 ? flipBase / classified : null;
  const flipC = classified > 0 ? flipCand / classified : null;
  const [flipInterval] = bootstrapMeans([Float64Array.from(flipDiffs)], opts.bootstrap);
  return {
    rows: R,
    k_max: K,
    mean_accuracy: pairedMeanAccuracyOfKeys(keyOf, keys, opts.bootstrap.confidence),
    pass_at_1: K >= 1 ? at(0) : EMPTY,
    pass_hat_k: Object.fromEntries(Array.from({ length: K }, (_, i) => [String(i + 1), at(i)])),
    flip_rate: {
      rows: classified,
      baseline: flipB,
      candidate: flipC,
      delta: flipB === null || flipC === null ? null : flipC - flipB,
      interval: flipInterval ?? null,
    },
  };
};
