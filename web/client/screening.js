// @ts-check
/** What the line adds to a first stage the run's rounds did not give. */
const ASSUMED = ", assumed: the runner's default --first-k, as the run's rounds could not be read from the event log";

/**
 * The Compare view's line under its heading: rows paired, and what each side's numbers come from. A version with an
 * adaptive run (`passk run --adaptive`) has no plan of attempts per row (its stopping rule gave each row its own):
 * its headline numbers and the paired Δ come from each row's first K graded attempts, K its run's `--first-k` as its
 * rounds on the event log record it (`first_stage`, the same as `passk compare --from-store` says). When those rounds
 * were not found (the event log could not be read, or lacks them: `first_stage_assumed`), the first stage is the
 * runner's default `--first-k`, and the line says it is assumed.
 * @param {{ rows: { paired: number }, screen_attempts: { baseline: number, candidate: number },
 *   first_stage?: { baseline: number | null, candidate: number | null }, first_stage_assumed?: boolean }} cmp
 * @returns {string}
 */
export const screeningLine = (cmp) => {
  const paired = `${cmp.rows.paired} rows paired`;
  const b = cmp.first_stage?.baseline ?? null;
  const c = cmp.first_stage?.candidate ?? null;
  if (b === null && c === null)
    return `${paired} · screening ${cmp.screen_attempts.baseline} / ${cmp.screen_attempts.candidate} attempts per row`;
  const stage = /** @type {number} */ (b ?? c);
  const sides = b !== null && c !== null ? 'both versions are' : b !== null ? 'the baseline is' : 'the candidate is';
  const fixed =
    b === null
      ? ` · the baseline's screening uses ${cmp.screen_attempts.baseline} attempts per row`
      : c === null
        ? ` · the candidate's screening uses ${cmp.screen_attempts.candidate} attempts per row`
        : '';
  return (
    `${paired} · ${sides} adaptive: headline numbers and paired Δ from each row's first ${stage} graded ` +
    `attempt${stage === 1 ? '' : 's'} (the first stage${cmp.first_stage_assumed ? ASSUMED : ''}), classes from all ` +
    `its attempts${fixed}`
  );
};
