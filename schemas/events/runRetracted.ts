import { z } from 'zod';
import { envelope, Id } from '../envelope.ts';

/**
 * A person takes a run back: its trials stop counting everywhere (row state, pass@k, the store's
 * views, gates), so a mistaken run (a typo in the agent command, the wrong model) never becomes a
 * version. Events are immutable, so the run's TrialRecorded events stay in the log; this one says
 * they no longer count.
 *
 * One event per row the run recorded trials on, keyed like that row's trials (suite + row id): it
 * follows them on their partition, so the fold takes the run's attempts out of the row at the same
 * point on every replay, and a processor that owns the row sees it whatever the number of instances.
 * The events of one `passk retract` share `retraction_id`, `reason`, `retracted_by` and `occurred_at`.
 * A trial of the run that arrives on the row after its retraction is not counted either.
 */
export const RunRetracted = z.object({
  ...envelope('RunRetracted'),
  /** Shared by the events of one retraction (one per row of the run). */
  retraction_id: Id,
  run_id: Id,
  suite: Id,
  dataset_version: Id,
  agent_version: Id,
  row_id: Id,
  /** Why, in words: shown wherever the retraction is. */
  reason: z.string().min(1).max(2000),
  /** Who retracted it (the CLI's --by, else the OS user). */
  retracted_by: z.string().min(1).max(512),
  /** The run's trials on this row that the retraction saw (in the store when it was made). */
  trials: z.number().int().nonnegative(),
});
export type RunRetracted = z.infer<typeof RunRetracted>;
