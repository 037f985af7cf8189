import { maxOf } from './arrays.ts';

/**
 * Exact McNemar test on paired binary outcomes (here: stable-correct on baseline vs candidate).
 * Only discordant rows carry information: b = lost (yes → no), c = gained (no → yes).
 * Under H0 b ~ Binomial(b + c, 1/2); the two-sided p-value doubles the smaller tail, capped at 1.
 * Computed in log space, so it stays finite for any number of discordant rows.
 */
export type McNemar = { lost: number; gained: number; discordant: number; p_value: number };

const logSumExp = (xs: readonly number[]): number => {
  const m = maxOf(xs);
  return m === -Infinity ? m : m + Math.log(xs.reduce((s, x) => s + Math.exp(x - m), 0));
};

/** P(X <= x) for X ~ Binomial(m, 1/2). */
export const binomialHalfCdf = (x: number, m: number): number => {
  const terms: number[] = [];
  let logC = 0;
  for (let i = 0; i <= x; i++) {
    terms.push(logC - m * Math.LN2);
    logC += Math.log(m - i) - Math.log(i + 1);
  }
  return Math.min(1, Math.exp(logSumExp(terms)));
};

export const mcnemarExact = (lost: number, gained: number): McNemar => {
  const m = lost + gained;
  const p = m === 0 ? 1 : Math.min(1, 2 * binomialHalfCdf(Math.min(lost, gained), m));
  return { lost, gained, discordant: m, p_value: p };
};
