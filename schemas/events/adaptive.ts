import { z } from 'zod';
import { envelope, Id } from '../envelope.ts';
import { StabilityClass } from './decisions.ts';

/** Why a row of an adaptive run gets another attempt (docs/adaptive.md). */
export const ContinueReason = z.enum(['first_stage', 'must_not_break_uncertain', 'class_uncertain']);
/** Why a row of an adaptive run stops. */
export const StopReason = z.enum([
  'flip_seen',
  'classified',
  'must_not_break_held',
  'must_not_break_failed',
  'max_k',
  'budget',
  'gate_decided',
]);
export type ContinueReason = z.infer<typeof ContinueReason>;
export type StopReason = z.infer<typeof StopReason>;

const counts = { row_id: Id, n: z.number().int().nonnegative(), c: z.number().int().nonnegative() };
export const RowDecision = z.discriminatedUnion('decision', [
  z.object({
    ...counts,
    decision: z.literal('continue'),
    reason: ContinueReason,
    attempts: z.number().int().nonnegative(),
  }),
  z.object({
    ...counts,
    decision: z.literal('stop'),
    reason: StopReason,
    attempts: z.number().int().nonnegative(),
    class: StabilityClass,
  }),
]);
export type RowDecision = z.infer<typeof RowDecision>;

/**
 * One round of an adaptive run (`passk run --adaptive`): the attempts it grants per row and, for every
 * row still open, the decision to go on or to stop, with the counts it was taken on. The rounds of a run,
 * in order, replay its allocation exactly (processors/core/adaptive.ts `planRound`).
 */
export const AdaptiveRoundDecided = z.object({
  ...envelope('AdaptiveRoundDecided'),
  run_id: Id,
  suite: Id,
  dataset_id: Id.optional(),
  dataset_version: Id,
  agent_version: Id,
  round: z.number().int().nonnegative(),
  /** Attempts made in the run before this round. */
  spent: z.number().int().nonnegative(),
  budget: z.number().int().nonnegative().nullable(),
  first_k: z.number().int().positive(),
  max_k: z.number().int().positive(),
  min_attempts: z.number().int().positive(),
  grants: z.array(z.object({ row_id: Id, attempts: z.number().int().positive() })),
  decisions: z.array(RowDecision),
  /** Nothing granted: the run's allocation is over. */
  done: z.boolean(),
});
export type AdaptiveRoundDecided = z.infer<typeof AdaptiveRoundDecided>;
