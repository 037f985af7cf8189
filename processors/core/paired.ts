import { bootstrapMeans, type BootstrapOptions } from './bootstrap.ts';
import { passCurves } from './estimators.ts';
import type { ByK } from './histogram.ts';
import type { Interval } from './intervals.ts';
import type { RowPair } from './pairing.ts';
import { minOf } from './arrays.ts';

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
export type PairedStats = { rows: number; k_max: number; pass_at_1: PairedDelta; pass_hat_k: ByK<PairedDelta> };

const mean = (xs: readonly number[]): number | null =>
  xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : null;

export const pairedStats = (
  pairs: readonly RowPair[],
  opts: { k?: number; bootstrap: BootstrapOptions },
): PairedStats => {
  const both = pairs.filter((p) => p.baseline.screening.n > 0 && p.candidate.screening.n > 0);
  const K =
    opts.k ?? (both.length > 0 ? minOf(both.map((p) => Math.min(p.baseline.screening.n, p.candidate.screening.n))) : 0);
  const curves = both.map((p) => ({
    b: passCurves(p.baseline.screening.n, p.baseline.screening.c, K).passHat,
    c: passCurves(p.candidate.screening.n, p.candidate.screening.c, K).passHat,
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
  const empty: PairedDelta = { rows: 0, baseline: null, candidate: null, delta: null, interval: null };
  return {
    rows: both.length,
    k_max: K,
    pass_at_1: K >= 1 ? at(0) : empty,
    pass_hat_k: Object.fromEntries(Array.from({ length: K }, (_, i) => [String(i + 1), at(i)])),
  };
};
