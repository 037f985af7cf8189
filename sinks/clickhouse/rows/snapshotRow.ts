import type { VersionSnapshot } from '../../../processors/ports.ts';

type Row = Record<string, unknown>;

/**
 * A version snapshot of the trial topology as a row of `version_summaries`. The histogram keeps the
 * processors' `"n,c"` keys, so the store sums the maps (`sumMap`) and the reader splits them back into
 * bins for the core's estimator; `ungraded_histogram` likewise (`"n,c,u"`, rows with ungraded attempts).
 */
export const snapshotRow = ({ partition, nextOffset, summary: s }: VersionSnapshot): Row => ({
  suite: s.suite,
  dataset_version: s.dataset_version,
  agent_version: s.agent_version,
  partition,
  next_offset: nextOffset,
  rows: s.rows,
  trials: s.trials,
  passes: s.passes,
  ungraded: s.ungraded,
  classes: s.classes,
  histogram: s.histogram,
  ungraded_histogram: s.ungraded_histogram,
});
