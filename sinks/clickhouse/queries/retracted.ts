/**
 * A condition on `trials` (its own columns, unqualified): the trial is not of a run retracted on its row
 * (`retractions`, RunRetracted). Every view of the stored trials adds it, so a retracted run leaves the
 * store's numbers exactly as it leaves the processors' row state (processors/folds/rowState.ts, `retractRow`).
 */
export const NOT_RETRACTED =
  '(suite, dataset_version, agent_version, row_id, run_id) NOT IN ' +
  '(SELECT suite, dataset_version, agent_version, row_id, run_id FROM retractions FINAL)';

/** A condition on `row_state`: the row holds an attempt (one whose every attempt was retracted is no row). */
export const HAS_ATTEMPTS = '(n + ungraded) > 0';
