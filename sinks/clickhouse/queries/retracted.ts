import { z } from 'zod';
import { select, type Querier } from './select.ts';

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

const Retraction = z.object({
  suite: z.string(),
  agent_version: z.string(),
  run_id: z.string(),
  retracted_by: z.string(),
  reason: z.string(),
  at: z.number(),
  rows: z.number(),
  trials: z.number(),
});
export type StoredRetraction = z.infer<typeof Retraction>;

/** The retracted runs the store holds, one entry per (suite, agent version, run), oldest first. */
export const retractedRuns = (
  client: Querier,
  filter: { suites?: readonly string[] } = {},
): Promise<StoredRetraction[]> =>
  select(
    client,
    Retraction,
    `SELECT suite, agent_version, run_id, any(retracted_by) AS retracted_by, any(reason) AS reason,
            toUnixTimestamp64Milli(min(occurred_at)) AS at, count() AS rows, toUInt64(sum(trials)) AS trials
     FROM retractions FINAL
     WHERE empty({suites:Array(String)}) OR has({suites:Array(String)}, suite)
     GROUP BY suite, agent_version, run_id
     ORDER BY at, suite, agent_version, run_id`,
    { suites: filter.suites ?? [] },
  );
