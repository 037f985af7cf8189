import { z } from 'zod';
import { envelope, Id } from '../envelope.ts';

/** Which comparison an event belongs to: the gated pair of agent versions on one dataset version. */
const comparisonScope = {
  comparison_id: Id,
  suite: Id,
  dataset_id: Id.optional(),
  dataset_version: Id,
  baseline: Id,
  candidate: Id,
};

/**
 * A baseline/candidate pair to gate live: the processors re-evaluate it as the candidate's trials
 * arrive, and emit one GateEvaluated when the candidate's run is complete (after confirmation runs
 * for suspected regressions, when any are needed).
 */
export const ComparisonDeclared = z.object({
  ...envelope('ComparisonDeclared'),
  ...comparisonScope,
  /** Row ids that must not break, besides rows tagged `must_not_break` in the dataset or on trials. */
  must_not_break: z.array(Id).optional(),
  /**
   * Rows of the dataset version, when no DatasetRowUpserted describes it: without one of the two (or
   * a RunClosed of each version), a gate cannot tell a complete run from one still arriving.
   */
  rows: z.number().int().positive().optional(),
  /** Graded attempts every row needs before the candidate counts as complete. @default 3 */
  required_attempts: z.number().int().positive().optional(),
  /** Extra attempts per version asked for each suspected regression; 0 = decide without confirmation. @default 3 */
  confirmation_attempts: z.number().int().nonnegative().optional(),
  /**
   * More attempts per version on each suspected regression that is a must-not-break row, on top of
   * `confirmation_attempts` ("spend more attempts on the rows you tagged"). @default 0
   */
  must_not_break_extra_attempts: z.number().int().nonnegative().optional(),
  /** Optional configured gate rules. */
  rules: z
    .object({ zero_forbidden_actions: z.boolean().optional(), max_pass_at_1_drop: z.number().nonnegative().optional() })
    .optional(),
});
export type ComparisonDeclared = z.infer<typeof ComparisonDeclared>;

/** Confirmation runs the trial runner should make: both versions, again, on the suspected regressions. */
export const ConfirmationRequested = z.object({
  ...envelope('ConfirmationRequested'),
  ...comparisonScope,
  rows: z.array(Id).min(1),
  /** Attempts per row and version. */
  attempts: z.number().int().positive(),
  /** Run id to record them under; it starts with `confirm`, which marks confirmation attempts. */
  run_id: Id,
  reason: z.string(),
  /** The must-not-break rows among `rows`, and the attempts each of them needs instead of `attempts` (more). */
  must_not_break: z.object({ rows: z.array(Id).min(1), attempts: z.number().int().positive() }).optional(),
});
export type ConfirmationRequested = z.infer<typeof ConfirmationRequested>;

/** The graded attempts per version a confirmation request asks of one of its rows. */
export const requestedAttempts = (r: ConfirmationRequested, rowId: string): number =>
  r.must_not_break?.rows.includes(rowId) ? r.must_not_break.attempts : r.attempts;

/**
 * The processors saw a run's RunFinished on passk.trials, and pass it on where the gates are kept
 * (passk.decisions, keyed like the candidate's comparisons), so "the run is declared finished" can
 * complete a gate.
 */
export const RunClosed = z.object({
  ...envelope('RunClosed'),
  run_id: Id,
  suite: Id,
  dataset_version: Id,
  agent_version: Id,
  status: z.enum(['completed', 'partial', 'aborted']),
  trials: z.number().int().nonnegative(),
  /** The RunFinished it comes from. */
  source_event_id: z.string(),
});
export type RunClosed = z.infer<typeof RunClosed>;
