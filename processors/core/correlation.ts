/** Correlations for judge calibration. Each returns null when it is undefined (fewer than two points, or no variance). */

export const pearson = (xs: readonly number[], ys: readonly number[]): number | null => {
  const n = xs.length;
  if (n < 2 || ys.length !== n) return null;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0,
    sxx = 0,
    syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i]! - mx;
    const dy = ys[i]! - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
};

/** Ranks starting at 1, ties get the average of the ranks they span. */
export const ranks = (xs: readonly number[]): number[] => {
  const order = xs.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<number>(xs.length);
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && order[j + 1]![0] === order[i]![0]) j++;
    for (let t = i; t <= j; t++) out[order[t]![1]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return out;
};

/** Spearman's ρ: Pearson correlation of the (tie-averaged) ranks. */
export const spearman = (xs: readonly number[], ys: readonly number[]): number | null => pearson(ranks(xs), ranks(ys));

/**
 * Pooled within-group Pearson correlation: each group is centred on its own means before pooling,
 * so differences between groups (e.g. good answers being both longer and better) do not count.
 */
export const withinGroupCorrelation = (
  groups: readonly { xs: readonly number[]; ys: readonly number[] }[],
): number | null => {
  let sxy = 0,
    sxx = 0,
    syy = 0;
  for (const { xs, ys } of groups) {
    if (xs.length < 2) continue;
    const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
    const my = ys.reduce((a, b) => a + b, 0) / ys.length;
    xs.forEach((x, i) => {
      sxy += (x - mx) * (ys[i]! - my);
      sxx += (x - mx) ** 2;
      syy += (ys[i]! - my) ** 2;
    });
  }
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
};
