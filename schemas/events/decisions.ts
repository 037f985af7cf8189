import { z } from 'zod';
import { envelope, Id } from '../envelope.ts';
import { eventIdTime } from '../ids.ts';
import { FailureCategory } from './trialRecorded.ts';

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
  /**
   * When the candidate ran adaptively (`passk run --adaptive`): the candidate's attempts the decision took on the
   * suite and dataset version (confirmations included), and what fixed k = its max-k on every row would have used.
   */
  adaptive: z
    .object({
      attempts: z.number().int().nonnegative(),
      /**
       * Of `attempts`, those of confirmation runs (run id `confirm…`), said apart: the adaptive run itself printed
       * only its own. Absent on a verdict written before it existed.
       */
      confirmations: z.number().int().nonnegative().optional(),
      rows: z.number().int().nonnegative(),
      max_k: z.number().int().positive(),
    })
    .optional(),
});
export type GateEvaluated = z.infer<typeof GateEvaluated>;

/** An intermediate check's answer: what the agent answered (TrialRecorded's `checks[].answer`). */
export const CheckAnswer = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export type CheckAnswer = z.infer<typeof CheckAnswer>;

/**
 * One attempt a row state keeps: the one attempt record of passk. The core's fold (`passk report`,
 * `compare`, `gate`), the stream's fold and its changelog (`RowStateChanged.attempt_records`) and the store's
 * `row_state.attempt_records` all hold exactly this (processors/core/rowState.ts builds it from a trial).
 */
export const AttemptRecord = z.object({
  event_id: z.string(),
  run_id: Id,
  attempt: z.number().int().nonnegative(),
  /** The trial's event time (epoch ms). */
  occurred_at: z.number().int().nonnegative(),
  /** null = ungraded (an infrastructure error). */
  passed: z.boolean().nullable(),
  /** A 53-bit hash of the raw output (processors/core/hash.ts); null when the trial recorded none. The trial keeps the text. */
  output_hash: z.string().nullable(),
  /** Intermediate checks in the order the agent made them (a name may repeat). */
  checks: z.array(z.object({ name: z.string(), answer: CheckAnswer })),
  /** The forbidden actions the trial took (empty = none), so the live gate's zero_forbidden_actions rule sees them. */
  forbidden_actions: z.array(z.string()),
  /**
   * What the dashboard's Rows view reads of the trial besides its answer: its failure category, latency and cost
   * (absent where the trial has none, and in records written before passk carried them). Not part of the answer
   * (a slot conflict is judged without them); the store's `row_state.attempt_extras` holds them, so the Rows
   * view's counts come from the row state (sinks/clickhouse/queries/explorerCounts.ts).
   */
  failure_category: FailureCategory.nullable().optional(),
  latency_ms: z.number().nonnegative().optional(),
  cost_usd: z.number().nonnegative().optional(),
});
export type AttemptRecord = z.infer<typeof AttemptRecord>;

/**
 * An attempt as schema version 1 of RowStateChanged carried it (`attempts`), kept only so that records written
 * before version 2 still decode: checks as a record by name (order and repeated names lost), no event time.
 * Never written; `upgradeAttemptV1` turns it into an AttemptRecord when it is read.
 */
export const AttemptV1 = z.object({
  attempt: z.number().int().nonnegative(),
  run_id: Id,
  event_id: z.string(),
  passed: z.boolean().nullable(),
  output: z.string().nullable().optional(),
  checks: z.record(z.string(), CheckAnswer).optional(),
  forbidden_actions: z.array(z.string()).optional(),
});
export type AttemptV1 = z.infer<typeof AttemptV1>;

/**
 * A version-1 attempt as an AttemptRecord. Its event time was not carried: it is taken from its event id (the
 * time part of a ULID: passk mints a trial's id at its event time, so the two differ only for a producer whose
 * ids were minted at another time), 0 for an id that is not a ULID. Its checks in the record's key order.
 */
const timeOfId = (id: string): number => {
  try {
    return eventIdTime(id);
  } catch {
    return 0; // not a ULID
  }
};

export const upgradeAttemptV1 = (a: AttemptV1): AttemptRecord => ({
  event_id: a.event_id,
  run_id: a.run_id,
  attempt: a.attempt,
  occurred_at: timeOfId(a.event_id),
  passed: a.passed,
  output_hash: a.output ?? null,
  checks: Object.entries(a.checks ?? {}).map(([name, answer]) => ({ name, answer })),
  forbidden_actions: [...(a.forbidden_actions ?? [])],
});

const rowStateChangedFields = {
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
  /** The row's attempts in the core's canonical order (`attemptOrder`). Schema version 2. */
  attempt_records: z.array(AttemptRecord),
  /** The union of the row's trial tags, sorted (absent = none): the live gate's tag rules read them. */
  tags: z.array(z.string()).optional(),
  /**
   * Runs retracted on this row (RunRetracted), sorted (absent = none): their attempts are gone from
   * `attempt_records`, and a trial of one that arrives later is not counted.
   */
  retracted_runs: z.array(z.string()).optional(),
};

/** A RowStateChanged as passk reads and writes it (schema version 2). */
export type RowStateChanged = z.infer<z.ZodObject<typeof rowStateChangedFields>>;

/**
 * Processor changelog: the full state of one row for one version (compacted topic), the stream's row state
 * (processors/folds/rowState.ts) with its envelope. Schema version 2 carries the attempts as `attempt_records`;
 * version 1 carried them as `attempts` (AttemptV1), which is still read: decoding turns it into `attempt_records`
 * (`upgradeAttemptV1`), so every reader sees version 2. Both are optional in the registered JSON Schema, so the
 * registry accepts version 2 over version 1 (BACKWARD: a field cannot change type, one may stop being required);
 * exactly one must be present.
 */
export const RowStateChanged = z
  .object({
    ...rowStateChangedFields,
    attempt_records: z.array(AttemptRecord).optional(),
    /** Schema version 1's attempts: read, never written. */
    attempts: z.array(AttemptV1).optional(),
  })
  .superRefine((e, ctx) => {
    if ((e.attempt_records === undefined) === (e.attempts === undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['attempt_records'],
        message: 'exactly one of attempt_records (schema version 2) and attempts (version 1)',
      });
  })
  .transform(({ attempts, attempt_records, tags, retracted_runs, ...rest }): RowStateChanged => ({
    ...rest,
    attempt_records: attempt_records ?? (attempts ?? []).map(upgradeAttemptV1),
    ...(tags === undefined ? {} : { tags }),
    ...(retracted_runs === undefined ? {} : { retracted_runs }),
  }));
