import { ConfirmationOutcome } from '../../schemas/events/decisions.ts';
import { firstDivergentCheck, type Divergence } from './checks.ts';
import type { StabilityClass } from './classify.ts';
import type { CountedPair, CountedSide } from './pairing.ts';
import type { RowSummary } from './rowSummary.ts';

/**
 * Confirmation of a suspected regression (a row stable-correct on the baseline's screening and not
 * on the candidate's), after both versions were run again on it (the seed's step 7):
 *   - baseline_also_varies: the baseline failed too once all its attempts count, so the row was never
 *     reliably right: not a regression of the candidate;
 *   - confirmed_regression: the baseline kept passing on its confirmation attempts, and the candidate
 *     failed again on its own;
 *   - cleared: the candidate passed every attempt once confirmation counts (its screening fell short
 *     only for lack of attempts);
 *   - unresolved: either side has no confirmation attempt, or the candidate's failure did not recur.
 */
export const CONFIRMATION_OUTCOMES = ConfirmationOutcome.options;
export type ConfirmationOutcome = (typeof CONFIRMATION_OUTCOMES)[number];

export const confirmationOutcome = (pair: CountedPair): ConfirmationOutcome => {
  if (pair.baseline.all.class !== 'stable_correct') return 'baseline_also_varies';
  if (pair.candidate.all.class === 'stable_correct') return 'cleared';
  const { baseline, candidate } = pair;
  const reproduced = candidate.confirmation.n > candidate.confirmation.c;
  return baseline.confirmation.n > 0 && candidate.confirmation.n > 0 && reproduced
    ? 'confirmed_regression'
    : 'unresolved';
};

type SideEvidence = {
  n: number;
  c: number;
  class: StabilityClass;
  confirmation_attempts: number;
  confirmation_passes: number;
};

export type SuspectedRegression = {
  row_id: string;
  screening: { baseline: StabilityClass; candidate: StabilityClass };
  baseline: SideEvidence;
  candidate: SideEvidence;
  outcome: ConfirmationOutcome;
  /** For a confirmed regression: the first intermediate check whose answers differ between versions. */
  first_divergence: Divergence | null;
};

const evidence = (s: CountedSide): SideEvidence => ({
  n: s.all.n,
  c: s.all.c,
  class: s.all.class,
  confirmation_attempts: s.confirmation.n,
  confirmation_passes: s.confirmation.c,
});

const answered = (row_id: string, s: CountedSide): Pick<RowSummary, 'checks'> => {
  if (s.all.checks === undefined)
    throw new Error(`row ${row_id} is a confirmed regression counted without its check answers`);
  return { checks: s.all.checks };
};

export const confirmSuspect = (pair: CountedPair): SuspectedRegression => {
  const outcome = confirmationOutcome(pair);
  return {
    row_id: pair.row_id,
    screening: { baseline: pair.baseline.screening.class, candidate: pair.candidate.screening.class },
    baseline: evidence(pair.baseline),
    candidate: evidence(pair.candidate),
    outcome,
    first_divergence:
      outcome === 'confirmed_regression'
        ? firstDivergentCheck(answered(pair.row_id, pair.baseline), answered(pair.row_id, pair.candidate))
        : null,
  };
};
