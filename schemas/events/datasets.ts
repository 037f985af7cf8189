import { z } from 'zod';
import { envelope, Id, Tags } from '../envelope.ts';

export const Provenance = z.object({
  kind: z.enum(['manual', 'import', 'production_failure']),
  trace_id: z.string().optional(),
  failure_event_id: z.string().optional(),
  note: z.string().optional(),
});

/** Expected answers of a row's intermediate checks, by check name (what `passk run --dataset` grades checks against). */
export const ExpectedChecks = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]));

/**
 * A row added, changed or removed; it lands in a new dataset version. A removal is a tombstone:
 * `removed: true`, the row's last input, expected result and tags kept for the record; the row is
 * not in that version nor in later ones until it is upserted again. (Both optional fields came in
 * schema version 2: adding optional fields to the closed model is BACKWARD-compatible.)
 */
export const DatasetRowUpserted = z.object({
  ...envelope('DatasetRowUpserted'),
  dataset_id: Id,
  dataset_version: Id,
  row_id: Id,
  input: z.string(),
  expected: z.string().nullable(),
  tags: Tags,
  provenance: Provenance,
  expected_checks: ExpectedChecks.optional(),
  removed: z.boolean().optional(),
  /**
   * The fields whose text is the JSON of a value that was not a string in the rows file (an object, array, number,
   * boolean or null): `dataset export` writes them back as that value, so a row round-trips exactly.
   */
  json_fields: z.array(z.enum(['input', 'expected'])).optional(),
});
export type DatasetRowUpserted = z.infer<typeof DatasetRowUpserted>;

/** A reviewer confirmed that a sampled production trace failed, and gave the expected result. */
export const FailureConfirmed = z.object({
  ...envelope('FailureConfirmed'),
  trace_id: Id,
  dataset_id: Id,
  input: z.string(),
  expected: z.string(),
  reviewer: z.string().min(1),
  note: z.string().optional(),
});
export type FailureConfirmed = z.infer<typeof FailureConfirmed>;
