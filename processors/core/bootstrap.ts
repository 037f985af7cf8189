import { multinomial } from './binomial.ts';
import { createRng } from './prng.ts';
import type { Interval } from './intervals.ts';

/**
 * Percentile bootstrap over rows. Rows are the unit that was sampled (attempts on one row are
 * correlated), so each replicate draws R rows with replacement and recomputes every column's mean.
 * A column entry of NaN means "this row is left out of this column" (e.g. a row with fewer than k
 * attempts at pass^k): that column's mean is then over the drawn rows that have a value.
 * For a paired comparison, pass one column of per-row differences: the rows are drawn jointly.
 */
export type BootstrapOptions = {
  /** Number of resamples. @default 2000 */
  reps: number;
  /** PRNG seed: the same seed gives the same intervals. @default 1 */
  seed: number;
  /** @default 0.95 */
  confidence: number;
};

export const DEFAULT_BOOTSTRAP: BootstrapOptions = { reps: 2000, seed: 1, confidence: 0.95 };

/** The p-quantile of sorted values, linear interpolation between order statistics (R's type 7). */
export const quantileSorted = (sorted: ArrayLike<number>, p: number): number => {
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const a = sorted[lo]!;
  const b = sorted[Math.min(lo + 1, sorted.length - 1)]!;
  return a + (h - lo) * (b - a);
};

const percentileInterval = (reps: Float64Array, count: number, confidence: number): Interval | null => {
  if (count === 0) return null;
  const sorted = reps.subarray(0, count).sort();
  const alpha = (1 - confidence) / 2;
  return [quantileSorted(sorted, alpha), quantileSorted(sorted, 1 - alpha)];
};

/**
 * Rows with the same values in every column are interchangeable, so each replicate only counts how
 * often each distinct row (bin) was drawn: R draws plus bins × columns work, not R × columns.
 * Rows are binned by a hash of their bits, confirmed by comparing the values (Object.is: NaN = NaN).
 */
const bits = new Float64Array(1);
const words = new Uint32Array(bits.buffer);
const rowHash = (columns: readonly ArrayLike<number>[], i: number): number => {
  let h = 0x811c9dc5;
  for (const col of columns) {
    bits[0] = col[i]!;
    h = Math.imul(h ^ words[0]!, 16777619);
    h = Math.imul(h ^ words[1]!, 16777619);
  }
  return h;
};

/**
 * Bins of rows given by key: row i has the values of key `keyOf[i]` (`values[j][key]`, column j). Keys are binned
 * by their values when first met, in row order, so the bins, their order and each row's bin are those of binning
 * every row by its own values.
 */
const binKeys = (
  keyOf: ArrayLike<number>,
  columns: readonly ArrayLike<number>[],
  keys: number,
): { binOf: Int32Array; values: Float64Array[] } => {
  const R = keyOf.length;
  const binOf = new Int32Array(R);
  const binOfKey = new Int32Array(keys).fill(-1);
  // per hash, its latest bin, chained to the earlier bins of the same hash (`next`; -1 ends): at most one bin
  // holds a key's values, so the order of the search does not matter
  const byHash = new Map<number, number>();
  const next: number[] = [];
  const firstKey: number[] = [];
  const same = (a: number, b: number): boolean => {
    for (const col of columns) if (!Object.is(col[a], col[b])) return false;
    return true;
  };
  for (let i = 0; i < R; i++) {
    const key = keyOf[i]!;
    let b = binOfKey[key]!;
    if (b < 0) {
      const h = rowHash(columns, key);
      const head = byHash.get(h) ?? -1;
      b = head;
      while (b >= 0 && !same(firstKey[b]!, key)) b = next[b]!;
      if (b < 0) {
        b = firstKey.length;
        firstKey.push(key);
        next.push(head);
        byHash.set(h, b);
      }
      binOfKey[key] = b;
    }
    binOf[i] = b;
  }
  return { binOf, values: columns.map((col) => Float64Array.from(firstKey, (k) => col[k]!)) };
};

/**
 * The rows per bin from which a replicate's counts are drawn as a multinomial (`multinomial`: a binomial per bin,
 * each some tens of uniforms) rather than as R draws of one uniform each. The two give the same distribution of
 * replicates, not the same stream: a data set crossing this line gets other (equally valid) intervals.
 */
export const MULTINOMIAL_ROWS_PER_BIN = 256;

/** Bootstrap intervals of the column means; null for a column with no row that has a value. */
export const bootstrapMeans = (
  columns: readonly ArrayLike<number>[],
  opts: BootstrapOptions = DEFAULT_BOOTSTRAP,
): (Interval | null)[] => {
  const R = columns[0]?.length ?? 0;
  // every row its own key
  const keyOf = new Int32Array(R);
  for (let i = 0; i < R; i++) keyOf[i] = i;
  return bootstrapMeansOfKeys(keyOf, columns, opts);
};

/**
 * `bootstrapMeans` of rows given by key: row i's values are key `keyOf[i]`'s (`values[j][key]` in column j), so rows
 * that share a key (the same (n, c) on both sides of a pair) are written once. The same intervals, to the bit, as
 * `bootstrapMeans` over the columns written out row by row (keyedStats.unit.test.ts), in one pass over the rows.
 */
export const bootstrapMeansOfKeys = (
  keyOf: ArrayLike<number>,
  keyValues: readonly ArrayLike<number>[],
  opts: BootstrapOptions = DEFAULT_BOOTSTRAP,
): (Interval | null)[] => {
  const R = keyOf.length;
  if (R === 0 || keyValues.length === 0) return keyValues.map(() => null);
  const { binOf, values } = binKeys(keyOf, keyValues, keyValues[0]?.length ?? 0);
  const bins = values[0]!.length;
  const rng = createRng(opts.seed);
  const drawn = new Int32Array(bins);
  const reps = values.map(() => new Float64Array(opts.reps));
  const filled = new Int32Array(values.length);
  // Few bins for many rows (a report of 100k rows has tens): each replicate's bin counts are drawn as one
  // multinomial, in work that grows with the bins; otherwise R draws of a row each.
  const byBin = bins * MULTINOMIAL_ROWS_PER_BIN <= R;
  const weights = new Float64Array(bins);
  if (byBin) for (let i = 0; i < R; i++) weights[binOf[i]!]!++;
  const draws = new Int32Array(byBin ? 0 : R);
  for (let b = 0; b < opts.reps; b++) {
    if (byBin) multinomial(rng, R, weights, drawn);
    else {
      drawn.fill(0);
      rng.ints(R, draws); // R calls of rng.int(R), in one loop
      for (let i = 0; i < R; i++) drawn[binOf[draws[i]!]!]!++;
    }
    for (let j = 0; j < values.length; j++) {
      const v = values[j]!;
      let sum = 0;
      let used = 0;
      for (let bin = 0; bin < v.length; bin++) {
        // NaN = this row is left out of this column.
        if (drawn[bin]! > 0 && !Number.isNaN(v[bin]!)) {
          sum += drawn[bin]! * v[bin]!;
          used += drawn[bin]!;
        }
      }
      // A replicate that drew no row with a value has no mean; it is skipped for this column.
      if (used > 0) reps[j]![filled[j]!++] = sum / used;
    }
  }
  return reps.map((r, j) => percentileInterval(r, filled[j]!, opts.confidence));
};
