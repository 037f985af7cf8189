import { z } from 'zod';
import { envelope, Id, Tags } from '../envelope.ts';

export const FAILURE_CATEGORIES = [
  'wrong_tool',
  'bad_arguments',
  'retrieval_miss',
  'policy_violation',
  'unsupported_claim',
  /** Not the agent's fault, and not graded. */
  'test_environment',
] as const;
export const FailureCategory = z.enum(FAILURE_CATEGORIES);

export const Agent = z.object({
  id: Id.optional(),
  version: Id,
  model: z.string().optional(),
  prompt_hash: z.string().optional(),
  tools_hash: z.string().optional(),
  config_hash: z.string().optional(),
});

export const Grader = z.object({
  kind: z.enum(['exact', 'regex', 'json_schema', 'function', 'llm_judge', 'human', 'external']),
  id: z.string().optional(),
  version: z.string().optional(),
});

/** One intermediate decision on the way to the verdict, in the order the agent made it. */
export const Check = z.object({
  name: z.string().min(1),
  answer: z.union([z.string(), z.number(), z.boolean(), z.null()]),
  passed: z.boolean().nullable().optional(),
});
export type Check = z.infer<typeof Check>;

export const Action = z.object({
  tool: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
});

/** One attempt of one agent version on one dataset row. */
export const TrialRecorded = z.object({
  ...envelope('TrialRecorded'),
  suite: Id,
  dataset_id: Id.optional(),
  dataset_version: Id,
  row_id: Id,
  run_id: Id,
  attempt: z.number().int().nonnegative(),
  agent: Agent,
  input: z.string().optional(),
  output: z.string().nullable().optional(),
  expected: z.string().nullable().optional(),
  /** null = ungradable (an infrastructure error): left out of n, counted separately. */
  passed: z.boolean().nullable(),
  score: z.number().nullable().optional(),
  grader: Grader.optional(),
  checks: z.array(Check).optional(),
  actions: z.array(Action).optional(),
  retrieved_refs: z.array(z.string()).optional(),
  forbidden_actions: z.array(z.string()).optional(),
  error_kind: z.string().nullable().optional(),
  failure_category: FailureCategory.nullable().optional(),
  /**
   * What went wrong, in words, for a failed or ungraded trial: for a command agent, the first lines of its stderr
   * (redacted). Never graded on.
   */
  error_message: z.string().optional(),
  cost_usd: z.number().nonnegative().optional(),
  tokens: z.object({ input: z.number().int().nonnegative(), output: z.number().int().nonnegative() }).optional(),
  latency_ms: z.number().nonnegative().optional(),
  /** Row tags as seen when the trial ran, e.g. `must_not_break`. */
  tags: Tags.optional(),
});
export type TrialRecorded = z.infer<typeof TrialRecorded>;

/**
 * The fields of a trial that make its answer, in the order a conflict names them: two answers of one attempt slot
 * that differ in one of these are a conflict, whoever sees them (the processors' fold, `differingField` in
 * processors/folds/rowState.ts, and the producers' slot memory, producers/trialSlots.ts).
 */
export const ANSWER_FIELDS = ['passed', 'output', 'checks', 'forbidden_actions'] as const;
