import { classWith, DEFAULT_MIN_ATTEMPTS, emptyClassCounts, type ClassCounts } from './classify.ts';
import { passCurves } from './estimators.ts';
import { maxOf, minOf } from './arrays.ts';

/**
 * Point estimates from a per-row (n, c) histogram: `count` rows had n counted attempts and c passes.
 * The offline report builds the histogram from row states; a ClickHouse query can build it with one
 * GROUP BY n, c and feed it here, so every surface computes the numbers the same way.
 */
export type HistogramBin = {
  n: number;
  c: number;
  count: number;
  /**
   * The fewest attempts recorded (graded or not) of the bin's rows, where known: the attempts the source gave a
   * row (Inspect's `epochs`, τ-bench's `num_trials`, a run's `--k`) when some went unscored. Sets the default K.
   */
  recorded?: number;
};

/** Values keyed by k as a string ("1", "2", …), as they appear in JSON. */
export type ByK<T> = Record<string, T>;

export type HistogramSummary = {
  /** Rows with at least one counted attempt: the rows every average is over. */
  rows: number;
  /** Rows with no counted attempt at all: left out of every average, and counted here. */
  rows_without_graded: number;
  trials: number;
  passes: number;
  /** Σc / Σn: the share of all counted trials that passed. */
  mean_accuracy: number | null;
  /**
   * The largest k reported. By default the attempts every row was given (`defaultK`): what the source declares
   * (`declared_k`), else the fewest recorded of any row, graded or not, so one unscored or missing epoch does not
   * shorten every row's curve; `rows_at_k` says how many rows each k is averaged over.
   */
  k_max: number;
  /** The attempts per row the source declared (`HistogramOptions.declared`), or null when it declared none. */
  declared_k: number | null;
  pass_at_k: ByK<number | null>;
  pass_hat_k: ByK<number | null>;
  /** Rows used at each k (rows with n ≥ k). */
  rows_at_k: ByK<number>;
  /** Rows with at least min-attempts counted attempts (stable_correct + stable_wrong + flip). */
  classified: number;
  /** classes.flip / classified: the share of classified rows whose verdicts disagree. */
  flip_rate: number | null;
  classes: ClassCounts;
};

export type HistogramOptions = {
  k?: number;
  minAttempts?: number;
  /** `classWith` */ mixedIsFlip?: boolean;
  /**
   * The attempts per row the source declared (`declaredK`: a run's `--k`, Inspect's `epochs`, τ²-bench's
   * `num_trials`): the default K is at least this, so an attempt missing from the file does not lower it.
   */
  declared?: number;
};

/**
 * The default K: the attempts every row with a graded attempt was given. That is what the source declared
 * (`declared`) when it declared it, else the fewest recorded of any row (graded or not; a bin without `recorded`
 * counts its n): the larger of the two, so a row with more recorded than declared (two runs) still counts them. It
 * is no more than the most graded attempts of any row (a k no row has graded has no value); 0 when no row has a
 * graded attempt. Inspect's rule: an `epochs: 3` log with one unscored or missing epoch reports pass^3 over the
 * samples that have 3 scored epochs.
 */
export const defaultK = (bins: readonly HistogramBin[], declared?: number): number => {
  const graded = bins.filter((b) => b.n > 0 && b.count > 0);
  if (graded.length === 0) return 0;
  const given = minOf(graded.map((b) => Math.max(b.n, b.recorded ?? b.n)));
  return Math.min(Math.max(given, declared ?? 0), maxOf(graded.map((b) => b.n)));
};

export const summarizeHistogram = (bins: readonly HistogramBin[], opts: HistogramOptions = {}): HistogramSummary => {
  const K = opts.k ?? defaultK(bins, opts.declared);
  const at = new Array<number>(K).fill(0);
  const hat = new Array<number>(K).fill(0);
  const used = new Array<number>(K).fill(0);
  const classes = emptyClassCounts();
  let rows = 0,
    without = 0,
    trials = 0,
    passes = 0;
  for (const { n, c, count } of bins) {
    if (count <= 0) continue;
    classes[classWith(n, c, opts.minAttempts ?? DEFAULT_MIN_ATTEMPTS, opts.mixedIsFlip)] += count;
    if (n === 0) {
      without += count;
      continue;
    }
    rows += count;
    trials += n * count;
    passes += c * count;
    const { passAt, passHat } = passCurves(n, c, K);
    passAt.forEach((v, i) => {
      at[i]! += v * count;
      hat[i]! += passHat[i]! * count;
      used[i]! += count;
    });
  }
  const classified = classes.stable_correct + classes.stable_wrong + classes.flip;
  const byK = <T>(f: (i: number) => T): ByK<T> =>
    Object.fromEntries(Array.from({ length: K }, (_, i) => [String(i + 1), f(i)]));
  const mean = (sums: number[]) => (i: number) => (used[i]! > 0 ? sums[i]! / used[i]! : null);
  return {
    rows,
    rows_without_graded: without,
    trials,
    passes,
    mean_accuracy: trials > 0 ? passes / trials : null,
    k_max: K,
    declared_k: opts.declared ?? null,
    pass_at_k: byK(mean(at)),
    pass_hat_k: byK(mean(hat)),
    rows_at_k: byK((i) => used[i]!),
    classified,
    flip_rate: classified > 0 ? classes.flip / classified : null,
    classes,
  };
};

/**
 * A snapshot's histogram as the core's bins, in (n, c) order: `histogram` is `"n,c"` → rows, `ungraded` is
 * `"n,c,u"` → the rows of bin (n, c) that also have u ≥ 1 ungraded attempts. A bin whose rows all have some gets
 * `recorded`, the fewest n + u of them; a bin with a row that has none recorded n (so `recorded` is left out), as
 * does every bin of a snapshot written before the processors kept `ungraded`.
 */
export const binsWithRecorded = (
  histogram: Readonly<Record<string, number>>,
  ungraded: Readonly<Record<string, number>> = {},
): HistogramBin[] => {
  const withUngraded = new Map<string, { rows: number; fewest: number }>();
  for (const [key, rows] of Object.entries(ungraded)) {
    if (rows <= 0) continue;
    const [n, c, u] = key.split(',').map(Number) as [number, number, number];
    const bin = `${n},${c}`;
    const have = withUngraded.get(bin);
    if (have) {
      have.rows += rows;
      have.fewest = Math.min(have.fewest, n + u);
    } else withUngraded.set(bin, { rows, fewest: n + u });
  }
  return Object.entries(histogram)
    .filter(([, count]) => count > 0)
    .map(([bin, count]): HistogramBin => {
      const [n, c] = bin.split(',').map(Number) as [number, number];
      const u = withUngraded.get(bin);
      return u !== undefined && u.rows >= count && u.fewest > n ? { n, c, count, recorded: u.fewest } : { n, c, count };
    })
    .sort((a, b) => a.n - b.n || a.c - b.c);
};

/**
 * Adds rows one at a time to an (n, c) histogram (`histogramOf`'s bins, without a record per row): `add` a row, then
 * `bins()` in (n, c) order.
 */
export const histogramBuilder = (): {
  add: (n: number, c: number, recorded?: number) => void;
  bins: () => HistogramBin[];
} => {
  // bins by n, then c (numbers, not a string key per row: 200k rows at 1M trials)
  const byN = new Map<number, Map<number, HistogramBin>>();
  const all: HistogramBin[] = [];
  return {
    add: (n, c, recorded) => {
      let byC = byN.get(n);
      if (!byC) byN.set(n, (byC = new Map()));
      const bin = byC.get(c);
      if (bin) {
        bin.count++;
        if (recorded !== undefined) bin.recorded = Math.min(bin.recorded ?? recorded, recorded);
      } else {
        const created: HistogramBin = { n, c, count: 1, ...(recorded === undefined ? {} : { recorded }) };
        byC.set(c, created);
        all.push(created);
      }
    },
    bins: () => all.sort((a, b) => a.n - b.n || a.c - b.c),
  };
};

/** The (n, c) histogram of a set of rows; with `recorded` per row, each bin keeps the fewest of its rows. */
export const histogramOf = (rows: readonly { n: number; c: number; recorded?: number }[]): HistogramBin[] => {
  const h = histogramBuilder();
  for (const { n, c, recorded } of rows) h.add(n, c, recorded);
  return h.bins();
};
