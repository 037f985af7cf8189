import { passCurvesAt } from './estimators.ts';

/**
 * Per-row values as columns for the bootstrap: pass@k and pass^k at k = 1..K, and the flip
 * indicator. NaN marks a row left out of a column (fewer than k attempts; unclassified for flips).
 */
export type RowColumns = { passAt: Float64Array[]; passHat: Float64Array[]; flip: Float64Array };

export const rowColumns = (rows: readonly { n: number; c: number }[], K: number, minAttempts: number): RowColumns => {
  const passAt = Array.from({ length: K }, () => new Float64Array(rows.length).fill(NaN));
  const passHat = Array.from({ length: K }, () => new Float64Array(rows.length).fill(NaN));
  const flip = new Float64Array(rows.length).fill(NaN);
  const curvesOf = passCurvesAt(K);
  rows.forEach(({ n, c }, r) => {
    const curves = curvesOf(n, c);
    curves.passAt.forEach((v, i) => (passAt[i]![r] = v));
    curves.passHat.forEach((v, i) => (passHat[i]![r] = v));
    if (n >= Math.max(1, minAttempts)) flip[r] = c > 0 && c < n ? 1 : 0;
  });
  return { passAt, passHat, flip };
};
