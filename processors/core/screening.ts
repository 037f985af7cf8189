import type { AttemptRecord, RowState } from './rowState.ts';

/**
 * Screening vs confirmation attempts (the seed's steps 2 and 7). Every row is first run the planned
 * number of times (screening); suspected regressions then get extra attempts (confirmation).
 * An attempt is a confirmation attempt when
 *   - its run is marked as one: the run_id starts with "confirm" (any case), or is listed by the
 *     caller (`passk compare --confirmation-run ID`); or
 *   - it comes after the first N non-confirmation attempts of its row, in attempt order
 *     (event time, run_id, attempt number). N is `--screen-attempts`, by default the most common
 *     number of non-confirmation attempts per row for that version (ties: the smaller), i.e. the plan.
 * An adaptive run's attempts (run_id starting with "adaptive-") are all screening attempts: its stopping rule,
 * not a plan, gave a row its number of attempts (docs/adaptive.md), so an attempt beyond N is not a confirmation
 * one; only a confirmation run confirms its rows (the first N above are counted among the other attempts).
 */
export type ConfirmationPolicy = {
  /** The planned attempts per row; default: the most common count per row (see above). */
  screenAttempts?: number;
  /** Run ids marked as confirmation runs, besides those starting with "confirm". */
  confirmationRuns?: readonly string[];
};

export const isConfirmationRun = (policy: ConfirmationPolicy) => {
  const listed = new Set(policy.confirmationRuns ?? []);
  return (runId: string): boolean => runId.toLowerCase().startsWith('confirm') || listed.has(runId);
};

/** An adaptive run's attempts (`passk run --adaptive`, run id `adaptive-…`): screening whatever their number. */
export const isAdaptiveRunId = (runId: string): boolean => runId.toLowerCase().startsWith('adaptive-');

/** The most common number of non-confirmation attempts per row; ties go to the smaller count. */
export const plannedAttempts = (rows: Iterable<RowState>, policy: ConfirmationPolicy): number => {
  const marked = isConfirmationRun(policy);
  const counts: number[] = [];
  for (const r of rows) counts.push(r.attempts.filter((a) => !marked(a.run_id)).length);
  return mostCommon(counts);
};

/** The most common of the per-row counts; ties go to the smaller count (0 when there is none). */
export const mostCommon = (counts: Iterable<number>): number => {
  const freq = new Map<number, number>();
  for (const n of counts) freq.set(n, (freq.get(n) ?? 0) + 1);
  let best = 0;
  let bestCount = 0;
  for (const [n, count] of [...freq].sort((a, b) => a[0] - b[0]))
    if (count > bestCount) {
      best = n;
      bestCount = count;
    }
  return best;
};

export type SplitAttempts = { screening: AttemptRecord[]; confirmation: AttemptRecord[] };

/** Splits a row's attempts (already in canonical order) into screening and confirmation attempts. */
export const splitAttempts = (state: RowState, screenAttempts: number, policy: ConfirmationPolicy): SplitAttempts => {
  const marked = isConfirmationRun(policy);
  const screening: AttemptRecord[] = [];
  const confirmation: AttemptRecord[] = [];
  let planned = 0;
  for (const a of state.attempts) {
    if (marked(a.run_id)) confirmation.push(a);
    else if (isAdaptiveRunId(a.run_id)) screening.push(a);
    else if (planned++ < screenAttempts) screening.push(a);
    else confirmation.push(a);
  }
  return { screening, confirmation };
};
