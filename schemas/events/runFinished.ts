import { z } from 'zod';
import { envelope, Id } from '../envelope.ts';
import { Agent } from './trialRecorded.ts';

/**
 * A producer (the runner, an importer, an SDK user) says it has finished recording one run:
 * how many trials it recorded, so a reader can tell a complete run from one still arriving or cut short.
 */
export const RunFinished = z.object({
  ...envelope('RunFinished'),
  run_id: Id,
  suite: Id,
  dataset_id: Id.optional(),
  dataset_version: Id,
  agent: Agent,
  /** completed: every planned trial was recorded; partial: some were not (e.g. stopped early); aborted: gave up. */
  status: z.enum(['completed', 'partial', 'aborted']),
  /** Trials recorded by this run, graded and ungraded. */
  trials: z.number().int().nonnegative(),
  /** Of those, ungraded ones (passed: null). */
  ungraded: z.number().int().nonnegative().optional(),
  /** Rows the run covered, and attempts planned per row. */
  rows: z.number().int().nonnegative().optional(),
  k: z.number().int().positive().optional(),
  /** Epoch ms when the run started. */
  started_at: z.number().int().nonnegative().optional(),
  note: z.string().optional(),
  /**
   * The dataset file the run read (`passk run --dataset`), as it was given, and the agent it ran (`--agent`: a
   * module, a URL without credentials, or `cmd:…`), so the commands passk suggests for this version (confirmation
   * runs, more attempts) can be printed in full. Optional: importers and SDK users have neither, and events written
   * before they existed stay valid (a new optional field of the closed model is BACKWARD-compatible).
   */
  dataset_path: z.string().min(1).max(4096).optional(),
  agent_spec: z.string().min(1).max(4096).optional(),
});
export type RunFinished = z.infer<typeof RunFinished>;
