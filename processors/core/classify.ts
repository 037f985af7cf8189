import type { StabilityClass } from '../../schemas/events/decisions.ts';

export type { StabilityClass };
export const STABILITY_CLASSES = [
  'stable_correct',
  'stable_wrong',
  'flip',
  'unclassified',
] as const satisfies readonly StabilityClass[];

/** Passk's default: three graded attempts before a row gets a stability class (the seed's step 2). */
export const DEFAULT_MIN_ATTEMPTS = 3;

/**
 * The stability class of a row from its graded attempts: n verdicts, c of them passes.
 * These describe the runs observed, not a guarantee about the next one.
 */
export const classOf = (n: number, c: number, minAttempts: number = DEFAULT_MIN_ATTEMPTS): StabilityClass => {
  if (n < Math.max(1, minAttempts)) return 'unclassified';
  if (c === n) return 'stable_correct';
  if (c === 0) return 'stable_wrong';
  return 'flip';
};

/**
 * `classOf`, or with `mixedIsFlip` the rule of an adaptive run (docs/adaptive.md): a row with both a pass and a fail
 * is a flip whatever its number of attempts (the run stopped it there: nothing later makes it stable).
 */
export const classWith = (n: number, c: number, minAttempts: number, mixedIsFlip = false): StabilityClass =>
  mixedIsFlip && c > 0 && c < n ? 'flip' : classOf(n, c, minAttempts);

export type ClassCounts = Record<StabilityClass, number>;

export const emptyClassCounts = (): ClassCounts => ({ stable_correct: 0, stable_wrong: 0, flip: 0, unclassified: 0 });
