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
  const least = Math.max(1, minAttempts);
  for (let r = 0; r < rows.length; r++) {
    const { n, c } = rows[r]!;
    const curves = curvesOf(n, c);
    for (let i = 0; i < curves.passAt.length; i++) passAt[i]![r] = curves.passAt[i]!;
    for (let i = 0; i < curves.passHat.length; i++) passHat[i]![r] = curves.passHat[i]!;
    if (n >= least) flip[r] = c > 0 && c < n ? 1 : 0;
  }
  return { passAt, passHat, flip };
};
