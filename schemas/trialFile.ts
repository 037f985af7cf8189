import { z } from 'zod';
import { TrialRecorded } from './events/trialRecorded.ts';

/**
 * The generic flat trial format for files: one JSON object per line.
 * Required: suite, dataset_version, row_id, agent_version, run_id, attempt, passed (true, false or null).
 * Optional: every optional field of TrialRecorded (output, expected, checks, tags, cost_usd, …),
 * plus `event_id` and `occurred_at` when the file already has them.
 */
const optionalTrialFields = TrialRecorded.omit({
  event_id: true,
  type: true,
  schema_version: true,
  occurred_at: true,
  producer: true,
  suite: true,
  dataset_version: true,
  row_id: true,
  run_id: true,
  attempt: true,
  agent: true,
  passed: true,
}).partial();

export const FlatTrial = z.object({
  ...optionalTrialFields.shape,
  suite: z.string().min(1),
  dataset_version: z.string().min(1),
  row_id: z.union([z.string().min(1), z.number()]).transform(String),
  agent_version: z.string().min(1),
  run_id: z.union([z.string().min(1), z.number()]).transform(String),
  attempt: z.number().int().nonnegative(),
  passed: z.boolean().nullable(),
  model: z.string().optional(),
  event_id: z.string().optional(),
  occurred_at: z.number().int().nonnegative().optional(),
});
export type FlatTrial = z.infer<typeof FlatTrial>;
