import { z } from 'zod';
import type { FlatTrial } from '../../schemas/trialFile.ts';

/**
 * The public-trials format (examples/public-trials/ in the repository): one trial per line,
 * `{"source", "model", "domain", "task_id", "trial", "reward", "passed"}`.
 * Mapping: suite ← domain, agent_version ← model, row_id ← task_id, attempt ← trial,
 * dataset_version and run_id ← source (or "public"), score ← reward.
 * `reward: null` is an ungraded trial (an infrastructure error), whatever `passed` says; otherwise
 * `passed` is used, or, when absent, reward within 1e-6 of 1.0 (the benchmarks' own rule).
 */
export const PublicTrial = z.object({
  source: z.string().min(1).optional(),
  model: z.string().min(1),
  domain: z.string().min(1),
  task_id: z.union([z.string().min(1), z.number()]).transform(String),
  trial: z.number().int().nonnegative(),
  reward: z.number().nullable(),
  passed: z.boolean().optional(),
});
export type PublicTrial = z.output<typeof PublicTrial>;

/** A line is read as a public-trials record when it has `task_id` and no `suite`. */
export const looksPublic = (value: object): boolean => 'task_id' in value && !('suite' in value);

export const publicToFlat = (p: PublicTrial): FlatTrial => ({
  suite: p.domain,
  dataset_version: p.source ?? 'public',
  row_id: p.task_id,
  agent_version: p.model,
  model: p.model,
  run_id: p.source ?? 'public',
  attempt: p.trial,
  passed: p.reward === null ? null : (p.passed ?? Math.abs(p.reward - 1) < 1e-6),
  score: p.reward,
});
