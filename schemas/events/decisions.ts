import { z } from 'zod';
import { envelope, Id } from '../envelope.ts';

export const StabilityClass = z.enum(['stable_correct', 'stable_wrong', 'flip', 'unclassified']);
export type StabilityClass = z.infer<typeof StabilityClass>;

export const GateRuleResult = z.object({
  rule: z.string().min(1),
  passed: z.boolean(),
  detail: z.string(),
  rows: z.array(z.string()).optional(),
  /** The suite and dataset version the rule judged (absent on a rule over every suite). Schema version 2. */
  suite: Id.optional(),
  dataset_version: Id.optional(),
});

/** What confirmation found for a suspected regression (processors/core/confirm.ts). */
export const ConfirmationOutcome = z.enum(['baseline_also_varies', 'confirmed_regression', 'cleared', 'unresolved']);

const SideClass = z.object({
  n: z.number().int().nonnegative(),
  c: z.number().int().nonnegative(),
  class: StabilityClass,
});

/** One must-not-break row's result in a gate verdict: both versions' classes over all attempts, and its status. */
export const MustNotBreakResult = z.object({
  suite: Id,
  dataset_version: Id,
  row_id: Id,
  baseline: SideClass,
  candidate: SideClass,
  status: z.enum(['ok', 'broken', 'unclassifiable', 'not_covered']),
  outcome: ConfirmationOutcome.nullable(),
});

/** A release decision, with the rows and attempts it used (no gate shopping). */
export const GateEvaluated = z.object({
  ...envelope('GateEvaluated'),
  gate_id: Id,
  suite: Id,
  dataset_id: Id.optional(),
  dataset_version: Id,
  baseline: Id,
  candidate: Id,
  verdict: z.enum(['pass', 'fail']),
  reasons: z.array(GateRuleResult),
  /** Event ids of the attempts behind the verdict, per row. */
  evidence: z.array(
    z.object({ row_id: Id, baseline_attempts: z.array(z.string()), candidate_attempts: z.array(z.string()) }),
  ),
  /** Set when this is not the first verdict on this candidate. */
  repeated_verdict: z.boolean().optional(),
  /** Every must-not-break row the verdict judged, as `passk gate` prints them (schema version 2). */
  must_not_break: z.array(MustNotBreakResult).optional(),
});
export type GateEvaluated = z.infer<typeof GateEvaluated>;

/** One attempt a row state keeps (the stream's row state, processors/folds/rowState.ts, holds these as they are). */
export const RowAttempt = z.object({
  attempt: z.number().int().nonnegative(),
  run_id: Id,
  event_id: z.string(),
  passed: z.boolean().nullable(),
  /** A 53-bit hash of the raw output (processors/core/hash.ts): equal outputs, equal hashes; the raw trial keeps the text. */
  output: z.string().nullable().optional(),
  checks: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
  /** The forbidden actions the trial took (absent = none), so the live gate's zero_forbidden_actions rule sees them. */
  forbidden_actions: z.array(z.string()).optional(),
});
export type RowAttempt = z.infer<typeof RowAttempt>;

/** Processor changelog: the full state of one row for one version (compacted topic). */
export const RowStateChanged = z.object({
  ...envelope('RowStateChanged'),
  suite: Id,
  dataset_version: Id,
  agent_version: Id,
  row_id: Id,
  /** Changelog sequence of this key; the sink keeps the highest. */
  seq: z.number().int().nonnegative(),
  n: z.number().int().nonnegative(),
  c: z.number().int().nonnegative(),
  ungraded: z.number().int().nonnegative(),
  class: StabilityClass,
  attempts: z.array(RowAttempt),
  /** The union of the row's trial tags, sorted (absent = none): the live gate's tag rules read them. */
  tags: z.array(z.string()).optional(),
});
export type RowStateChanged = z.infer<typeof RowStateChanged>;
